//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rehost/rehost/internal/safefile/specialtest"
)

func stage(t *testing.T, dir, content string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "stage-*")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(content)
	f.Close()
	return f.Name()
}

// TestPublishSpecial: a device or a FIFO at the destination is written
// into and stays what it is; a regular file is replaced by a rename; a
// symbolic link is written through and stays a link.
func TestPublishSpecial(t *testing.T) {
	dir := t.TempDir()
	for _, sp := range specialtest.Make(t, dir, "out") {
		t.Run(sp.Kind, func(t *testing.T) {
			d, err := Inspect(sp.Path)
			if err != nil || !d.Direct() {
				t.Fatalf("Inspect: %+v, %v", d, err)
			}
			tmp := stage(t, t.TempDir(), "list\n")
			if err := Publish(tmp, d); err != nil {
				t.Fatal(err)
			}
			sp.Check(t)
			if got := sp.Received(t); sp.Kind == "fifo" && string(got) != "list\n" {
				t.Errorf("received %q", got)
			}
			if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("staged file left: %v", err)
			}
		})
	}

	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("old"), 0o600)
	d, _ := Inspect(regular)
	if d.Direct() {
		t.Error("a regular file is written into")
	}
	if err := Publish(stage(t, dir, "new"), d); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(regular); string(b) != "new" {
		t.Errorf("regular file: %q", b)
	}

	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("old target"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	d, _ = Inspect(link)
	if err := Publish(stage(t, dir, "through"), d); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if b, _ := os.ReadFile(target); string(b) != "through" {
		t.Errorf("link target: %q", b)
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "missing"), dangling)
	d, _ = Inspect(dangling)
	if err := Publish(stage(t, dir, "x"), d); err == nil {
		t.Error("written through a dangling link")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a dangling link's target was made")
	}
	if _, err := Inspect(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
}

// TestKeep: the staged file gets the mode of the file it replaces and,
// as root, its owner.
func TestKeep(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	os.WriteFile(old, nil, 0o600)
	if os.Geteuid() == 0 {
		if err := os.Chown(old, 4321, 4322); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := os.Lstat(old)
	tmp := stage(t, dir, "x")
	os.Chmod(tmp, 0o644)
	if err := Keep(tmp, st, true); err != nil {
		t.Fatal(err)
	}
	got, _ := os.Lstat(tmp)
	if got.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", got.Mode().Perm())
	}
	if os.Geteuid() == 0 {
		if s := got.Sys().(*syscall.Stat_t); s.Uid != 4321 || s.Gid != 4322 {
			t.Errorf("owner %d:%d, want 4321:4322", s.Uid, s.Gid)
		}
	}
}

// TestCheckBelow: a symbolic link anywhere below the output directory,
// dangling or not, is an error naming it; the output directory itself may
// be a link.
func TestCheckBelow(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.MkdirAll(filepath.Join(out, "real"), 0o755)
	os.Symlink(t.TempDir(), filepath.Join(out, "sub"))
	os.Symlink(filepath.Join(dir, "missing"), filepath.Join(out, "gone"))
	os.Symlink(filepath.Join(dir, "elsewhere.yaml"), filepath.Join(out, "real", "file.yaml"))
	os.Symlink(out, filepath.Join(dir, "via"))
	for path, link := range map[string]string{
		filepath.Join(out, "sub", "secret.yaml"):  filepath.Join(out, "sub"),
		filepath.Join(out, "gone", "x", "y.yaml"): filepath.Join(out, "gone"),
		filepath.Join(out, "real", "file.yaml"):   filepath.Join(out, "real", "file.yaml"),
	} {
		if err := CheckBelow(out, path); err == nil || !strings.Contains(err.Error(), link+" is a symbolic link") {
			t.Errorf("%s: %v", path, err)
		}
	}
	for _, ok := range []string{filepath.Join(out, "real", "new.yaml"), filepath.Join(out, "new", "deeper", "x.yaml"), out} {
		if err := CheckBelow(out, ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := CheckBelow(filepath.Join(dir, "via"), filepath.Join(dir, "via", "real", "x.yaml")); err != nil {
		t.Errorf("an output directory given as a link: %v", err)
	}
	if err := CheckBelow(out, filepath.Join(dir, "x.yaml")); err == nil {
		t.Error("a path outside the output directory passes")
	}
}

// TestCheckLinks: links inside the tree are listed; one leaving it,
// dangling, or looping is an error naming it and its target.
func TestCheckLinks(t *testing.T) {
	build := func(link, target string) string {
		root := filepath.Join(t.TempDir(), "chart")
		os.MkdirAll(filepath.Join(root, "files", "sub"), 0o755)
		os.WriteFile(filepath.Join(root, "files", "a.txt"), nil, 0o644)
		if link != "" {
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	root := build("files/b.txt", "a.txt")
	links, err := CheckLinks(root)
	if err != nil || len(links) != 1 || links[0].Path != filepath.Join(root, "files", "b.txt") || links[0].Dir {
		t.Errorf("inside: %+v, %v", links, err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, nil, 0o600)
	for _, tc := range []struct{ link, target, says string }{
		{"files/secret", secret, "outside"},
		{"files/up", "../../", "outside"},
		{"files/gone", "missing", "does not exist"},
		{"files/sub/loop", "..", "a loop"},
		{"files/self", ".", "a loop"},
	} {
		root := build(tc.link, tc.target)
		_, err := CheckLinks(root)
		var le *LinkError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), filepath.Join(root, tc.link)) || !strings.Contains(err.Error(), tc.target) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s -> %s: %v", tc.link, tc.target, err)
		}
	}
}
