package main

import (
	"errors"
	"os"
	"os/exec"

	"github.com/spf13/cobra"
)

// fnNameEnv tells rehost-fn the command name to show in its help and
// errors.
const fnNameEnv = "REHOST_FN_COMMAND"

// newFnCmd forwards to rehost-fn, the KRM function, so that configs that
// exec "rehost fn" work; rehost itself does not link the function framework.
func newFnCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "fn [CONFIG [FILE...]]",
		Short: "Run as a KRM function (forwards to rehost-fn)",
		Long: `Run as a KRM function: read a ResourceList on stdin and write it rewritten, with
results, on stdout. This runs the rehost-fn binary (next to rehost, or on PATH)
with the same arguments: "rehost fn --help" prints its help. Point kustomize at
rehost-fn directly to save a process start.`,
		Example: `  # In a transformer config's annotation:
  #   config.kubernetes.io/function: |
  #     exec: {path: rehost-fn}          # or: {path: rehost, args: [fn]}
  kustomize build --enable-alpha-plugins --enable-exec .`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := findCompanion(fnHelper, "running as a KRM function")
			if err != nil {
				return err
			}
			c := exec.Command(bin, args...)
			c.Stdin, c.Stdout, c.Stderr = s.in, s.out, s.err
			// rehost-fn names itself "rehost fn" in its help and errors.
			c.Env = append(os.Environ(), fnNameEnv+"=rehost fn")
			err = c.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				// rehost-fn printed its errors.
				return exitCode(exit.ExitCode())
			}
			return err
		},
	}
}

// exitCode is an error whose message was printed already: run exits with
// the code and prints nothing.
type exitCode int

func (e exitCode) Error() string { return "exit status" }
