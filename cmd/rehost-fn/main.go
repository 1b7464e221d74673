// Command rehost-fn is rehost as a KRM function, for kustomize
// transformers, kpt and "kustomize fn run": a ResourceList on stdin, the
// rewritten ResourceList with results on stdout. It is a binary of its own
// so that rehost does not pay for kyaml's function framework at every
// start; "rehost fn" forwards to it.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rehost/rehost/pkg/krmfn"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// nameEnv is set by "rehost fn" to the command name to show in help and
// errors.
const nameEnv = "REHOST_FN_COMMAND"

func main() {
	name := "rehost-fn"
	if v := os.Getenv(nameEnv); v != "" {
		name = v
	}
	os.Exit(run(name, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code.
func run(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newCmd(name, stdin, stdout, stderr)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		if _, printed := err.(printedError); !printed {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
		}
		return 1
	}
	return 0
}

// printedError is an error whose results were printed already.
type printedError struct{ error }

func newCmd(name string, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	cmd := command.Build(krmfn.Processor{}, command.StandaloneEnabled, true)
	resourceList := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return resourceList(c, args)
		}
		return standalone(name, args, stdin, stdout, stderr)
	}
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Use = name + " [CONFIG [FILE...]]"
	cmd.Short = "rehost as a KRM function (kustomize transformers, kpt, kustomize fn run)"
	cmd.Long = `Run as a KRM function: read a ResourceList on stdin, rewrite the images of its
items exactly as "rehost rewrite" does, and write the ResourceList, with results,
on stdout. Exit non-zero, with the error results on stderr, on any error
(invalid image, collision, bad config).

The functionConfig is a RewriteConfig (apiVersion rehost.dev/v1alpha1, the same
schema as "rehost rewrite --config") or a ConfigMap whose data holds registry,
pathStyle, exclude (comma-separated), skipInvalid, noNamedEmbedded,
noGuessImages, noAddRegistry and imageList. With
imageList: {configMapName: NAME} the function also adds (or updates) the
ConfigMap NAME holding the sorted image list under data.imageList.

Results: an info per rewritten image and per registry setting added (tigera's
Installation spec.registry), a warning per operator that starts images no
manifest names, one for the embedded references in free text left as written
and one for the images found by key name in custom resources of unknown kinds
(rewritten unless noGuessImages: true), as "rehost rewrite" prints them. When the function fails, only the
errors and warnings: no info result claims what the orchestrator discards.

Given files, it runs standalone: CONFIG is the functionConfig, FILE... the
resources (- for stdin; no FILE: stdin), each file read as a YAML stream of its
own, in the order given. The rewritten resources are printed unwrapped on
stdout, warnings and errors (naming the file, resource and field) on stderr; on
any error nothing is printed on stdout.`
	cmd.Example = strings.ReplaceAll(`  # As a kustomize transformer: list rehost.yaml under transformers: in
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
  kustomize cfg cat manifests/ --wrap-kind ResourceList --wrap-version config.kubernetes.io/v1 | NAME

  # Standalone, on files:
  NAME rehost.yaml deployment.yaml service.yaml`, "NAME", name)
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	setVersion(cmd, name)
	return cmd
}

// standalone runs the function on files: args are CONFIG FILE...
func standalone(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	fc, err := yaml.Parse(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	var inputs []krmfn.Input
	for _, a := range args[1:] {
		if a == "-" {
			inputs = append(inputs, krmfn.Input{Name: "<stdin>", Reader: stdin})
			continue
		}
		f, err := os.Open(a)
		if err != nil {
			return err
		}
		defer f.Close()
		inputs = append(inputs, krmfn.Input{Name: a, Reader: f})
	}
	if len(inputs) == 0 {
		inputs = append(inputs, krmfn.Input{Name: "<stdin>", Reader: stdin})
	}
	results, err := krmfn.Standalone(fc, inputs, stdout)
	for _, r := range results {
		if r.Severity == framework.Warning || r.Severity == framework.Error {
			fmt.Fprintf(stderr, "%s: %s\n", name, describe(r))
		}
	}
	if _, ok := err.(framework.Results); ok {
		return printedError{err}
	}
	return err
}

// describe is a result as a line: its file, severity, resource, field and
// message.
func describe(r *framework.Result) string {
	if r.File != nil && r.File.Path != "" {
		return r.File.Path + ": " + r.String()
	}
	return r.String()
}
