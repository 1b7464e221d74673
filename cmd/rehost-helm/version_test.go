package main

import (
	"bytes"
	"testing"
)

// TestVersion: version prints the link-time version and commit of release
// builds, and a version (from the build information) without them.
func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, &out, &errOut); code != 0 || !bytes.HasPrefix(out.Bytes(), []byte("rehost-helm ")) || errOut.Len() != 0 {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	out.Reset()
	if code := run([]string{"version"}, &out, &errOut); code != 0 || out.String() != "rehost-helm v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567)\n" {
		t.Errorf("version with link-time values: exit %d, stdout %q", code, out.String())
	}
}
