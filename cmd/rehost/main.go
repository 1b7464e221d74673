// Command rehost rewrites container images in Kubernetes manifests and Helm
// charts to a private registry and lists the original images for caching.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code: 0 on success,
// 1 on any error (printed on stderr).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			return int(code)
		}
		fmt.Fprintf(stderr, "rehost: %v\n", err)
		return 1
	}
	return 0
}
