package manifest

import (
	"errors"
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
		{Path: j("Chart.yaml", "inside.yaml"), Rel: filepath.Join("Chart.yaml", "inside.yaml"), Dir: dir},
		{Path: j("a.YML"), Rel: "a.YML", Dir: dir},
		{Path: j("b.yaml"), Rel: "b.yaml", Dir: dir},
		{Path: j("c.json"), Rel: "c.json", Dir: dir},
		{Path: j("chart"), Rel: "chart", Dir: dir, Chart: true},
		{Path: j("old-1.0.0.tar.gz"), Rel: "old-1.0.0.tar.gz", Dir: dir, Chart: true},
		{Path: j("pkg-1.0.0.tgz"), Rel: "pkg-1.0.0.tgz", Dir: dir, Chart: true},
		{Path: j("sub", ".f.yaml"), Rel: filepath.Join("sub", ".f.yaml"), Dir: dir},
		{Path: j("sub", "d.yaml"), Rel: filepath.Join("sub", "d.yaml"), Dir: dir},
		{Path: "-", Rel: "stdin.yaml"},
		{Path: j("b.yaml"), Rel: "b.yaml", Dir: dir},
		{Path: j("chart"), Rel: "chart", Dir: dir, Chart: true},
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
	if got, err := ExpandPaths([]string{j(".hidden")}); err != nil || !reflect.DeepEqual(got, []Input{{Path: j(".hidden", "e.yaml"), Rel: "e.yaml", Dir: j(".hidden")}}) {
		t.Errorf("a hidden directory given by name is walked: %+v, %v", got, err)
	}
	empty := t.TempDir()
	if _, err := ExpandPaths([]string{empty}); err == nil || err.Error() != "no manifests (*.yaml, *.yml, *.json), charts or imageList files found in "+empty {
		t.Errorf("empty directory: %v", err)
	}
}

// TestExpandOthersAndLinks: Expand lists the other files of the
// directories walked, and the symbolic links inside them; a link that
// leaves the directory given, or dangles, is an error naming it and its
// target, in a chart too.
func TestExpandOthersAndLinks(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("kind: Secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(t *testing.T, links map[string]string) string {
		dir := t.TempDir()
		for _, f := range []string{"app/pod.yaml", "app/Kubefile", "app/README.md", "app/imageList", "app/.git/config", "app/chart/Chart.yaml", "app/chart/files/x.txt", "app/sub/cm.yaml"} {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for link, target := range links {
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, "app")
	}
	app := build(t, map[string]string{"app/same.yaml": "pod.yaml", "app/subdir": "sub", "app/chart/files/inside.txt": "x.txt"})
	e, err := Expand([]string{app})
	if err != nil {
		t.Fatal(err)
	}
	j := func(s ...string) string { return filepath.Join(append([]string{app}, s...)...) }
	var inputs, others []string
	for _, in := range e.Inputs {
		inputs = append(inputs, in.Rel)
	}
	for _, in := range e.Others {
		others = append(others, in.Rel)
	}
	if got, want := strings.Join(inputs, " "), "chart imageList pod.yaml same.yaml "+filepath.Join("sub", "cm.yaml"); got != want {
		t.Errorf("inputs: %s, want %s", got, want)
	}
	if got, want := strings.Join(others, " "), "Kubefile README.md"; got != want {
		t.Errorf("others: %s, want %s", got, want)
	}
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	want := []Link{{Path: j("same.yaml"), Target: real(j("pod.yaml"))}, {Path: j("subdir"), Target: real(j("sub")), Dir: true}}
	if !reflect.DeepEqual(e.Links, want) {
		t.Errorf("links:\n got %+v\nwant %+v", e.Links, want)
	}

	for name, links := range map[string]map[string]string{
		"file link leaving":     {"app/secret.yaml": secret},
		"relative link leaving": {"app/sub/up.yaml": "../../../" + filepath.Base(outside) + "/secret.yaml"},
		"directory link":        {"app/out": outside},
		"dangling":              {"app/gone.yaml": "missing.yaml"},
		"chart link leaving":    {"app/chart/files/secret.yaml": secret},
	} {
		t.Run(name, func(t *testing.T) {
			app := build(t, links)
			var link, target string
			for l, tg := range links {
				link, target = filepath.Join(filepath.Dir(app), l), tg
			}
			_, err := Expand([]string{app})
			if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), target) {
				t.Errorf("error %v, want one naming %s and %s", err, link, target)
			}
		})
	}

	// A link given as the directory is walked; a file given by name is
	// read wherever it is.
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(app, via); err != nil {
		t.Fatal(err)
	}
	if got, err := ExpandPaths([]string{via + "/", via, secret}); err != nil || len(got) != 11 || got[2].Path != filepath.Join(via, "pod.yaml") || got[10].Path != secret {
		t.Errorf("a link given: %+v, %v", got, err)
	}
}

