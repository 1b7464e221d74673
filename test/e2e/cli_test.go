package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRewriteStdin runs the built binary as a pipe filter.
func TestRewriteStdin(t *testing.T) {
	in := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: nginx:1.25}  # keep me\n")
	want := bytes.Replace(in, []byte("nginx:1.25"), []byte("sea.hub:5000/library/nginx:1.25"), 1)
	if got := run(t, in, rehostBin(), "rewrite"); !bytes.Equal(got, want) {
		t.Errorf("rehost rewrite:\n%s\nwant:\n%s", got, want)
	}
}

// TestNoCommandInPipe: the built binary without a command, its output a
// pipe (Helm 3's --post-renderer rehost without --post-renderer-args
// rewrite), exits 2 with a one-line hint and writes nothing on stdout.
func TestNoCommandInPipe(t *testing.T) {
	in := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
	out, errOut, err := runErr(in, rehostBin())
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || len(out) != 0 || bytes.Count(errOut, []byte("\n")) != 1 || !bytes.Contains(errOut, []byte("--post-renderer-args rewrite")) {
		t.Errorf("exit %v, stdout %q, stderr %q", err, out, errOut)
	}
}

// TestMakeHelp: "make help" lists every rule of the Makefile (e2e
// included: a target name with a digit).
func TestMakeHelp(t *testing.T) {
	mk := needTool(t, "make")
	help := string(run(t, nil, mk, "-s", "-C", repoRoot(), "help"))
	b, err := os.ReadFile(filepath.Join(repoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	rules := regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):`).FindAllSubmatch(b, -1)
	if len(rules) < 5 {
		t.Fatalf("found %d rules in the Makefile", len(rules))
	}
	for _, r := range rules {
		target := string(r[1])
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(target) + ` +\S`).MatchString(help) {
			t.Errorf("make help does not list %s:\n%s", target, help)
		}
	}
	if !strings.Contains(help, "  e2e ") {
		t.Errorf("make help does not list e2e:\n%s", help)
	}
}
