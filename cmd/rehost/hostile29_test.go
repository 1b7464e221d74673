package main

import (
	"strings"
	"testing"
)

// Issue 29 (hostile input, second round), at the command line.

// TestPrefixNoRoom (item 8): a registry prefix that leaves no room for
// any image is refused by every command that maps images, before any
// input is read, naming its length and the longest allowed; the longest
// allowed is accepted, and the Kyverno policy's length check stays a
// valid expression.
func TestPrefixNoRoom(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pod.yaml": podNginx, "list.txt": "quay.io/a:1\n"})
	pod := dir + "/pod.yaml"
	chart := chartDir(t) + "/app"
	tooLong := "sea.hub:5000/" + strings.Repeat("p", 254)
	nestTooLong := "sea.hub:5000/" + strings.Repeat("p", 250)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite", "--registry", tooLong, pod}, "254 characters"},
		{[]string{"images", "--registry", tooLong, pod}, "254 characters"},
		{[]string{"mirror", "--dry-run", "--registry", tooLong, "--image-list", dir + "/list.txt"}, "254 characters"},
		{[]string{"policy", "--registry", tooLong}, "254 characters"},
		{[]string{"policy", "--format", "kyverno", "--registry", tooLong}, "254 characters"},
		{[]string{"values", "--registry", tooLong, chart}, "254 characters"},
		{[]string{"relocate", "--registry", tooLong, chart, "--output", dir + "/out.tgz"}, "254 characters"},
		{[]string{"rewrite", "--path-style", "nest", "--registry", nestTooLong, pod}, "250 characters"},
		{[]string{"policy", "--format", "kyverno", "--path-style", "nest", "--registry", nestTooLong}, "250 characters"},
	} {
		out, errOut, code := rehost(t, "", tt.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "rehost: --registry: the path prefix has "+tt.want) || !strings.Contains(errOut, "at most") {
			t.Errorf("%v: code %d, stdout %.80q, stderr %q", tt.args[:3], code, out, errOut)
		}
	}
	fits := "sea.hub:5000/" + strings.Repeat("p", 253)
	if out, errOut, code := rehost(t, "", "policy", "--format", "kyverno", "--registry", fits); code != 0 || !strings.Contains(out, "regex_match('^.{2}'") {
		t.Errorf("policy with a prefix of 253: code %d, %s", code, errOut)
	}
	if out, errOut, code := rehost(t, "", "rewrite", "--registry", fits, pod); code != 1 || out != "" || !strings.Contains(errOut, "255 characters") {
		// docker.io/library/nginx needs "library/nginx" below the prefix.
		t.Errorf("rewrite with a prefix of 253: code %d, stderr %q", code, errOut)
	}
}
