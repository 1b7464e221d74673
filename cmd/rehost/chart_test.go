package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rendered"
)

// catPath is resolved once, before any test replaces PATH.
var catPath, catErr = exec.LookPath("cat")

// fakeHelper puts on PATH a rehost-helm that records its arguments and
// standard input, prints out and exits with code. A failing one (code not
// 0) prints out on standard error, and failure (a rendered.Failure as
// JSON), if given, on standard output. It returns the file of recorded
// arguments, one per line, then "stdin:" and the input.
func fakeHelper(t *testing.T, out string, code int, failure ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "failure"), []byte(strings.Join(failure, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "args")
	if catErr != nil {
		t.Fatalf("no cat to fake rehost-helm with: %v", catErr)
	}
	cat := catPath
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + record + "\n" +
		"echo stdin: >> " + record + "\n" + cat + " >> " + record + "\n"
	if code == 0 {
		script += cat + " " + filepath.Join(dir, "out") + "\n"
	} else {
		script += cat + " " + filepath.Join(dir, "out") + " >&2\n" + cat + " " + filepath.Join(dir, "failure") + "\nexit 1\n"
	}
	if err := os.WriteFile(filepath.Join(dir, helmHelper), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return record
}

func fakeChart(t *testing.T) *rendered.Chart {
	return &rendered.Chart{
		Format: rendered.Format,
		Name:   "app",
		Manifests: []rendered.Manifest{
			{Name: "app/templates/all.yaml", Content: "kind: ConfigMap\nmetadata: {name: c}"},
			{Name: "app/templates/web.yaml", Content: "kind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: nginx}]"},
			{Name: "app/templates/all.yaml", Content: "kind: Pod\nmetadata: {name: q}\nspec:\n  containers: [{name: c, image: redis}]"},
			{Name: "app/templates/job.yaml", Content: "kind: Pod\nmetadata: {name: j}\nspec:\n  containers: [{name: c, image: busybox}]", Hook: []string{"pre-install"}},
		},
		Images: []rendered.AnnotatedImage{{Chart: "app", Name: "op", Image: "quay.io/op/op:1"}},
	}
}

func fakeChartJSON(t *testing.T, c *rendered.Chart) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func chartDir(t *testing.T) string {
	return writeFiles(t, map[string]string{"app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n"})
}

func recorded(t *testing.T, record string) (args []string, stdin string) {
	t.Helper()
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	a, in, _ := strings.Cut(string(b), "stdin:\n")
	return strings.Split(strings.TrimSuffix(a, "\n"), "\n"), in
}

func TestChartFlagsForwarded(t *testing.T) {
	dir := chartDir(t)
	chart := filepath.Join(dir, "app")
	tests := []struct {
		flags []string
		want  []string
	}{
		// The Kubernetes version is always given: rehost's default, not
		// whatever the helper's Helm defaults to.
		{nil, []string{"--release-name=release-name", "--namespace=default", "--kube-version=" + rendered.DefaultKubeVersion, "--include-crds=true", "--", chart}},
		{
			[]string{"-f", "a.yaml,b.yaml", "--values", "c.yaml", "--set", "x=1,y=2", "--set", "z=3", "--set-string", "s=010",
				"--set-file", "f=cert.pem", "--release-name", "shop", "-n", "prod", "--kube-version", "1.33.0",
				"--api-versions", "a/v1,b/v1", "--api-versions", "c/v1", "--include-crds=false", "--skip-tests"},
			[]string{"--values=a.yaml", "--values=b.yaml", "--values=c.yaml", "--set=x=1,y=2", "--set=z=3", "--set-string=s=010",
				"--set-file=f=cert.pem", "--release-name=shop", "--namespace=prod", "--kube-version=1.33.0",
				"--api-versions=a/v1", "--api-versions=b/v1", "--api-versions=c/v1", "--include-crds=false", "--skip-tests", "--", chart},
		},
		// helm's -a shorthand of --api-versions.
		{[]string{"-a", "x/v1", "-a", "y/v1,z/v1"}, []string{"--release-name=release-name", "--namespace=default", "--kube-version=" + rendered.DefaultKubeVersion,
			"--api-versions=x/v1", "--api-versions=y/v1", "--api-versions=z/v1", "--include-crds=true", "--", chart}},
	}
	for _, cmd := range []string{"rewrite", "images"} {
		for _, tt := range tests {
			record := fakeHelper(t, fakeChartJSON(t, fakeChart(t)), 0)
			if _, stderr, code := rehost(t, "not for the helper", append([]string{cmd, chart}, tt.flags...)...); code != 0 {
				t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
			}
			args, stdin := recorded(t, record)
			if !reflect.DeepEqual(args, tt.want) {
				t.Errorf("%s %q: rehost-helm got\n%q\nwant\n%q", cmd, tt.flags, args, tt.want)
			}
			if stdin != "" {
				t.Errorf("%s: rehost-helm read standard input %q", cmd, stdin)
			}
		}
	}
	// Values from standard input reach the helper.
	record := fakeHelper(t, fakeChartJSON(t, fakeChart(t)), 0)
	if _, stderr, code := rehost(t, "image: {tag: x}\n", "images", chart, "-f", "-"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, stdin := recorded(t, record); stdin != "image: {tag: x}\n" {
		t.Errorf("-f -: rehost-helm read %q from standard input", stdin)
	}
}

func TestChartRewrite(t *testing.T) {
	c := fakeChart(t)
	fakeHelper(t, fakeChartJSON(t, c), 0)
	dir := chartDir(t)
	stdout, stderr, code := rehost(t, "", "rewrite", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := rewriteLibrary(strings.Join(c.Documents(), ""), "nginx", "redis", "busybox")
	if stdout != want {
		t.Errorf("rehost rewrite CHART:\n%s\nwant (helm template order, rewritten):\n%s", stdout, want)
	}

	out := filepath.Join(t.TempDir(), "out")
	if stdout, stderr, code := rehost(t, "", "rewrite", dir, "--output-dir", out); code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, stdout, stderr)
	}
	for name, docs := range map[string][]int{
		"app/templates/all.yaml": {0, 2},
		"app/templates/web.yaml": {1},
		"app/templates/job.yaml": {3},
	} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		var text string
		for _, i := range docs {
			text += c.Manifests[i].Text()
		}
		text = rewriteLibrary(text, "nginx", "redis", "busybox")
		if string(got) != text {
			t.Errorf("%s:\n%s\nwant:\n%s", name, got, text)
		}
	}
}

