package main

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{
		"v0.1.0": true, "v1.2.3": true, "v1.0.0-rc.1": true,
		"": false, "0.1.0": false, "v1.2": false, "v1": false, "v1.0.0+build": false, "v2.0.0": false, "v10.1.0": false,
	} {
		if err := checkVersion(v); (err == nil) != ok {
			t.Errorf("checkVersion(%q) = %v, want ok=%v", v, err, ok)
		}
	}
}

func TestTag(t *testing.T) {
	for dir, want := range map[string]string{".": "v0.1.0", "pkg/mirror": "pkg/mirror/v0.1.0", "cmd/rehost-helm": "cmd/rehost-helm/v0.1.0"} {
		if got := tag(dir, "v0.1.0"); got != want {
			t.Errorf("tag(%q) = %q, want %q", dir, got, want)
		}
	}
}

const placeholder = "v0.0.0-00010101000000-000000000000"

// fakeRepo writes a git repository shaped like rehost's, without third-party
// requirements: the core, a library that requires it, a command that
// requires both (replace lines as in development), a test module, a nested
// module's file and an untracked file that no module zip may hold.
func fakeRepo(t *testing.T) *repo {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":             "module github.com/rehost/rehost\n\ngo 1.22\n",
		"pkg/rewrite/r.go":   "package rewrite\n\nfunc Registry() string { return \"sea.hub:5000\" }\n",
		"README.md":          "core\n",
		"pkg/mirror/go.mod":  "module github.com/rehost/rehost/pkg/mirror\n\ngo 1.26.0\n\n// Until rehost is released, its modules are the ones in this repository.\nreplace github.com/rehost/rehost => ../..\n\nrequire github.com/rehost/rehost " + placeholder + "\n",
		"pkg/mirror/m.go":    "package mirror\n\nimport \"github.com/rehost/rehost/pkg/rewrite\"\n\nfunc Target() string { return rewrite.Registry() }\n",
		"cmd/rehost/go.mod":  "module github.com/rehost/rehost/cmd/rehost\n\ngo 1.26.0\n\nreplace (\n\tgithub.com/rehost/rehost => ../..\n\tgithub.com/rehost/rehost/pkg/mirror => ../../pkg/mirror\n)\n\nrequire (\n\tgithub.com/rehost/rehost " + placeholder + " // indirect\n\tgithub.com/rehost/rehost/pkg/mirror " + placeholder + "\n)\n",
		"cmd/rehost/main.go": "package main\n\nimport \"github.com/rehost/rehost/pkg/mirror\"\n\nfunc main() { println(mirror.Target()) }\n",
		"test/e2e/go.mod":    "module github.com/rehost/rehost/test/e2e\n\ngo 1.26.0\n\nreplace github.com/rehost/rehost => ../..\n\nrequire github.com/rehost/rehost " + placeholder + "\n",
		"test/e2e/e.go":      "package e2e\n\nimport _ \"github.com/rehost/rehost/pkg/rewrite\"\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "c"}} {
		if _, err := git(dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("not in any zip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &repo{root: dir, released: []string{".", "pkg/mirror", "cmd/rehost"}}
}

func TestPinAndProblems(t *testing.T) {
	r := fakeRepo(t)
	probs, err := r.problems("v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg/mirror/go.mod:6: replace github.com/rehost/rehost => ../..: a released module has no replace directive (importers ignore it; go install of a module with one fails)",
		"pkg/mirror/go.mod:8: requires github.com/rehost/rehost " + placeholder + ", want v0.1.0",
		"cmd/rehost/go.mod:6: replace github.com/rehost/rehost => ../..: a released module has no replace directive (importers ignore it; go install of a module with one fails)",
		"cmd/rehost/go.mod:7: replace github.com/rehost/rehost/pkg/mirror => ../../pkg/mirror: a released module has no replace directive (importers ignore it; go install of a module with one fails)",
		"cmd/rehost/go.mod:11: requires github.com/rehost/rehost " + placeholder + ", want v0.1.0",
		"cmd/rehost/go.mod:12: requires github.com/rehost/rehost/pkg/mirror " + placeholder + ", want v0.1.0",
	}
	if !slices.Equal(probs, want) {
		t.Errorf("problems in development:\n%s\nwant\n%s", strings.Join(probs, "\n"), strings.Join(want, "\n"))
	}
	changed, err := r.pin("v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cmd/rehost/go.mod", "pkg/mirror/go.mod", "test/e2e/go.mod"}; !slices.Equal(changed, want) {
		t.Errorf("pin changed %v, want %v", changed, want)
	}
	if probs, err := r.problems("v0.1.0"); err != nil || len(probs) != 0 {
		t.Errorf("problems after pin: %v %v", probs, err)
	}
	if probs, _ := r.problems("v0.2.0"); len(probs) != 3 {
		t.Errorf("problems at another version: %v, want the 3 requirements", probs)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(r.root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("cmd/rehost/go.mod"), "module github.com/rehost/rehost/cmd/rehost\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/rehost/rehost v0.1.0 // indirect\n\tgithub.com/rehost/rehost/pkg/mirror v0.1.0\n)\n"; got != want {
		t.Errorf("cmd/rehost/go.mod after pin:\n%s\nwant\n%s", got, want)
	}
	if got := read("pkg/mirror/go.mod"); strings.Contains(got, "replace") || strings.Contains(got, "Until rehost") {
		t.Errorf("pkg/mirror/go.mod keeps its replace line or its comment:\n%s", got)
	}
	if got := read("test/e2e/go.mod"); !strings.Contains(got, "replace github.com/rehost/rehost => ../..") || !strings.Contains(got, "github.com/rehost/rehost v0.1.0") {
		t.Errorf("test/e2e/go.mod after pin: a test module keeps its replace line and requires the version:\n%s", got)
	}
	all, err := r.modules()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := r.releasedModules(all)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := pinnedVersion(rel); v != "v0.1.0" || err != nil {
		t.Errorf("pinnedVersion = %q, %v", v, err)
	}
	order, err := ordered(rel)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range order {
		dirs = append(dirs, m.dir)
	}
	if want := []string{".", "pkg/mirror", "cmd/rehost"}; !slices.Equal(dirs, want) {
		t.Errorf("ordered: %v, want %v", dirs, want)
	}
}

// TestUnlistedModule: a module outside test/ and tools/ that is not
// released is an error (a new module must be released or moved).
func TestUnlistedModule(t *testing.T) {
	r := fakeRepo(t)
	r.released = []string{".", "cmd/rehost"}
	_, err := r.problems("v0.1.0")
	if err == nil || !strings.Contains(err.Error(), "pkg/mirror/go.mod: module github.com/rehost/rehost/pkg/mirror is neither released") {
		t.Errorf("problems with pkg/mirror not released: %v", err)
	}
}

// TestProxy: the module proxy directory serves the modules as the go
// command fetches them: the files git tracks, not nested modules' or
// untracked files; a program that requires the command at the version
// builds from it alone, without network, replace or workspace.
func TestProxy(t *testing.T) {
	r := fakeRepo(t)
	if _, err := r.pin("v0.1.0"); err != nil {
		t.Fatal(err)
	}
	all, err := r.modules()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := r.releasedModules(all)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, m := range rel {
		if err := r.writeProxy(dir, m, "v0.1.0", time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	zipPath := filepath.Join(dir, "github.com/rehost/rehost/@v/v0.1.0.zip")
	if _, err := modzip.CheckZip(module.Version{Path: corePath, Version: "v0.1.0"}, zipPath); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, strings.TrimPrefix(f.Name, corePath+"@v0.1.0/"))
	}
	zr.Close()
	slices.Sort(names)
	if want := []string{"README.md", "go.mod", "pkg/rewrite/r.go"}; !slices.Equal(names, want) {
		t.Errorf("the core's zip holds %v, want %v", names, want)
	}
	if info, _ := os.ReadFile(filepath.Join(dir, "github.com/rehost/rehost/cmd/rehost/@v/v0.1.0.info")); string(info) != `{"Version":"v0.1.0","Time":"2023-11-14T22:13:20Z"}` {
		t.Errorf("cmd/rehost v0.1.0.info: %s", info)
	}

	// The go command, against the proxy directory only.
	consumer := t.TempDir()
	if err := os.WriteFile(filepath.Join(consumer, "go.mod"), []byte("module example.com/c\n\ngo 1.26.0\n\nrequire github.com/rehost/rehost/pkg/mirror v0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(consumer, "main.go"), []byte("package main\n\nimport \"github.com/rehost/rehost/pkg/mirror\"\n\nfunc main() { println(mirror.Target()) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -modcacherw", "GOPROXY="+fileURL(dir), "GOSUMDB=off", "GOMODCACHE="+t.TempDir(), "GOTOOLCHAIN=local")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", "c", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = consumer, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command(filepath.Join(consumer, "c")).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("sea.hub:5000")) {
		t.Errorf("the consumer: %v %s", err, out)
	}
	sum, err := os.ReadFile(filepath.Join(consumer, "go.sum"))
	if err != nil || !bytes.Contains(sum, []byte("github.com/rehost/rehost v0.1.0 h1:")) {
		t.Errorf("the consumer's go.sum lacks the core:\n%s", sum)
	}
}
