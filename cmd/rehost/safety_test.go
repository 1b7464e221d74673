package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rehost/rehost/internal/safefile/specialtest"
	"github.com/rehost/rehost/pkg/rendered"
)

// Issue 21 (hostile input) and issue 22 (a newcomer's first hour): the
// rules of docs/cli-safety.md, at the command line.

const canaryText = "canary: untouched\n"

// outsideCanary writes a file outside every output and returns the check that
// it is untouched.
func outsideCanary(t *testing.T, dir string) func() {
	t.Helper()
	p := filepath.Join(dir, "canary.yaml")
	if err := os.WriteFile(p, []byte(canaryText), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || string(b) != canaryText {
			t.Errorf("the canary outside the output was written: %q, %v", b, err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestOutputsIntoSpecialFiles: an --image-list, a values overlay (-o) or a
// --output-dir file that is a device node or a FIFO is written into and
// stays what it is: renaming over /dev/null turned it into a regular file.
func TestOutputsIntoSpecialFiles(t *testing.T) {
	app := writeFiles(t, map[string]string{"app/pod.yaml": podNginx})
	for _, sp := range specialtest.Make(t, t.TempDir(), "imageList") {
		t.Run("image-list "+sp.Kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, stderr, code := rehost(t, "", "rewrite", filepath.Join(app, "app"), "--output-dir", out, "--image-list", sp.Path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			sp.Check(t)
			if got := sp.Received(t); sp.Kind == "fifo" && string(got) != "docker.io/library/nginx:1.25\n" {
				t.Errorf("the FIFO received %q", got)
			}
			if b, _ := os.ReadFile(filepath.Join(out, "pod.yaml")); !strings.Contains(string(b), "sea.hub:5000/library/nginx:1.25") {
				t.Errorf("out/pod.yaml:\n%s", b)
			}
		})
	}
	for _, sp := range specialtest.Make(t, t.TempDir(), "overlay.yaml") {
		t.Run("values -o "+sp.Kind, func(t *testing.T) {
			chart := filepath.Join(chartDir(t), "app")
			fakeHelper(t, fakeAirgap(t, false), 0)
			if _, stderr, code := rehost(t, "", "values", chart, "-o", sp.Path); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			sp.Check(t)
			if got := sp.Received(t); sp.Kind == "fifo" && !strings.HasPrefix(string(got), "# header\n") {
				t.Errorf("the FIFO received %q", got)
			}
		})
	}
	out := t.TempDir()
	for _, sp := range specialtest.Make(t, out, "pod.yaml") {
		t.Run("output-dir file "+sp.Kind, func(t *testing.T) {
			// An input of the special file's name.
			in := writeFiles(t, map[string]string{filepath.Base(sp.Path): podNginx})
			if _, stderr, code := rehost(t, "", "rewrite", filepath.Join(in, filepath.Base(sp.Path)), "--output-dir", out); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			sp.Check(t)
			if got := sp.Received(t); sp.Kind == "fifo" && !strings.Contains(string(got), "sea.hub:5000/library/nginx:1.25") {
				t.Errorf("the FIFO received %q", got)
			}
		})
	}
}

// TestInPlaceSpecialInput: --in-place never replaces an input that is not
// a regular file: an error names it, before it is read, and it stays.
func TestInPlaceSpecialInput(t *testing.T) {
	dir := t.TempDir()
	check := outsideCanary(t, dir)
	for _, sp := range specialtest.Make(t, dir, "input.yaml") {
		t.Run(sp.Kind, func(t *testing.T) {
			stdout, stderr, code := rehost(t, "", "rewrite", "--in-place", sp.Path)
			if code != 1 || stdout != "" || !strings.Contains(stderr, sp.Path+" is a ") || !strings.Contains(stderr, "not a regular file") {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			sp.Check(t)
		})
	}
	check()
}

// TestOutputDirLinks: rewrite --output-dir never writes through a
// symbolic link inside the output directory (a planted OUT/sub ->
// elsewhere, a dangling one, a link at the file itself): exit 1, an error
// naming the link, nothing written outside.
func TestOutputDirLinks(t *testing.T) {
	for name, plant := range map[string]func(t *testing.T, out, elsewhere string) string{
		"directory": func(t *testing.T, out, elsewhere string) string {
			symlink(t, elsewhere, filepath.Join(out, "sub"))
			return filepath.Join(out, "sub")
		},
		"dangling": func(t *testing.T, out, elsewhere string) string {
			symlink(t, filepath.Join(elsewhere, "new"), filepath.Join(out, "sub"))
			return filepath.Join(out, "sub")
		},
		"file": func(t *testing.T, out, elsewhere string) string {
			symlink(t, filepath.Join(elsewhere, "canary.yaml"), filepath.Join(out, "sub", "secret.yaml"))
			return filepath.Join(out, "sub", "secret.yaml")
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := writeFiles(t, map[string]string{"sub/secret.yaml": podNginx, "a.yaml": podNginx})
			elsewhere := t.TempDir()
			check := outsideCanary(t, elsewhere)
			// The canary is where the link leads, under the input's name.
			if err := os.WriteFile(filepath.Join(elsewhere, "secret.yaml"), []byte(canaryText), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			link := plant(t, out, elsewhere)
			stdout, stderr, code := rehost(t, "", "rewrite", in, "--output-dir", out)
			if code != 1 || stdout != "" || !strings.Contains(stderr, link+" is a symbolic link") || !strings.Contains(stderr, filepath.Join(in, "sub", "secret.yaml")) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			check()
			if b, _ := os.ReadFile(filepath.Join(elsewhere, "secret.yaml")); string(b) != canaryText {
				t.Errorf("written through the link: %q", b)
			}
			if _, err := os.Stat(filepath.Join(out, "a.yaml")); err == nil {
				t.Error("out/a.yaml written although the run failed")
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 2 {
				t.Errorf("written outside: %v", entries)
			}
		})
	}
}

// TestInputLinksLeaving: a symbolic link in an input directory, or in a
// chart, that leads out of it is an error naming the link and its target;
// nothing is read from outside, nothing written.
func TestInputLinksLeaving(t *testing.T) {
	secretDir := t.TempDir()
	check := outsideCanary(t, secretDir)
	secret := filepath.Join(secretDir, "canary.yaml")
	for name, link := range map[string]string{"manifest": "app/stolen.yaml", "chart": "app/chart/files/token", "other file": "app/notes.txt"} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"app/pod.yaml": podNginx, "app/chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 1.0.0\n"})
			symlink(t, secret, filepath.Join(dir, link))
			fakeHelper(t, fakeChartJSON(t, fakeChart(t)), 0)
			out := filepath.Join(dir, "out")
			stdout, stderr, code := rehost(t, "", "rewrite", filepath.Join(dir, "app"), "--output-dir", out)
			if code != 1 || stdout != "" || !strings.Contains(stderr, filepath.Join(dir, link)) || !strings.Contains(stderr, secret) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if strings.Contains(stderr, canaryText) {
				t.Error("the secret's content reached stderr")
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output written")
			}
		})
	}
	check()
}

// TestOutputModes: --output-dir keeps each input's permissions (a 0600
// Secret stays private); --in-place keeps the mode and the owner; an
// --image-list replacing a file keeps its mode and owner.
func TestOutputModes(t *testing.T) {
	in := writeFiles(t, map[string]string{"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n", "pod.yaml": podNginx, "run.json": `{"kind":"Pod","spec":{"containers":[{"image":"nginx"}]}}`})
	modes := map[string]os.FileMode{"secret.yaml": 0o600, "pod.yaml": 0o640, "run.json": 0o755}
	for f, m := range modes {
		if err := os.Chmod(filepath.Join(in, f), m); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(filepath.Join(in, "pod.yaml"), 4321, 4322); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(t.TempDir(), "imageList")
	if err := os.WriteFile(list, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := rehost(t, "", "rewrite", in, "--output-dir", out, "--image-list", list); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for f, m := range modes {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Mode().Perm() != m {
			t.Errorf("out/%s: %v, want mode %v", f, st.Mode(), m)
		}
	}
	if st, _ := os.Stat(list); st.Mode().Perm() != 0o600 {
		t.Errorf("--image-list: mode %v, want the replaced file's 0600", st.Mode().Perm())
	}

	pod := filepath.Join(in, "pod.yaml")
	if _, stderr, code := rehost(t, "", "rewrite", "--in-place", pod); code != 0 {
		t.Fatalf("--in-place: exit %d: %s", code, stderr)
	}
	st, _ := os.Stat(pod)
	if b, _ := os.ReadFile(pod); st.Mode().Perm() != 0o640 || !strings.Contains(string(b), "sea.hub:5000/library/nginx:1.25") {
		t.Errorf("--in-place: mode %v, content:\n%s", st.Mode().Perm(), b)
	}
	if s := st.Sys().(*syscall.Stat_t); root && (s.Uid != 4321 || s.Gid != 4322) {
		t.Errorf("--in-place: owner %d:%d, want 4321:4322", s.Uid, s.Gid)
	}
}

// TestInPlaceThroughLink: --in-place on a symbolic link (inside the
// directory given) rewrites the file it names and keeps the link.
func TestInPlaceThroughLink(t *testing.T) {
	dir := writeFiles(t, map[string]string{"real/pod.yaml": podNginx})
	link := filepath.Join(dir, "pod.yaml")
	symlink(t, filepath.Join("real", "pod.yaml"), link)
	if _, stderr, code := rehost(t, "", "rewrite", "--in-place", link); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real", "pod.yaml")); !strings.Contains(string(b), "sea.hub:5000/library/nginx:1.25") {
		t.Errorf("not rewritten:\n%s", b)
	}
}

// TestOutputDirCopiesOtherFiles: rewrite DIR --output-dir OUT copies the
// files that are not manifests (a sealer Kubefile, a README, the
// imageList) unchanged, with their permissions, and says how many on one
// stderr line; hidden directories stay behind; --manifests-only copies
// none; an --image-list written into OUT wins over the copy.
func TestOutputDirCopiesOtherFiles(t *testing.T) {
	app := filepath.Join(writeFiles(t, map[string]string{
		"calico/Kubefile":             "FROM kubernetes:v1.22.8\nCOPY imageList manifests\nCMD kubectl apply -f manifests/\n",
		"calico/README.md":            "# calico\n",
		"calico/imageList":            "quay.io/tigera/operator:v1.36.2\n",
		"calico/manifests/pod.yaml":   podNginx,
		"calico/manifests/notes.txt":  "notes\n",
		"calico/.git/config":          "[core]\n",
		"calico/manifests/.keep.yaml": "",
	}), "calico")
	if err := os.Chmod(filepath.Join(app, "Kubefile"), 0o750); err != nil {
		t.Fatal(err)
	}
	symlink(t, "README.md", filepath.Join(app, "README"))

	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := rehost(t, "", "rewrite", app, "--output-dir", out)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, stdout, stderr)
	}
	for _, f := range []string{"Kubefile", "README", "README.md", "imageList", filepath.Join("manifests", "notes.txt")} {
		want, _ := os.ReadFile(filepath.Join(app, f))
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || string(got) != string(want) {
			t.Errorf("out/%s: %q, %v; want a copy", f, got, err)
		}
	}
	if st, _ := os.Stat(filepath.Join(out, "Kubefile")); st.Mode().Perm() != 0o750 {
		t.Errorf("Kubefile copied with mode %v", st.Mode().Perm())
	}
	if st, _ := os.Lstat(filepath.Join(out, "README")); !st.Mode().IsRegular() {
		t.Errorf("a link inside the input is copied as %v", st.Mode())
	}
	if _, err := os.Stat(filepath.Join(out, ".git")); err == nil {
		t.Error("a hidden directory was copied")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "manifests", "pod.yaml")); !strings.Contains(string(b), "sea.hub:5000/library/nginx:1.25") {
		t.Errorf("manifests/pod.yaml not rewritten:\n%s", b)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], filepath.Join(app, "README")+" is a symbolic link to ") ||
		!hasFacts(lines[1], "rehost: copied 5 other file(s)", out, "--manifests-only") {
		t.Errorf("stderr:\n%s", stderr)
	}

	// --manifests-only: the manifests alone, no line.
	only := filepath.Join(t.TempDir(), "out")
	_, stderr, code = rehost(t, "", "rewrite", app, "--output-dir", only, "--manifests-only")
	if code != 0 || strings.Contains(stderr, "copied") {
		t.Fatalf("--manifests-only: exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(only)
	if len(entries) != 1 || entries[0].Name() != "manifests" {
		t.Errorf("--manifests-only wrote %v", entries)
	}

	// The image list rehost writes wins over the hand-kept one's copy.
	out = filepath.Join(t.TempDir(), "out")
	_, stderr, code = rehost(t, "", "rewrite", app, "--output-dir", out, "--image-list", filepath.Join(out, "imageList"))
	if code != 0 || !strings.Contains(stderr, "copied 4 other file(s)") || !strings.Contains(stderr, "not copied, rehost writes them: imageList") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "imageList")); string(b) != "docker.io/library/nginx:1.25\nquay.io/tigera/operator:v1.36.2\n" {
		t.Errorf("out/imageList: %q", b)
	}
}

