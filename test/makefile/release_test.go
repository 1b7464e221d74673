package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyRepo copies the checkout's files (tracked, and new ones not ignored,
// as they are in the working tree) into a new git repository with one
// commit, and returns its directory: the release targets run there
// without touching the checkout.
func copyRepo(t *testing.T) string {
	t.Helper()
	needMake(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		} else if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-q", "-m", "copy")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func needMake(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("make not found on PATH")
		}
		t.Skip("make not found on PATH")
	}
}

// makeFails runs make in dir, wants it to fail, and returns its output.
func makeFails(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make %v succeeded, want an error:\n%s", args, out)
	}
	return string(out)
}

// goModEdit runs go mod edit in a module of dir.
func goModEdit(t *testing.T, dir, module string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"mod", "edit"}, args...)...)
	cmd.Dir = filepath.Join(dir, module)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod edit %v in %s: %v\n%s", args, module, err, out)
	}
}

// wantLines fails the test unless every pattern matches a line of out.
func wantLines(t *testing.T, what, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(out) {
			t.Errorf("%s: no line matches %q in:\n%s", what, p, out)
		}
	}
}

// TestReleaseNeedsVersion: the release targets that take a version refuse
// to run without one, and release-check refuses versions the go command
// cannot give the modules.
func TestReleaseNeedsVersion(t *testing.T) {
	dir := copyRepo(t)
	for _, target := range []string{"release", "release-check", "release-prep", "release-tags"} {
		out := makeFails(t, dir, target)
		wantLines(t, "make "+target, out, `make `+target+`: give the release version: VERSION=vX\.Y\.Z`)
	}
	for v, want := range map[string]string{
		"1.2.3":       `version "1\.2\.3" is not a semantic version of the form vX\.Y\.Z`,
		"v1.2":        `version "v1\.2" is not a semantic version`,
		"v2.0.0":      `version v2\.0\.0: a major version above v1 needs module paths ending in /v2`,
		"v1.0.0+meta": `is not a semantic version`,
	} {
		out := makeFails(t, dir, "release-check", "VERSION="+v)
		wantLines(t, "make release-check VERSION="+v, out, want)
	}
}

// TestReleaseCheckRefusesDevelopmentState: on the development state (every
// inner module requires the others at a placeholder version and replaces
// them with directories) release-check names, for each released module,
// each replace line and each requirement not at the release version, and
// says how to write the release state.
func TestReleaseCheckRefusesDevelopmentState(t *testing.T) {
	dir := copyRepo(t)
	out := makeFails(t, dir, "release-check", "VERSION=v1.2.3")
	wantLines(t, "make release-check on the development state", out,
		`the released modules are not in the release state of v1\.2\.3:`,
		`^\tcmd/rehost/go\.mod:\d+: requires github\.com/rehost/rehost/pkg/mirror v0\.0\.0-00010101000000-000000000000, want v1\.2\.3$`,
		`^\tcmd/rehost/go\.mod:\d+: replace github\.com/rehost/rehost/pkg/mirror => \.\./\.\./pkg/mirror: a released module has no replace directive`,
		`^\tpkg/helm/go\.mod:\d+: requires github\.com/rehost/rehost v0\.0\.0-00010101000000-000000000000, want v1\.2\.3$`,
		"run `make release-prep VERSION=v1.2.3` to write it",
	)
	for _, m := range []string{"pkg/mirror", "pkg/krmfn", "pkg/helm", "cmd/rehost", "cmd/rehost-fn", "cmd/rehost-helm"} {
		wantLines(t, "make release-check on the development state", out, `^\t`+regexp.QuoteMeta(m)+`/go\.mod:\d+: replace github\.com/rehost/rehost => \.\./\.\.:`)
	}
	if strings.Contains(out, "\tgo.mod:") || strings.Contains(out, "test/") {
		t.Errorf("release-check blames the core or a test module, which are fine:\n%s", out)
	}
}

// TestReleaseCheckNamesTheStrayModule: in the release state, one
// requirement at another version and one replace line are reported, each
// with its go.mod line, and nothing else.
func TestReleaseCheckNamesTheStrayModule(t *testing.T) {
	dir := copyRepo(t)
	cmd := exec.Command("go", "run", "-trimpath", ".", "pin", "-root", dir, "-version", "v1.2.3")
	cmd.Dir = filepath.Join(dir, "tools", "release")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release pin: %v\n%s", err, out)
	}
	goModEdit(t, dir, "cmd/rehost-helm", "-require=github.com/rehost/rehost/pkg/helm@v1.2.2")
	goModEdit(t, dir, "pkg/krmfn", "-replace=sigs.k8s.io/kustomize/kyaml=../../../kyaml")
	out := makeFails(t, dir, "release-check", "VERSION=v1.2.3")
	wantLines(t, "make release-check with one stray requirement", out,
		`^\tcmd/rehost-helm/go\.mod:\d+: requires github\.com/rehost/rehost/pkg/helm v1\.2\.2, want v1\.2\.3$`,
		`^\tpkg/krmfn/go\.mod:\d+: replace sigs\.k8s\.io/kustomize/kyaml => \.\./\.\./\.\./kyaml: a released module has no replace directive`,
	)
	if n := strings.Count(out, "\n\t"); n != 2 {
		t.Errorf("make release-check reports %d problems, want 2:\n%s", n, out)
	}
}

// TestReleaseRefusesDirtyTree: make release builds from a commit: a
// changed or new file stops it before anything is built, naming the files
// and the snapshot target; a clean tree still needs the signing key.
func TestReleaseRefusesDirtyTree(t *testing.T) {
	dir := copyRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := makeFails(t, dir, "release", "VERSION=v1.2.3", "COSIGN_KEY=cosign.key")
	wantLines(t, "make release on a dirty tree", out,
		`make release: the tree has uncommitted changes; a release is built from a commit \(make release-snapshot builds the tree as it is\)`,
		`^ M README\.md$`, `^\?\? new\.txt$`)
	if _, err := os.Stat(filepath.Join(dir, "dist")); !os.IsNotExist(err) {
		t.Errorf("make release on a dirty tree made dist/ (%v)", err)
	}
	git(t, dir, "checkout", "README.md")
	os.Remove(filepath.Join(dir, "new.txt"))
	out = makeFails(t, dir, "release", "VERSION=v1.2.3")
	wantLines(t, "make release without COSIGN_KEY", out, `make release: give the signing key: COSIGN_KEY=cosign\.key`)
}
