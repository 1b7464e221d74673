package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

type tarFile struct{ name, content string }

// tarball writes a gzipped tar of files; a name ending in "/" is a
// directory entry.
func tarball(t *testing.T, path string, files ...tarFile) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.content)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, f.content)
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// entries reads the files of a packaged chart.
func entries(t *testing.T, path string) []tarFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []tarFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out = append(out, tarFile{h.Name, string(b)})
	}
}

const (
	innocentChart = "apiVersion: v2\nname: innocent\nversion: 1.0.0\n"
	evilChart     = "apiVersion: v2\nname: evil\nversion: 6.6.6\n"
	evilPod       = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: evil\nspec:\n  containers:\n  - name: c\n    image: evil.example/miner:6.6.6\n"
)

// TestArchiveIdentity: a packaged chart with two top-level directories,
// a/Chart.yaml "innocent 1.0.0" and b/Chart.yaml "evil 6.6.6", is read by
// Helm's loader as evil 6.6.6 with b's templates; rehost refuses it
// wherever it reads a packaged chart (Load, Render, Pull), and refuses a
// file twice and a packaged subchart with two directories too.
func TestArchiveIdentity(t *testing.T) {
	dir := t.TempDir()
	two := tarball(t, filepath.Join(dir, "innocent-1.0.0.tgz"),
		tarFile{"a/Chart.yaml", innocentChart},
		tarFile{"b/Chart.yaml", evilChart},
		tarFile{"b/templates/pod.yaml", evilPod})

	// What Helm makes of it: the last Chart.yaml, both directories' files.
	ch, err := loader.Load(two)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Name() != "evil" || ch.Metadata.Version != "6.6.6" || len(ch.Templates) != 1 {
		t.Fatalf("Helm's loader reads %s %s with %d templates; the test's premise is wrong", ch.Name(), ch.Metadata.Version, len(ch.Templates))
	}

	twice := tarball(t, filepath.Join(dir, "twice.tgz"),
		tarFile{"app/Chart.yaml", innocentChart},
		tarFile{"app/Chart.yaml", evilChart})
	parent := tarball(t, filepath.Join(dir, "parent.tgz"),
		tarFile{"parent/Chart.yaml", "apiVersion: v2\nname: parent\nversion: 1.0.0\n"},
		tarFile{"parent/charts/sub.tgz", string(must(os.ReadFile(two)))})
	for _, tt := range []struct{ path, want string }{
		{two, `two top-level directories, "a" and "b"`},
		{twice, `"Chart.yaml" twice`},
		{parent, `charts/sub.tgz: two top-level directories, "a" and "b"`},
	} {
		for name, f := range map[string]func(string) error{
			"Load":   func(p string) error { _, err := Load(p); return err },
			"Render": func(p string) error { _, err := Render(p, Options{}); return err },
		} {
			err := f(tt.path)
			if !errors.Is(err, ErrAmbiguousArchive) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("%s %s: error %v, want one naming the file and %q", name, filepath.Base(tt.path), err, tt.want)
			}
		}
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	_, err = Pull(srv.URL+"/innocent-1.0.0.tgz", t.TempDir(), PullOptions{})
	if !errors.Is(err, ErrAmbiguousArchive) || !strings.HasPrefix(err.Error(), "chart "+srv.URL+"/innocent-1.0.0.tgz: "+srv.URL+"/innocent-1.0.0.tgz is not a chart: two top-level directories") {
		t.Errorf("Pull: %v", err)
	}
}

// TestArchiveLegitimate: a chart packaged by Package (no directory
// entries), and the same archive with a directory entry for each
// directory (as tar writes it), load as Helm's loader loads them.
func TestArchiveLegitimate(t *testing.T) {
	packagedFile := packaged(t, "parent")
	files := entries(t, packagedFile)
	seen := map[string]bool{}
	var withDirs []tarFile
	for _, f := range files {
		for d := filepath.Dir(f.name); d != "."; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				withDirs = append(withDirs, tarFile{d + "/", ""})
			}
		}
	}
	withDirs = append(withDirs, files...)
	if len(withDirs) == len(files) {
		t.Fatal("no directory entry added")
	}
	dirsFile := tarball(t, filepath.Join(t.TempDir(), "parent-dirs.tgz"), withDirs...)
	for _, p := range []string{packagedFile, dirsFile} {
		want, err := loader.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Load(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if !sameChart(got, want) {
			t.Errorf("%s: Load differs from Helm's loader", filepath.Base(p))
		}
		if _, err := Render(p, Options{}); err != nil {
			t.Errorf("%s: Render: %v", filepath.Base(p), err)
		}
	}
	a, _ := Load(packagedFile)
	b, _ := Load(dirsFile)
	if !sameChart(a, b) {
		t.Error("the chart with directory entries loads differently")
	}
}

// sameChart compares what a render uses of two loaded charts.
func sameChart(a, b *chart.Chart) bool {
	if !reflect.DeepEqual(a.Metadata, b.Metadata) || !reflect.DeepEqual(a.Values, b.Values) || len(a.Templates) != len(b.Templates) || len(a.Dependencies()) != len(b.Dependencies()) {
		return false
	}
	files := func(c *chart.Chart) map[string]string {
		m := map[string]string{}
		for _, f := range append(append([]*chart.File(nil), c.Templates...), c.Files...) {
			m[f.Name] = string(f.Data)
		}
		return m
	}
	if !reflect.DeepEqual(files(a), files(b)) {
		return false
	}
	deps := map[string]*chart.Chart{}
	for _, d := range a.Dependencies() {
		deps[d.Name()] = d
	}
	for _, d := range b.Dependencies() {
		if deps[d.Name()] == nil || !sameChart(deps[d.Name()], d) {
			return false
		}
	}
	return true
}
