package helm

import (
	"bytes"
	"log"
	"strings"
	"sync"
)

// Helm 3 prints its warnings (values coalescing: "skipped value for x: Not
// a table."; dependency conditions and import-values) with the standard
// library's global logger, log.Printf in helm.sh/helm/v3/pkg/chartutil,
// and offers no per-call hook. To hand them to the caller, a render
// redirects that logger to itself for its duration and restores its
// output, flags and prefix before it returns; renders in one process take
// turns (logMu). Limits: while a render runs, lines that other goroutines
// write to the standard logger are taken for Helm's and reach the caller
// as warnings instead of their output; a program that routes the log
// package through log/slog (slog.SetDefault) gets the same routing back
// afterwards.
var logMu sync.Mutex

// captureLog runs fn with the standard logger writing to a buffer and
// returns the distinct lines written, in order.
func captureLog(fn func() error) ([]string, error) {
	logMu.Lock()
	defer logMu.Unlock()
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	var buf bytes.Buffer
	log.SetOutput(&buf)
	log.SetFlags(0)
	log.SetPrefix("")
	defer func() {
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	}()
	err := fn()
	return distinctLines(buf.String()), err
}

// distinctLines splits s into its non-empty lines, each once, in order:
// Helm coalesces the same values several times per render and repeats
// each warning as often. The "warning: " Helm starts most lines with (in
// any case) is dropped: a warning is what the caller prints it as.
func distinctLines(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if len(l) > len("warning:") && strings.EqualFold(l[:len("warning:")], "warning:") {
			l = strings.TrimSpace(l[len("warning:"):])
		}
		if l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
