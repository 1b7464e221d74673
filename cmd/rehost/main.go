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

// fitGCToChart raises tuneGC's soft memory limit for a chart whose
// documents are size bytes: rehost holds a chart whole while it rewrites
// it (its documents twice, as the helper's draft and as its chart, and
// what is prepared of them: about 8 times their size at 20,000 Pods), so
// a limit of 64 MiB would collect every few MB instead of at GOGC's 5
// times the live heap (24 collections instead of 7, a tenth of the
// run's CPU time). It allows 40 times size more, at most 1 GiB (the
// helper's limit), and never lowers the limit: a GOMEMLIMIT set by the
// user, or none (in tests), stays.
func fitGCToChart(size int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := int64(64<<20) + 40*int64(size)
	if limit > 1<<30 {
		limit = 1 << 30
	}
	if limit > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(limit)
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