// rewriteLibrary maps the Docker Hub library images in flow-style container
// lists of s to sea.hub:5000.
func rewriteLibrary(s string, images ...string) string {
	for _, img := range images {
		s = strings.ReplaceAll(s, "image: "+img+"}", "image: sea.hub:5000/library/"+img+"}")
	}
	return s
}

func TestChartImages(t *testing.T) {
	fakeHelper(t, fakeChartJSON(t, fakeChart(t)), 0)
	stdout, stderr, code := rehost(t, "", "images", "-o", "json", chartDir(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var imgs []struct {
		Source      string `json:"source"`
		Occurrences []struct {
			File   string `json:"file"`
			Origin string `json:"origin"`
		} `json:"occurrences"`
	}
	if err := decodeImages(stdout, &imgs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, img := range imgs {
		got[img.Source] = img.Occurrences[0].File + " " + img.Occurrences[0].Origin
	}
	want := map[string]string{
		"docker.io/library/busybox:latest": "app/templates/job.yaml ",
		"docker.io/library/nginx:latest":   "app/templates/web.yaml ",
		"docker.io/library/redis:latest":   "app/templates/all.yaml ",
		"quay.io/op/op:1":                  "app/Chart.yaml annotation",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images %v, want %v", got, want)
	}
}

func TestChartHelperFailures(t *testing.T) {
	chart := filepath.Join(chartDir(t), "app")
	bad := fakeChart(t)
	bad.Format = rendered.Format + 1
	tests := []struct {
		name string
		out  string
		code int
		want string
	}{
		{"helper error", "rehost-helm: app: template: boom at (app/templates/x.yaml:3)\n", 1, "rendering chart " + chart + ": app: template: boom at (app/templates/x.yaml:3)"},
		{"other format", fakeChartJSON(t, bad), 0, "install the rehost-helm of the same release"},
		{"not JSON", "oops", 0, "reading the output of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeHelper(t, tt.out, tt.code)
			stdout, stderr, code := rehost(t, "", "images", chart)
			if code == 0 || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want an error containing %q", code, stdout, stderr, tt.want)
			}
		})
	}

	t.Run("missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, stderr, code := rehost(t, "", "rewrite", chart)
		for _, want := range []string{"needs the rehost-helm helper", "`make build`", "`go install ./cmd/rehost-helm`"} {
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want it to contain %q", code, stderr, want)
			}
		}
		// The modules are not published: the module proxy refuses
		// go install github.com/rehost/rehost/cmd/rehost-helm@latest.
		if strings.Contains(stderr, "@") {
			t.Errorf("stderr suggests a module version: %q", stderr)
		}
	})
}
