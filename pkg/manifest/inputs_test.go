package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestExpandPaths: stdin, files, directories walked in lexical order for
// manifests (hidden directories skipped), chart directories and packaged
// charts, and the errors.
func TestExpandPaths(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.YML", "c.json", "notes.txt", "sub/d.yaml", ".hidden/e.yaml", "sub/.f.yaml", "chart/Chart.yaml", "chart/templates/x.yaml", "pkg-1.0.0.tgz", "old-1.0.0.tar.gz", "Chart.yaml/inside.yaml"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(s ...string) string { return filepath.Join(append([]string{dir}, s...)...) }
	got, err := ExpandPaths([]string{dir, "-", j("b.yaml"), j("chart")})
	if err != nil {
		t.Fatal(err)
	}
	want := []Input{
		{Path: j("Chart.yaml", "inside.yaml"), Rel: filepath.Join("Chart.yaml", "inside.yaml")},
		{Path: j("a.YML"), Rel: "a.YML"},
		{Path: j("b.yaml"), Rel: "b.yaml"},
		{Path: j("c.json"), Rel: "c.json"},
		{Path: j("chart"), Rel: "chart", Chart: true},
		{Path: j("old-1.0.0.tar.gz"), Rel: "old-1.0.0.tar.gz", Chart: true},
		{Path: j("pkg-1.0.0.tgz"), Rel: "pkg-1.0.0.tgz", Chart: true},
		{Path: j("sub", ".f.yaml"), Rel: filepath.Join("sub", ".f.yaml")},
		{Path: j("sub", "d.yaml"), Rel: filepath.Join("sub", "d.yaml")},
		{Path: "-", Rel: "stdin.yaml"},
		{Path: j("b.yaml"), Rel: "b.yaml"},
		{Path: j("chart"), Rel: "chart", Chart: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandPaths:\n got %+v\nwant %+v", got, want)
	}
	if got[9].Name() != Stdin || got[0].Name() != got[0].Path {
		t.Errorf("names %q, %q", got[9].Name(), got[0].Name())
	}
	if got, err := ExpandPaths(nil); err != nil || len(got) != 0 {
		t.Errorf("no path: %+v, %v; want nothing (standard input is the caller's choice)", got, err)
	}
	if _, err := ExpandPaths([]string{j("missing.yaml")}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	if got, err := ExpandPaths([]string{j(".hidden")}); err != nil || !reflect.DeepEqual(got, []Input{{Path: j(".hidden", "e.yaml"), Rel: "e.yaml"}}) {
		t.Errorf("a hidden directory given by name is walked: %+v, %v", got, err)
	}
	empty := t.TempDir()
	if _, err := ExpandPaths([]string{empty}); err == nil || err.Error() != "no manifests (*.yaml, *.yml, *.json), charts or imageList files found in "+empty {
		t.Errorf("empty directory: %v", err)
	}
}
