package main

import (
	"io"

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
function, and as a Go library.`,
		SilenceUsage:  true,
		SilenceErrors: true,
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
