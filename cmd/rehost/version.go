package main

import (
	"fmt"

	"github.com/rehost/rehost/internal/buildinfo"
	"github.com/spf13/cobra"
)

// Set at link time by release builds (make release):
// -ldflags "-X main.version=v1.2.3 -X main.commit=<full hash>". Without
// them, the version and commit come from the build information the go
// command records (internal/buildinfo).
var version, commit string

func newVersionCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the rehost version and commit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(s.out, "rehost %s\n", buildinfo.Get(version, commit))
			return err
		},
	}
}