// TestForOutputDir (issue 29, item 13): an output directory inside a
// directory given leaves its earlier output out of the inputs and the
// other files; an output directory that is the directory of an input (the
// directory given, or the one holding a file given) is an
// *OutputDirError; one that does not exist yet, or that holds the
// directory given, changes nothing.
func TestForOutputDir(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	for _, f := range []string{"a.yaml", "sub/b.yaml", "Kubefile", "out/a.yaml", "out/sub/b.yaml", "out/Kubefile", "out/imageList"} {
		p := filepath.Join(app, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(app, "out"), filepath.Join(dir, "link-to-out")); err != nil {
		t.Fatal(err)
	}
	paths := func(ins []Input) []string {
		var out []string
		for _, in := range ins {
			out = append(out, in.Rel)
		}
		return out
	}
	for _, tt := range []struct {
		name        string
		args        []string
		out         string
		inputs      []string
		others      []string
		replaceFile string // the input an *OutputDirError names
	}{
		{"inside the directory given", []string{app}, filepath.Join(app, "out"), []string{"a.yaml", "sub/b.yaml"}, []string{"Kubefile"}, ""},
		{"inside, through a link", []string{app}, filepath.Join(dir, "link-to-out"), []string{"a.yaml", "sub/b.yaml"}, []string{"Kubefile"}, ""},
		{"inside, not there yet", []string{app}, filepath.Join(app, "new"), []string{"a.yaml", "out/a.yaml", "out/imageList", "out/sub/b.yaml", "sub/b.yaml"}, []string{"Kubefile", "out/Kubefile"}, ""},
		{"the directory given", []string{app}, app, nil, nil, filepath.Join(app, "a.yaml")},
		{"the directory given, spelled otherwise", []string{app}, filepath.Join(app, "sub", ".."), nil, nil, filepath.Join(app, "a.yaml")},
		{"the directory of a file given", []string{filepath.Join(app, "sub", "b.yaml")}, filepath.Join(app, "sub"), nil, nil, filepath.Join(app, "sub", "b.yaml")},
		{"a directory given inside it", []string{filepath.Join(app, "out")}, app, []string{"a.yaml", "imageList", "sub/b.yaml"}, []string{"Kubefile"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Expand(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			err = e.ForOutputDir(tt.out)
			if tt.replaceFile != "" {
				var oe *OutputDirError
				if !errors.As(err, &oe) || oe.Input != tt.replaceFile || oe.Dir != tt.out {
					t.Errorf("err = %v, want an *OutputDirError naming %s", err, tt.replaceFile)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(e.Inputs); strings.Join(got, " ") != strings.Join(tt.inputs, " ") {
				t.Errorf("inputs %q, want %q", got, tt.inputs)
			}
			if got := paths(e.Others); strings.Join(got, " ") != strings.Join(tt.others, " ") {
				t.Errorf("others %q, want %q", got, tt.others)
			}
		})
	}
}
