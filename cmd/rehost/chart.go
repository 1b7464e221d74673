package main

import (
	"fmt"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/spf13/cobra"
)

// helmFlags are the chart rendering flags, with helm's names and meaning.
type helmFlags struct{}

func (f *helmFlags) register(cmd *cobra.Command) {}

// chartStreams renders a chart input into streams, one per template.
func chartStreams(in manifest.Input, hf *helmFlags, rw *manifest.Rewriter, s streams) ([]stream, error) {
	return nil, fmt.Errorf("%s: Helm charts are not supported yet", in.Path)
}
