package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Companion binaries carry the heavy subsystems, so that rehost itself
// starts in milliseconds: Go runs every linked package's initialisation at
// start-up, and Helm (rehost-helm) or kyaml's function framework with its
// OpenAPI validation (rehost-fn) would cost every invocation.
const (
	helmHelper = "rehost-helm"
	fnHelper   = "rehost-fn"
)

// findCompanion returns the path of a companion binary: next to the running
// executable, or else on PATH. purpose says what needs it, for the error.
func findCompanion(name, purpose string) (string, error) {
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	var self string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			self = filepath.Dir(exe)
			p := filepath.Join(self, file)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	where := "on PATH"
	if self != "" {
		where = "in " + self + " or on PATH"
	}
	return "", fmt.Errorf("%s needs the %s helper, not found %s: %s", purpose, name, where, installHint(name))
}

// installHint says how to get a companion binary. rehost's modules are not
// published, so `go install github.com/rehost/rehost/cmd/NAME@latest` is
// refused by the module proxy: the binaries are built from a checkout.
func installHint(name string) string {
	return fmt.Sprintf("build it in a rehost checkout: `make build` puts rehost, rehost-helm and rehost-fn side by side in bin/, or `go install ./cmd/%s` installs it into $(go env GOPATH)/bin; rehost looks next to itself, then on PATH", name)
}
