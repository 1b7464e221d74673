package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fnConfig = `apiVersion: rehost.dev/v1alpha1
kind: RewriteConfig
registry: sea.hub:5000
`

// pod is a Pod manifest without a leading "---", as most files are.
func pod(name, image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n  containers:\n  - name: main\n    image: " + image + "\n"
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestStandaloneEveryFile: with several files, each is read as a stream of
// its own: the second file, without a leading "---", is rewritten too
// (kyaml's command joins the files into one stream, which made the second
// Pod duplicate keys of the first and left its image as written).
func TestStandaloneEveryFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"rehost.yaml": fnConfig,
		"a.yaml":      pod("a", "nginx:1.25"),
		"b.yaml":      pod("b", "quay.io/team/app:2.0") + "---\n" + pod("c", "redis:7"),
	})
	var stdin, stdout, stderr bytes.Buffer
	stdin.WriteString(pod("d", "busybox:1.36"))
	code := run("rehost-fn", []string{filepath.Join(dir, "rehost.yaml"), filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), "-"}, &stdin, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"name: a\n", "image: sea.hub:5000/library/nginx:1.25\n",
		"name: b\n", "image: sea.hub:5000/team/app:2.0\n",
		"name: c\n", "image: sea.hub:5000/library/redis:7\n",
		"name: d\n", "image: sea.hub:5000/library/busybox:1.36\n",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("output holds %q %d times, want once:\n%s", want, strings.Count(out, want), out)
		}
	}
	if strings.Count(out, "kind: Pod\n") != 4 || strings.Count(out, "---\n") != 3 {
		t.Errorf("want 4 Pods, 3 separators, in input order:\n%s", out)
	}
	if !(strings.Index(out, "name: a\n") < strings.Index(out, "name: b\n") && strings.Index(out, "name: c\n") < strings.Index(out, "name: d\n")) {
		t.Errorf("resources not in the order of the arguments:\n%s", out)
	}
	if strings.Contains(out, "config.kubernetes.io") {
		t.Errorf("output carries kyaml's reader annotations:\n%s", out)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestStandaloneErrorNamesFile: an error names the file holding the
// resource, and nothing is printed on stdout.
func TestStandaloneErrorNamesFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"rehost.yaml": fnConfig,
		"a.yaml":      pod("a", "nginx:1.25"),
		"b.yaml":      pod("b", "Nginx:bad"),
	})
	var stdout, stderr bytes.Buffer
	b := filepath.Join(dir, "b.yaml")
	code := run("rehost-fn", []string{filepath.Join(dir, "rehost.yaml"), filepath.Join(dir, "a.yaml"), b}, nil, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout on error:\n%s", stdout.String())
	}
	want := "rehost-fn: " + b + ": [error] v1/Pod/b spec.containers[0].image: invalid image reference \"Nginx:bad\""
	if !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr:\n%s\nwant one line starting %q", stderr.String(), want)
	}
}

// TestHelpName: run by "rehost fn", the help names that command.
func TestHelpName(t *testing.T) {
	for _, name := range []string{"rehost-fn", "rehost fn"} {
		var stdout, stderr bytes.Buffer
		if code := run(name, []string{"--help"}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("%s --help: exit %d: %s", name, code, stderr.String())
		}
		out := stdout.String()
		if !strings.Contains(out, "Usage:\n  "+name+" [CONFIG [FILE...]]") || !strings.Contains(out, "\n  "+name+" rehost.yaml deployment.yaml") {
			t.Errorf("%s --help:\n%s", name, out)
		}
		if name == "rehost fn" && strings.Contains(out, "Usage:\n  rehost-fn") {
			t.Errorf("rehost fn --help says rehost-fn:\n%s", out)
		}
	}
}
