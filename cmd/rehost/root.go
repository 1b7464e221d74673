package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// streams are the command's standard streams.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	s := streams{in: stdin, out: stdout, err: stderr}
	root := &cobra.Command{
		Use:   "rehost",
		Short: "Rewrite container images in Kubernetes manifests to a private registry",
		Long: `rehost rewrites every Pod-spec image in Kubernetes manifests and Helm charts
to a private registry (sealer's sea.hub:5000 by default) and lists the original
images so they can be cached into that registry before the cluster needs them.

It works at render time, in pipes, as a Helm post-renderer, as a kustomize KRM
function, and as a Go library.

Without a command, rehost prints this help on a terminal; when its standard
output is not a terminal (a pipe, a file, a Helm post-renderer) it prints a
one-line hint on stderr and exits with status 2 instead, so that the help text
is never taken for manifests. As a Helm 3 post-renderer, give the command:
--post-renderer rehost --post-renderer-args rewrite.`,
		Example: `  # Rewrite a directory of manifests to the private registry.
  rehost rewrite manifests/ > rewritten.yaml

  # As a Helm 3 post-renderer (the command is an argument of its own).
  helm install my-app charts/my-app --post-renderer rehost --post-renderer-args rewrite`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if stdoutIsTerminal(s.out) {
				return cmd.Help()
			}
			fmt.Fprintln(s.err, "rehost: no command given (rewrite, images, values, ...; rehost --help lists them); as a Helm post-renderer: --post-renderer rehost --post-renderer-args rewrite")
			return exitCode(exitUsage)
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newRewriteCmd(s),
		newImagesCmd(s),
		newVersionCmd(s),
		newFnCmd(s),
		newMirrorCmd(s),
		newValuesCmd(s),
		newRelocateCmd(s),
		newPolicyCmd(s),
	)
	return root
}

// exitUsage is the exit status of rehost run without a command where its
// output is not a terminal.
const exitUsage = 2

// stdoutIsTerminal reports whether w, the standard output, is a terminal.
// Tests replace it.
var stdoutIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