// TestNoCommand: rehost without a command prints its help on a terminal;
// elsewhere (a Helm 3 post-renderer given no --post-renderer-args rewrite)
// it exits 2 with a one-line hint on stderr, so that helm never takes the
// help for manifests.
func TestNoCommand(t *testing.T) {
	orig := stdoutIsTerminal
	defer func() { stdoutIsTerminal = orig }()
	stdoutIsTerminal = func(io.Writer) bool { return false }
	stdout, stderr, code := rehost(t, podNginx)
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--post-renderer-args rewrite") {
		t.Errorf("not a terminal: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdoutIsTerminal = func(io.Writer) bool { return true }
	stdout, stderr, code = rehost(t, "")
	if code != 0 || !strings.Contains(stdout, "Available Commands:") || stderr != "" {
		t.Errorf("a terminal: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "exits with status 2") {
		t.Errorf("--help does not say what happens without a command:\n%s", stdout)
	}
	if orig(&strings.Builder{}) {
		t.Error("a buffer taken for a terminal")
	}
}

// TestMissingCompanionHint: a missing rehost-fn (or rehost-helm, see
// TestChartHelperFailures) is built from a checkout: the module proxy does
// not serve rehost.
func TestMissingCompanionHint(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, stderr, code := rehost(t, "", "fn")
	for _, want := range []string{"needs the rehost-fn helper", "`make build`", "`go install ./cmd/rehost-fn`"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q; want it to contain %q", code, stderr, want)
		}
	}
	if strings.Contains(stderr, "@latest") {
		t.Errorf("stderr suggests @latest: %q", stderr)
	}
}

// TestKubeVersionDefault: the chart commands render for a current
// Kubernetes by default and --help says which.
func TestKubeVersionDefault(t *testing.T) {
	for _, cmd := range []string{"rewrite", "images", "values", "relocate", "mirror"} {
		stdout, _, code := rehost(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(stdout, "--kube-version") || !strings.Contains(stdout, `(default "`+rendered.DefaultKubeVersion+`")`) {
			t.Errorf("%s --help does not give the default Kubernetes version:\n%s", cmd, stdout)
		}
	}
}

// TestOutputDirSpecialOtherFile: a FIFO among the other files of an input
// directory is an error naming it, not a copy that waits forever for a
// writer; nothing is written.
func TestOutputDirSpecialOtherFile(t *testing.T) {
	app := filepath.Join(writeFiles(t, map[string]string{"app/pod.yaml": podNginx}), "app")
	fifo := filepath.Join(app, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := rehost(t, "", "rewrite", app, "--output-dir", out)
	if code != 1 || !strings.Contains(stderr, fifo+" is a FIFO") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written")
	}
	if _, stderr, code := rehost(t, "", "rewrite", app, "--output-dir", out, "--manifests-only"); code != 0 {
		t.Errorf("--manifests-only: exit %d: %s", code, stderr)
	}
}
