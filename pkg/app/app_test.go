package app

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
)

// writeTree writes files (slash-separated paths) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tgz packs files as `helm package` does: under one top directory.
func tgz(t *testing.T, top string, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func pod(name string, images ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n", name)
	for i, img := range images {
		fmt.Fprintf(&b, "  - name: c%d\n    image: %s\n", i, img)
	}
	return b.String()
}

func chartYAML(name string, images ...string) string {
	s := "apiVersion: v2\nname: " + name + "\nversion: 1.0.0\n"
	if len(images) > 0 {
		s += "annotations:\n  helm.sh/images: |\n"
		for _, img := range images {
			s += "    - image: " + img + "\n"
		}
	}
	return s
}

// sealerApp writes an application as sealer lays it out: manifests/ with
// an imageList, charts/ with a chart (a subchart directory, a packaged
// subchart and a disabled-looking one), application/apps/ with a packaged
// chart and a manifest application.
func sealerApp(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"manifests/operator.yaml":                 pod("operator", "quay.io/example/operator:2.1"),
		"manifests/web.yml":                       pod("web", "nginx:1.25", "sea.hub:5000/library/pause:3.9"),
		"manifests/imageList":                     "# started by the operator\nquay.io/example/operand:2.1\ndocker.io/library/nginx:1.25\n",
		"manifests/notes.txt":                     "image: not-read:1",
		"charts/web/Chart.yaml":                   chartYAML("web", "busybox:1.36"),
		"charts/web/values.yaml":                  "image: nginx:1.25\n",
		"charts/web/templates/a":                  "{{ .Values.image }}",
		"charts/web/charts/db/Chart.yaml":         chartYAML("db", "postgres:16"),
		"charts/web/charts/db/templates/sts.yaml": "x",
		"charts/web/charts/cache-1.0.0.tgz":       tgz(t, "cache", map[string]string{"Chart.yaml": chartYAML("cache", "redis:7"), "charts/inner/Chart.yaml": chartYAML("inner", "memcached:1")}),
		"charts/web/charts/_skipped/Chart.yaml":   chartYAML("skipped", "skipped:1"),
		"application/apps/mysql/mysql-9.0.0.tgz":  tgz(t, "mysql", map[string]string{"Chart.yaml": chartYAML("mysql", "mysql:8.0")}),
		"application/apps/dashboard/deploy.yaml":  pod("dashboard", "kubernetesui/dashboard:v2.7.0"),
	})
	return dir
}

func listed(l *Listing) []string {
	var out []string
	for _, img := range l.Images {
		out = append(out, fmt.Sprintf("%s %s [%s]", img.Image, img.Action, strings.Join(img.Written, ",")))
	}
	return out
}

// files lists, per image, where it occurs, relative to dir.
func files(t *testing.T, dir string, l *Listing) map[string][]string {
	out := map[string][]string{}
	for _, img := range l.Images {
		for _, o := range img.Occurrences {
			rel, err := filepath.Rel(dir, o.File)
			if err != nil {
				t.Fatal(err)
			}
			out[img.Image] = append(out[img.Image], fmt.Sprintf("%s:%d", filepath.ToSlash(rel), o.Line))
		}
	}
	return out
}

