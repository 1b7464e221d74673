// Package e2e runs the rehost binaries against the real helm, kustomize and
// registry binaries. Each test looks its tools up on PATH and skips when one
// is missing, except in CI (CI=true), where a missing tool fails the test.
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// binDir holds the rehost binaries built for this run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rehost-e2e-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/rehost", "./cmd/rehost-fn", "./cmd/rehost-helm")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the rehost binaries:", err)
		os.Exit(1)
	}
	// rehost finds rehost-helm next to itself, and tools find rehost on PATH.
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// rehostBin is the path of the rehost binary under test.
func rehostBin() string { return filepath.Join(binDir, "rehost") }

// fnBin is the path of the rehost-fn binary under test.
func fnBin() string { return filepath.Join(binDir, "rehost-fn") }

// repoRoot is the repository's top directory.
func repoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(here), "..", ".."))
}

// needTool returns the path of a tool on PATH. It skips the test when the
// tool is missing, or fails it in CI, where .ci/run installs every tool.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found on PATH: .ci/run installs it; CI must not skip end-to-end tests", name)
	}
	t.Skipf("%s not found on PATH: install it (see .ci/run) to run this end-to-end test", name)
	return ""
}

// needHelm4 returns the path of a Helm 4 binary, named by the HELM4
// environment variable: Helm 4 is also called helm, so .ci/run installs it
// into a directory of its own instead of PATH, where it would shadow Helm 3.
// It skips the test when HELM4 is unset, or fails it in CI.
func needHelm4(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HELM4")
	if p == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("HELM4 is not set: .ci/run installs Helm 4 and sets it; CI must not skip end-to-end tests")
		}
		t.Skip("HELM4 is not set: set it to a Helm 4 binary (see .ci/run) to run this end-to-end test")
	}
	out, err := exec.Command(p, "version", "--short").Output()
	if err != nil || !bytes.HasPrefix(out, []byte("v4.")) {
		t.Fatalf("HELM4=%s is not Helm 4: %q, %v", p, out, err)
	}
	return p
}

// run runs a command and returns its stdout; it fails the test, showing
// stderr, when the command fails.
func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	out, errOut, err := runErr(stdin, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", name, args, err, errOut)
	}
	return out
}

// runErr runs a command and returns its stdout, stderr and error.
func runErr(stdin []byte, name string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}
