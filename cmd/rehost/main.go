// Command rehost rewrites container images in Kubernetes manifests and Helm
// charts to a private registry and lists the original images for caching.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/rehost/rehost/pkg/rewrite"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// tuneGC fits the garbage collector to a streaming command: the live heap is
// a few documents (a few MB), so the default GOGC=100 collects every few MB
// of allocation and costs a third of the run. GOGC=400 with a 64 MiB soft
// limit keeps memory flat and bounded. GOGC and GOMEMLIMIT, when set, win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(64 << 20)
	}
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
		if hint := hintFor(err); hint != "" {
			fmt.Fprintf(stderr, "rehost: hint: %s\n", hint)
		}
		return 1
	}
	return 0
}

// hintFor is the flag that answers a typed error of the library, whose
// messages name no flag; "" when there is none.
func hintFor(err error) string {
	var ce *rewrite.CollisionError
	if errors.As(err, &ce) {
		return "--path-style nest (pathStyle: nest in --config) keeps each source registry apart; --exclude leaves one as written"
	}
	return ""
}
