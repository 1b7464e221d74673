package main

import (
	"strings"
	"testing"
)

// TestMirrorDryRunPlanOnStdout: the plan of a dry run goes to stdout, so
// that "> plan.txt" works; the summary stays on stderr. With
// --attachments none no request is made (the registries do not exist).
func TestMirrorDryRunPlanOnStdout(t *testing.T) {
	in := "nginx:1.25\nquay.io/x/y:1@sha256:" + strings.Repeat("a", 64) + "\n"
	out, errOut, code := rehost(t, in, "mirror", "--image-list", "-", "--registry", "sea.hub:5000", "--dry-run", "--attachments", "none", "--progress", "plain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "would copy docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25\n" +
		"would copy quay.io/x/y:1@sha256:" + strings.Repeat("a", 64) + " -> sea.hub:5000/x/y:1@sha256:" + strings.Repeat("a", 64) + "\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if strings.Count(errOut, "\n") != 1 || !hasFacts(errOut, "dry run: 2 images", "0 failed") {
		t.Errorf("stderr: %q", errOut)
	}
	// --progress none: the plan still goes to stdout, nothing to stderr.
	out, errOut, _ = rehost(t, in, "mirror", "--image-list", "-", "--registry", "sea.hub:5000", "--dry-run", "--attachments", "none", "--progress", "none")
	if out != want || errOut != "" {
		t.Errorf("--progress none: stdout %q, stderr %q", out, errOut)
	}
}

func TestMirrorAttachmentsFlag(t *testing.T) {
	for _, v := range []string{"", "sigs", "ALL"} {
		_, errOut, code := rehost(t, "nginx:1\n", "mirror", "--image-list", "-", "--dry-run", "--attachments", v)
		if code == 0 || !strings.Contains(errOut, "--attachments "+v+": want all, signatures or none") {
			t.Errorf("--attachments %q: exit %d, stderr %q", v, code, errOut)
		}
	}
	help, _, _ := rehost(t, "", "mirror", "--help")
	for _, want := range []string{"--attachments", "sha256-<hex>.sig", "--insecure", "loopback", "> plan.txt"} {
		if !strings.Contains(help, want) {
			t.Errorf("mirror --help does not mention %q", want)
		}
	}
}
