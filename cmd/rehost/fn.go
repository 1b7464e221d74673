package main

import (
	"github.com/rehost/rehost/pkg/krmfn"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
)

// newFnCmd is the KRM function: kyaml's function command around
// krmfn.Processor. Errors are printed once, by main.
func newFnCmd(streams) *cobra.Command {
	cmd := command.Build(krmfn.Processor{}, command.StandaloneEnabled, true)
	cmd.Use = "fn [CONFIG [FILE...]]"
	cmd.Short = "Run as a KRM function (kustomize transformers, kpt, kustomize fn run)"
	cmd.Long = `Run as a KRM function: read a ResourceList on stdin, rewrite the images of its
items and write the ResourceList, with results, on stdout. Exit non-zero, with
the error results on stderr, on any error (invalid image, collision, bad config).

The functionConfig is a RewriteConfig (apiVersion rehost.dev/v1alpha1, the same
schema as --config) or a ConfigMap whose data holds registry, pathStyle,
exclude (comma-separated), skipInvalid and imageList. With
imageList: {configMapName: NAME} the function also adds (or updates) the
ConfigMap NAME holding the sorted image list under data.imageList.

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
  #         exec: {path: rehost, args: [fn]}
  #   registry: sea.hub:5000
  kustomize build --enable-alpha-plugins --enable-exec .

  # On a directory, in place; --exec-path runs its program without arguments,
  # so give it a wrapper (printf '#!/bin/sh\nexec rehost fn "$@"\n' > rehost-fn):
  kustomize fn run manifests/ --enable-exec --exec-path ./rehost-fn -- registry=sea.hub:5000 exclude=quay.io

  # On a ResourceList:
  kustomize cfg cat manifests/ --wrap-kind ResourceList --wrap-version config.kubernetes.io/v1 | rehost fn

  # Standalone, on files:
  rehost fn rehost.yaml deployment.yaml`
	return cmd
}
