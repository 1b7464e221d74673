// Package makefile checks the repository's Makefile.
package makefile

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestHelpListsEveryTarget: every rule of the Makefile is listed by
// `make help` (it has a "## " description that help's pattern matches), and
// every .PHONY name has a rule.
func TestHelpListsEveryTarget(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`^([A-Za-z0-9_.-]+):([^=]|$)`)
	targets := map[string]bool{}
	var phony []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, ".PHONY:"); ok {
			phony = append(phony, strings.Fields(rest)...)
			continue
		}
		m := rule.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[1], ".") {
			continue
		}
		targets[m[1]] = true
	}
	if len(targets) < 5 {
		t.Fatalf("found only %d targets", len(targets))
	}
	for _, p := range phony {
		if !targets[p] {
			t.Errorf(".PHONY names %s, which has no rule", p)
		}
	}
	if _, err := exec.LookPath("make"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("make not found on PATH")
		}
		t.Skip("make not found on PATH")
	}
	cmd := exec.Command("make", "--no-print-directory", "-s", "help")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			listed[f[0]] = true
		}
	}
	for tg := range targets {
		if !listed[tg] && !isFileRule(tg) {
			t.Errorf("make help does not list %s", tg)
		}
	}
}

// isFileRule reports whether a rule builds a file rather than being a
// command (none today: file rules use variables, which the pattern skips).
func isFileRule(target string) bool { return strings.ContainsAny(target, "/$") }
