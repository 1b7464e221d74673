// Command rehost rewrites container images in Kubernetes manifests and Helm
// charts to a private registry and lists the original images for caching.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	args := os.Args[1:]
	// Invoked as rehost-fn (a symlink), rehost is the KRM function: for
	// "kustomize fn run --exec-path", which passes no arguments.
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "rehost-fn" {
		args = append([]string{"fn"}, args...)
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code: 0 on success,
// 1 on any error (printed on stderr).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(stderr, "rehost: %v\n", err)
		return 1
	}
	return 0
}
