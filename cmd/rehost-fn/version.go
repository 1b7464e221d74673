package main

import (
	"github.com/rehost/rehost/internal/buildinfo"
	"github.com/spf13/cobra"
)

// Set at link time by release builds (make release):
// -ldflags "-X main.version=v1.2.3 -X main.commit=<full hash>". Without
// them, the version and commit come from the build information the go
// command records (internal/buildinfo).
var version, commit string

// setVersion gives cmd a --version flag that prints the name, version and
// commit.
func setVersion(cmd *cobra.Command, name string) {
	cmd.Version = buildinfo.Get(version, commit).String()
	cmd.SetVersionTemplate(name + " {{.Version}}\n")
}
