package main

import "testing"

// TestVersionCommit: release builds print the link-time version and
// commit.
func TestVersionCommit(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	out, _, code := rehost(t, "", "version")
	if code != 0 || out != "rehost v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567)\n" {
		t.Errorf("version: exit %d, %q", code, out)
	}
}