// TestListDirectory: without a renderer, the manifests, the imageList and
// the image annotations of each chart and of all its subcharts (directories
// and packaged charts, in a chart directory and in a packaged chart), with
// one warning per chart that it was not rendered.
func TestListDirectory(t *testing.T) {
	dir := sealerApp(t)
	var warns []string
	l, err := List([]string{dir}, Options{Warn: func(err error) { warns = append(warns, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docker.io/kubernetesui/dashboard:v2.7.0 rewritten [kubernetesui/dashboard:v2.7.0]",
		"docker.io/library/busybox:1.36 rewritten [busybox:1.36]",
		"docker.io/library/memcached:1 rewritten [memcached:1]",
		"docker.io/library/mysql:8.0 rewritten [mysql:8.0]",
		"docker.io/library/nginx:1.25 rewritten [docker.io/library/nginx:1.25,nginx:1.25]",
		"docker.io/library/postgres:16 rewritten [postgres:16]",
		"docker.io/library/redis:7 rewritten [redis:7]",
		"quay.io/example/operand:2.1 rewritten [quay.io/example/operand:2.1]",
		"quay.io/example/operator:2.1 rewritten [quay.io/example/operator:2.1]",
		"sea.hub:5000/library/pause:3.9 in-target [sea.hub:5000/library/pause:3.9]",
	}
	if got := listed(l); !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := l.ToCache(), len(want); len(got) != want || got[0] != "docker.io/kubernetesui/dashboard:v2.7.0" {
		t.Errorf("ToCache %q", got)
	}
	where := files(t, dir, l)
	for img, w := range map[string][]string{
		"docker.io/library/nginx:1.25":   {"manifests/imageList:3", "manifests/web.yml:7"},
		"docker.io/library/busybox:1.36": {"charts/web/Chart.yaml:0"},
		"docker.io/library/postgres:16":  {"charts/web/charts/db/Chart.yaml:0"},
		"docker.io/library/memcached:1":  {"charts/web/charts/cache/charts/inner/Chart.yaml:0"},
		"docker.io/library/mysql:8.0":    {"application/apps/mysql/mysql-9.0.0.tgz/Chart.yaml:0"},
	} {
		if !reflect.DeepEqual(where[img], w) {
			t.Errorf("%s at %q, want %q", img, where[img], w)
		}
	}
	sort.Strings(warns)
	if len(warns) != 2 ||
		warns[0] != filepath.Join(dir, "application/apps/mysql/mysql-9.0.0.tgz")+": chart not rendered (no renderer): 1 image(s) listed from the image annotations of its Chart.yaml files (conditions not evaluated, every subchart read), none from its templates" ||
		!strings.HasPrefix(warns[1], filepath.Join(dir, "charts/web")+": chart not rendered (no renderer): 4 image(s) listed") {
		t.Errorf("warnings:\n%s", strings.Join(warns, "\n"))
	}
}

// TestListPaths: a list of paths, files and directories, reads those only.
func TestListPaths(t *testing.T) {
	dir := sealerApp(t)
	l, err := List([]string{filepath.Join(dir, "manifests/operator.yaml"), filepath.Join(dir, "manifests/imageList"), filepath.Join(dir, "application/apps/dashboard")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docker.io/kubernetesui/dashboard:v2.7.0 rewritten [kubernetesui/dashboard:v2.7.0]",
		"docker.io/library/nginx:1.25 rewritten [docker.io/library/nginx:1.25]",
		"quay.io/example/operand:2.1 rewritten [quay.io/example/operand:2.1]",
		"quay.io/example/operator:2.1 rewritten [quay.io/example/operator:2.1]",
	}
	if got := listed(l); !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := List([]string{filepath.Join(dir, "missing")}, Options{}); err == nil {
		t.Error("a missing path: no error")
	}
	empty := filepath.Join(dir, "empty")
	writeTree(t, empty, map[string]string{"README.md": "nothing to list"})
	if l, err := List([]string{empty}, Options{}); err != nil || l == nil || len(l.Images) != 0 || l.Images == nil {
		t.Errorf("an application without inputs: %+v, %v; want no images and no error", l, err)
	}
	if _, err := List([]string{"-"}, Options{}); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("standard input: err %v", err)
	}
}

// TestListRenderer: charts go to the renderer; the images of their
// manifests and annotations are located in the chart on disk; its
// warnings reach Warn; its error names the chart.
func TestListRenderer(t *testing.T) {
	dir := sealerApp(t)
	var calls []string
	r := RenderFunc(func(path string) (*rendered.Chart, error) {
		rel, _ := filepath.Rel(dir, path)
		calls = append(calls, filepath.ToSlash(rel))
		name := "web"
		if strings.HasSuffix(path, ".tgz") {
			name = "mysql"
		}
		return &rendered.Chart{
			Name: name,
			Manifests: []rendered.Manifest{
				{Name: name + "/templates/pod.yaml", Content: pod("p", "nginx:1.25"), Line: 3},
				{Name: name + "/charts/db/templates/hook.yaml", Content: pod("h", "busybox:1.36"), Hook: []string{"pre-install"}},
			},
			Images:   []rendered.AnnotatedImage{{Chart: name, Key: rendered.AnnotationKey, Image: "quay.io/op:1"}},
			Warnings: []string{"skipped value for x: Not a table."},
		}, nil
	})
	var warns []string
	l, err := List([]string{dir}, Options{Renderer: r, Warn: func(err error) { warns = append(warns, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"application/apps/mysql/mysql-9.0.0.tgz", "charts/web"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("rendered %q, want %q", calls, want)
	}
	where := files(t, dir, l)
	for img, w := range map[string][]string{
		"docker.io/library/busybox:1.36": {"application/apps/mysql/mysql-9.0.0.tgz/charts/db/templates/hook.yaml:7", "charts/web/charts/db/templates/hook.yaml:7"},
		"quay.io/op:1":                   {"application/apps/mysql/mysql-9.0.0.tgz/Chart.yaml:0", "charts/web/Chart.yaml:0"},
		"docker.io/library/nginx:1.25":   {"application/apps/mysql/mysql-9.0.0.tgz/templates/pod.yaml:9", "charts/web/templates/pod.yaml:9", "manifests/imageList:3", "manifests/web.yml:7"},
	} {
		if !reflect.DeepEqual(where[img], w) {
			t.Errorf("%s at %q, want %q", img, where[img], w)
		}
	}
	if _, ok := where["docker.io/library/postgres:16"]; ok {
		t.Error("a rendered chart's Chart.yaml was read: only the renderer's images count")
	}
	if len(warns) != 2 || warns[1] != filepath.Join(dir, "charts/web")+": skipped value for x: Not a table." {
		t.Errorf("warnings %q", warns)
	}

	failing := RenderFunc(func(path string) (*rendered.Chart, error) { return nil, errors.New("template: boom") })
	_, err = List([]string{filepath.Join(dir, "charts")}, Options{Renderer: failing})
	if err == nil || err.Error() != "rendering chart "+filepath.Join(dir, "charts/web")+": template: boom" {
		t.Errorf("err = %v", err)
	}
}

// TestListInvalidImageList: a line that is not a reference is an error
// naming the file and the line, or with SkipInvalid a warning, and the
// other lines are listed.
func TestListInvalidImageList(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"manifests/imageList": "nginx:1.25\nnot a reference\n{{ .Values.image }}\nredis:7\n",
		"manifests/pod.yaml":  pod("p", "busybox:1.36"),
	})
	list := filepath.Join(dir, "manifests/imageList")
	_, err := List([]string{dir}, Options{})
	if err == nil || !strings.Contains(err.Error(), list+`:2: invalid image reference "not a reference"`) || !strings.Contains(err.Error(), list+`:3: invalid image reference "{{ .Values.image }}"`) {
		t.Errorf("err = %v, want both lines named", err)
	}

	var warns []string
	l, err := List([]string{dir}, Options{Config: rewrite.Config{SkipInvalid: true}, Warn: func(err error) { warns = append(warns, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.ToCache(), []string{"docker.io/library/busybox:1.36", "docker.io/library/nginx:1.25", "docker.io/library/redis:7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("images %q, want %q", got, want)
	}
	if len(warns) != 2 || !strings.HasPrefix(warns[0], list+":2: ") || !strings.HasPrefix(warns[1], list+":3: ") {
		t.Errorf("warnings %q", warns)
	}
}

// TestListTargetDecisions: listing decides nothing about the target: two
// sources that would meet in one target repository are both listed, with
// a warning; an image already in the target registry is listed; an
// excluded image is apart.
func TestListTargetDecisions(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.yaml":    pod("a", "docker.io/team/app:1", "registry.local:5000/library/nginx:1.25", "quay.io/keep/me:1"),
		"b.yaml":    pod("b", "quay.io/team/app:1"),
		"imageList": "ghcr.io/team/app:1\n",
	})
	var warns []string
	l, err := List([]string{dir}, Options{
		Config: rewrite.Config{Registry: "registry.local:5000", Exclude: []string{"quay.io/keep"}},
		Warn:   func(err error) { warns = append(warns, err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docker.io/team/app:1 rewritten [docker.io/team/app:1]",
		"ghcr.io/team/app:1 rewritten [ghcr.io/team/app:1]",
		"quay.io/team/app:1 rewritten [quay.io/team/app:1]",
		"registry.local:5000/library/nginx:1.25 in-target [registry.local:5000/library/nginx:1.25]",
	}
	if got := listed(l); !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(l.Excluded) != 1 || l.Excluded[0].Image != "quay.io/keep/me:1" || l.Excluded[0].Action != rewrite.Excluded {
		t.Errorf("excluded %+v", l.Excluded)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "image collision") || !strings.Contains(warns[1], "image collision") {
		t.Errorf("warnings %q, want the two collisions", warns)
	}
}

// TestListErrors: every input is read; their errors come together.
func TestListErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.yaml":           "kind: Pod\nspec:\n  containers:\n  - image: [x]\n",
		"b.yaml":           "kind: Pod\nspec:\n  containers: [{image: nginx}\n",
		"chart/Chart.yaml": "name: c\nannotations:\n  images: \"- name: x\"\n",
	})
	_, err := List([]string{dir}, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{filepath.Join(dir, "a.yaml") + ":4", filepath.Join(dir, "b.yaml") + ":", "c/Chart.yaml: annotation images: entry 0 has no image"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to name %s", err, w)
		}
	}
}

// TestChartArchiveIdentity: a packaged chart (or packaged subchart) that
// Helm's loader would read as another chart than its first Chart.yaml
// says is an error.
func TestChartArchiveIdentity(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a/Chart.yaml (innocent) and b/Chart.yaml (evil) in one archive.
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, content string }{
		{"a/Chart.yaml", chartYAML("innocent", "nginx:1")},
		{"b/Chart.yaml", chartYAML("evil", "evil:6.6.6")},
	} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.content)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.content))
	}
	tw.Close()
	gz.Close()
	for name, archive := range map[string]string{
		"two.tgz":    buf.String(),
		"parent.tgz": tgz(t, "parent", map[string]string{"Chart.yaml": chartYAML("parent", "nginx:1"), "charts/sub.tgz": buf.String()}),
	} {
		_, err := readChart(write(name, archive))
		if err == nil || !strings.Contains(err.Error(), `two top-level directories, "a" and "b"`) {
			t.Errorf("%s: error %v, want one naming the two directories", name, err)
		}
	}
	m, err := readChart(write("ok.tgz", tgz(t, "ok", map[string]string{"Chart.yaml": chartYAML("ok", "nginx:1")})))
	if err != nil || m.Name != "ok" {
		t.Errorf("a normal chart: %+v, %v", m, err)
	}
}

// TestListReportsFindings: List words the run's findings as rehost images
// does (manifest.Summary): the images found by their key's name in an
// unknown custom resource are listed and summed up in one warning, as are
// the operators that start images no manifest names.
func TestListReportsFindings(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"widget.yaml":       "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {image: quay.io/team/widget:1.0}\n",
		"installation.yaml": "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\n",
	})
	var warns []error
	l, err := List([]string{dir}, Options{Warn: func(err error) { warns = append(warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Images) != 1 || l.Images[0].Image != "quay.io/team/widget:1.0" {
		t.Errorf("images %+v, want the Widget's", l.Images)
	}
	guessed, operators := 0, 0
	for _, w := range warns {
		var g *manifest.GuessedImages
		switch {
		case errors.As(w, &g):
			guessed += g.Count
			// The hint in List's own terms, no flag of the CLI.
			if msg := w.Error(); !strings.Contains(msg, "Options.Config.NoGuessImages leaves them as written") || strings.Contains(msg, "--") {
				t.Errorf("guessed images: %q", msg)
			}
		case strings.Contains(w.Error(), "Installation"):
			operators++
			if msg := w.Error(); !strings.Contains(msg, "list them in a file named imageList among the paths") || strings.Contains(msg, "--") {
				t.Errorf("operator: %q", msg)
			}
		}
	}
	if guessed != 1 || operators != 1 {
		t.Errorf("%d guessed images and %d operator warnings, want 1 and 1: %v", guessed, operators, warns)
	}
}
