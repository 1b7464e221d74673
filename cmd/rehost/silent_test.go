package main

import (
	"strings"
	"testing"
)

// TestEmptyRegistry: an explicitly empty registry (an unset variable in a
// script, a config template) is an error naming where it was set, for every
// command that maps images; leaving it out still means sea.hub:5000.
func TestEmptyRegistry(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"pod.yaml":    podNginx,
		"empty.yaml":  "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: \"\"\n",
		"null.yaml":   "kind: RewriteConfig\nregistry:\n",
		"absent.yaml": "kind: RewriteConfig\nexclude: [quay.io]\n",
		"list.txt":    "nginx:1.25\n",
	})
	pod := dir + "/pod.yaml"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite", "--registry", "", pod}, "rehost: --registry: empty (an unset variable?)"},
		{[]string{"rewrite", "--registry=", pod}, "rehost: --registry: empty"},
		{[]string{"images", "--registry", "", pod}, "rehost: --registry: empty"},
		{[]string{"mirror", "--dry-run", "--registry", "", "--image-list", dir + "/list.txt"}, "rehost: --registry: empty"},
		{[]string{"rewrite", "--config", dir + "/empty.yaml", pod}, "empty.yaml: config: registry: empty"},
		{[]string{"rewrite", "--config", dir + "/null.yaml", pod}, "null.yaml: config: registry: empty"},
	} {
		out, errOut, code := rehost(t, "", tt.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "sea.hub:5000") {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want exit 1 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
	for _, args := range [][]string{{"rewrite", pod}, {"rewrite", "--config", dir + "/absent.yaml", pod}} {
		out, errOut, code := rehost(t, "", args...)
		if code != 0 || !strings.Contains(out, "image: sea.hub:5000/library/nginx:1.25}") {
			t.Errorf("%v: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
