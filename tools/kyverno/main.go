// Command kyverno is the Kyverno CLI v1.19.0, built from a module of its own.
//
// The kyverno module has a replace directive (k8s.io/pod-security-admission
// => github.com/kyverno/pod-security-admission), so `go install
// github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno@v1.19.0` is refused;
// this module repeats the replace and calls the CLI's root command as
// kyverno's own main does (cmd/cli/kubectl-kyverno/main.go). The e2e tests
// of rehost policy run it (test/e2e, needTool "kyverno"):
//
//	cd tools/kyverno && go build -o ../../.ci/bin/kyverno .
//
// It is not in go.work: building it takes minutes, and no rehost module
// imports it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/commands"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/commands/apply"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/experimental"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/log"
)

func main() {
	cmd := commands.RootCommand(experimental.IsEnabled())
	if err := log.Configure(); err != nil {
		fmt.Println("Error: Failed to setup logging:", err)
		os.Exit(1)
	}
	cmd.PersistentFlags().AddGoFlagSet(flag.CommandLine)
	if err := cmd.Execute(); err != nil {
		if e, ok := err.(apply.WarnExitCodeError); ok {
			os.Exit(e.ExitCode)
		}
		os.Exit(1)
	}
}
