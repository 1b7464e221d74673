package main

import "github.com/spf13/cobra"

// newMirrorCmd is the registry caching command (issue 6).
func newMirrorCmd(s streams) *cobra.Command {
	return &cobra.Command{Use: "mirror", Short: "Copy images into the private registry (not yet implemented)", Hidden: true}
}
