package main

import (
	"bytes"
	"testing"
)

// TestVersionFlag: --version prints the name the function runs as, the
// link-time version and commit of release builds, and reads no input.
func TestVersionFlag(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	for _, name := range []string{"rehost-fn", "rehost fn"} {
		var stdout, stderr bytes.Buffer
		if code := run(name, []string{"--version"}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("%s --version: exit %d: %s", name, code, stderr.String())
		}
		if want := name + " v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567)\n"; stdout.String() != want {
			t.Errorf("%s --version: %q, want %q", name, stdout.String(), want)
		}
	}
}
