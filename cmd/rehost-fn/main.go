// Command rehost-fn is rehost as a KRM function, for kustomize
// transformers, kpt and "kustomize fn run": a ResourceList on stdin, the
// rewritten ResourceList with results on stdout. It is a binary of its own
// so that rehost does not pay for kyaml's function framework at every
// start; "rehost fn" forwards to it.
package main

import (
	"fmt"
	"os"

	"github.com/rehost/rehost/pkg/krmfn"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
)

func main() {
	cmd := command.Build(krmfn.Processor{}, command.StandaloneEnabled, true)
	cmd.Use = "rehost-fn [CONFIG [FILE...]]"
	cmd.Short = "rehost as a KRM function (kustomize transformers, kpt, kustomize fn run)"
	cmd.Long = `Run as a KRM function: read a ResourceList on stdin, rewrite the images of its
items exactly as "rehost rewrite" does, and write the ResourceList, with results,
on stdout. Exit non-zero, with the error results on stderr, on any error
(invalid image, collision, bad config).

The functionConfig is a RewriteConfig (apiVersion rehost.dev/v1alpha1, the same
schema as "rehost rewrite --config") or a ConfigMap whose data holds registry,
pathStyle, exclude (comma-separated), skipInvalid, noNamedEmbedded,
noAddRegistry and imageList. With
imageList: {configMapName: NAME} the function also adds (or updates) the
ConfigMap NAME holding the sorted image list under data.imageList.

Results: an info per rewritten image and per registry setting added (tigera's
Installation spec.registry), a warning per operator that starts images no
manifest names and one for the embedded references in free text left as
written, as "rehost rewrite" prints them.

Given files, it runs standalone: CONFIG is the functionConfig, FILE... (or - for
stdin) the resources, and the rewritten resources are printed unwrapped.`
	cmd.Example = `  # As a kustomize transformer: list rehost.yaml under transformers: in
  # kustomization.yaml (see testdata/examples/kustomize), where rehost.yaml is
  #   apiVersion: rehost.dev/v1alpha1
  #   kind: RewriteConfig
  #   metadata:
  #     name: rehost
  #     annotations:
  #       config.kubernetes.io/function: |
  #         exec: {path: rehost-fn}
  #   registry: sea.hub:5000
  kustomize build --enable-alpha-plugins --enable-exec .

  # On a directory, in place:
  kustomize fn run manifests/ --enable-exec --exec-path rehost-fn -- registry=sea.hub:5000 exclude=quay.io

  # On a ResourceList:
  kustomize cfg cat manifests/ --wrap-kind ResourceList --wrap-version config.kubernetes.io/v1 | rehost-fn

  # Standalone, on files:
  rehost-fn rehost.yaml deployment.yaml`
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "rehost-fn: %v\n", err)
		os.Exit(1)
	}
}
