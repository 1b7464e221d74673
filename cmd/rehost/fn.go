package main

import "github.com/spf13/cobra"

// newFnCmd is the KRM function command (issue 4).
func newFnCmd(s streams) *cobra.Command {
	return &cobra.Command{Use: "fn", Short: "Run as a KRM function (not yet implemented)", Hidden: true}
}
