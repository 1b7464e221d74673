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

// needHelm4 returns the path of a Helm 4 binary. Helm 4 is also called
// helm, so users who keep Helm 3 install it under another name: it is the
// binary the HELM4 environment variable names, else `helm4` on PATH, else
// `helm` on PATH when that one is Helm 4. It skips the test when none is
// found, saying where it looked, or fails it in CI (.ci/run installs Helm 4
// as helm4).
func needHelm4(t *testing.T) string {
	t.Helper()
	p, how := os.Getenv("HELM4"), "HELM4="
	if p == "" {
		if lp, err := exec.LookPath("helm4"); err == nil {
			p, how = lp, "helm4 on PATH: "
		} else if lp, err := exec.LookPath("helm"); err == nil && isHelm4(lp) {
			p, how = lp, "helm on PATH: "
		}
	}
	if p == "" {
		msg := "no Helm 4 found: set HELM4 to a Helm 4 binary, or put it on PATH as helm4 (GOBIN=$(mktemp -d) go install helm.sh/helm/v4/cmd/helm@v4.3.1, then copy it to helm4) to run this end-to-end test"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; CI must not skip end-to-end tests")
		}
		t.Skip(msg)
	}
	if !isHelm4(p) {
		t.Fatalf("%s%s is not Helm 4 (helm version --short does not start with v4.)", how, p)
	}
	return p
}

// isHelm4 says whether the helm binary at p is Helm 4.
func isHelm4(p string) bool {
	out, err := exec.Command(p, "version", "--short").Output()
	return err == nil && bytes.HasPrefix(out, []byte("v4."))
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

// TestNeedHelm4 pins how the end-to-end tests find Helm 4: HELM4 first,
// then helm4 on PATH, then a helm on PATH that is Helm 4.
func TestNeedHelm4(t *testing.T) {
	fake := func(dir, name, version string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d4, d3, dboth := t.TempDir(), t.TempDir(), t.TempDir()
	helm4 := fake(d4, "helm", "v4.3.1+g0")
	fake(d3, "helm", "v3.22.0+g0")
	named := fake(dboth, "helm4", "v4.3.1+g0")
	fake(dboth, "helm", "v3.22.0+g0")
	for _, tt := range []struct {
		name, env, path, want string
	}{
		{"HELM4", helm4, d3, helm4},
		{"helm4 on PATH beside Helm 3", "", dboth, named},
		{"helm on PATH is Helm 4", "", d4, helm4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HELM4", tt.env)
			t.Setenv("PATH", tt.path)
			if got := needHelm4(t); got != tt.want {
				t.Errorf("needHelm4 = %s, want %s", got, tt.want)
			}
		})
	}
}
