package main

import (
	"io"
	"os"
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

// TestPinsMissing: an image without a line in --pins FILE is rewritten
// unpinned with one warning per image (however often it occurs), naming
// where it first occurs; --pins-strict makes it an error and writes
// nothing.
func TestPinsMissing(t *testing.T) {
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	dir := writeFiles(t, map[string]string{
		"pins.tsv": "docker.io/library/nginx:1.25\tsea.hub:5000/library/nginx:1.25@" + d + "\n",
		"app.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n" +
			"  - {name: a, image: nginx:1.25}\n  - {name: b, image: redis:7}\n  - {name: c, image: redis:7}\n" +
			"  - {name: d, image: quay.io/x/y@" + d + "}\n  - {name: e, image: sea.hub:5000/library/busybox:1}\n",
	})
	pins, app := dir+"/pins.tsv", dir+"/app.yaml"
	out, errOut, code := rehost(t, "", "rewrite", "--pins", pins, app)
	if code != 0 || !strings.Contains(out, "image: sea.hub:5000/library/nginx:1.25@"+d+"}") || strings.Count(out, "image: sea.hub:5000/library/redis:7}") != 2 {
		t.Fatalf("code %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := "rehost: warning: " + app + ":7: Pod p: spec.containers[1].image: docker.io/library/redis:7 has no line in " + pins + ": its target sea.hub:5000/library/redis:7 carries no digest (2 places)"
	if !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr:\n%s\nwant one warning starting:\n%s", errOut, want)
	}

	out, errOut, code = rehost(t, "", "rewrite", "--pins", pins, "--pins-strict", "--image-list", dir+"/imageList", app)
	if code != 1 || out != "" || !strings.Contains(errOut, "docker.io/library/redis:7 has no line in "+pins) || !strings.Contains(errOut, "--pins-strict: 1 image(s) without a pin") {
		t.Errorf("--pins-strict: code %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(dir + "/imageList"); err == nil {
		t.Error("--pins-strict failed but wrote the image list")
	}
	if _, errOut, code := rehost(t, "", "rewrite", "--pins-strict", app); code != 1 || !strings.Contains(errOut, "--pins-strict needs --pins") {
		t.Errorf("--pins-strict alone: code %d, %s", code, errOut)
	}
	// Every image pinned: no warning.
	if _, errOut, code := rehost(t, podNginx, "rewrite", "--pins", pins); code != 0 || errOut != "" {
		t.Errorf("all pinned: code %d, stderr %q", code, errOut)
	}
}

// TestInPlaceChart: --in-place on a chart (or a directory holding one)
// fails at once, before rendering, saying why and what to use instead; no
// file changes.
func TestInPlaceChart(t *testing.T) {
	dir := chartDir(t)
	if err := os.WriteFile(dir+"/pod.yaml", []byte(podNginx), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no rehost-helm: rendering would fail differently
	for _, arg := range []string{dir + "/app", dir} {
		out, errOut, code := rehost(t, "", "rewrite", "--in-place", arg)
		want := "rehost: --in-place: " + dir + "/app is a Helm chart: its templates cannot be rewritten in place; write the rendered, rewritten manifests with --output-dir DIR"
		if code != 1 || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("%s: code %d, stdout %q, stderr %q; want %q", arg, code, out, errOut, want)
		}
	}
	if b, _ := os.ReadFile(dir + "/pod.yaml"); string(b) != podNginx {
		t.Errorf("pod.yaml changed:\n%s", b)
	}
}

// TestImageListStdout: --image-list - writes the list to stdout (not to a
// file named "-") when the manifests go to files; with the manifests on
// stdout it is an error, before anything is written.
func TestImageListStdout(t *testing.T) {
	dir := writeFiles(t, map[string]string{"in/pod.yaml": podNginx})
	t.Chdir(dir)
	out, errOut, code := rehost(t, "", "rewrite", "in", "--output-dir", "out", "--image-list", "-")
	if code != 0 || out != "docker.io/library/nginx:1.25\n" || errOut != "" {
		t.Errorf("--output-dir: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b, err := os.ReadFile("out/pod.yaml"); err != nil || !strings.Contains(string(b), "sea.hub:5000/library/nginx:1.25") {
		t.Errorf("out/pod.yaml: %v\n%s", err, b)
	}
	out, errOut, code = rehost(t, "", "rewrite", "in", "--in-place", "--image-list", "-")
	if code != 0 || out != "docker.io/library/nginx:1.25\n" || errOut != "" {
		t.Errorf("--in-place: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = rehost(t, podNginx, "rewrite", "--image-list", "-")
	if code != 1 || out != "" || !hasFacts(errOut, "--image-list -", "stdout") {
		t.Errorf("manifests on stdout: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
}

// TestOutputDirStdin: with --output-dir, standard input is written to
// DIR/stdin.yaml, as docs/cli.md says.
func TestOutputDirStdin(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := rehost(t, podNginx, "rewrite", "--output-dir", dir+"/out"); code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(dir + "/out/stdin.yaml"); err != nil || !strings.Contains(string(b), "image: sea.hub:5000/library/nginx:1.25") {
		t.Errorf("out/stdin.yaml: %v\n%s", err, b)
	}
}

// TestStdinTerminalHint: with no PATH and a terminal on stdin, rewrite and
// images print a one-line hint before waiting; not with a pipe, nor with a
// PATH.
func TestStdinTerminalHint(t *testing.T) {
	tty := false
	orig := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return tty }
	defer func() { stdinIsTerminal = orig }()
	for _, cmd := range []string{"rewrite", "images"} {
		tty = true
		out, errOut, code := rehost(t, podNginx, cmd)
		want := "rehost: reading manifests from standard input (a terminal); end with Ctrl-D, or give a file or directory: rehost " + cmd + " PATH\n"
		if code != 0 || errOut != want || !strings.Contains(out, "nginx") {
			t.Errorf("%s at a terminal: code %d, stderr %q, want %q", cmd, code, errOut, want)
		}
		if _, errOut, _ := rehost(t, podNginx, cmd, "-"); errOut != "" {
			t.Errorf("%s - at a terminal: stderr %q, want no hint", cmd, errOut)
		}
		tty = false
		if _, errOut, _ := rehost(t, podNginx, cmd); errOut != "" {
			t.Errorf("%s from a pipe: stderr %q, want no hint", cmd, errOut)
		}
	}
	// The real check: a pipe or a file is not a terminal.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if orig(r) || orig(strings.NewReader("")) {
		t.Error("a pipe or a string reader taken for a terminal")
	}
}

// TestDuplicateKeysCLI: files joined without "---" and a duplicated image
// key: rehost images lists every image, rewrite rewrites every value, and
// stderr names the file and line of each problem.
func TestDuplicateKeysCLI(t *testing.T) {
	in := "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n" +
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25\n    image: nginx:1.26\n"
	dir := writeFiles(t, map[string]string{"app.yaml": in})
	app := dir + "/app.yaml"
	out, errOut, code := rehost(t, "", "images", app)
	if code != 0 || out != "docker.io/library/nginx:1.25\ndocker.io/library/nginx:1.26\n" {
		t.Errorf("images: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{
		"rehost: warning: " + app + `:6: Pod web: no "---" line before this object`,
		"rehost: warning: " + app + `:13: Pod web: spec.containers[0].image: duplicate key "image" (lines 12, 13)`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("images stderr:\n%s\nwant a line starting %q", errOut, want)
		}
	}
	out, _, code = rehost(t, "", "rewrite", app)
	if code != 0 || !strings.Contains(out, "    image: sea.hub:5000/library/nginx:1.25\n    image: sea.hub:5000/library/nginx:1.26\n") {
		t.Errorf("rewrite: code %d:\n%s", code, out)
	}
}
