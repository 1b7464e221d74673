package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// leftovers lists the entries of dir other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
outer:
	for _, e := range es {
		for _, w := range want {
			if e.Name() == w {
				continue outer
			}
		}
		out = append(out, e.Name())
	}
	return out
}

func fill(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// TestWrite: the file takes its whole content or keeps its old one;
// nothing is left beside it; a failed fill leaves the old content;
// NoReplace refuses a name that exists. (The core module says go 1.22,
// before os.Root: package mirror's tests write through an *os.Root.)
func TestWrite(t *testing.T) {
	for _, kind := range []string{"dir"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			var fsys FS = Dir(dir)
			name := "sub/index.json"
			if err := Write(fsys, name, Options{}, fill("one")); err != nil {
				t.Fatal(err)
			}
			if err := Write(fsys, name, Options{SyncDir: true}, fill("two")); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "sub", "index.json"))
			if string(got) != "two" {
				t.Errorf("content %q, want two", got)
			}
			if runtime.GOOS != "windows" {
				if fi, _ := os.Stat(filepath.Join(dir, "sub", "index.json")); fi.Mode().Perm()&0o600 != 0o600 || fi.Mode().Perm()&0o022 != 0 && fi.Mode().Perm() != 0o644 {
					t.Errorf("mode %v", fi.Mode())
				}
			}
			boom := errors.New("boom")
			err := Write(fsys, name, Options{}, func(w io.Writer) error {
				io.WriteString(w, "partial")
				return boom
			})
			if !errors.Is(err, boom) {
				t.Errorf("a failed fill: %v", err)
			}
			got, _ = os.ReadFile(filepath.Join(dir, "sub", "index.json"))
			if string(got) != "two" {
				t.Errorf("after a failed fill: %q, want the old content", got)
			}
			err = Write(fsys, name, Options{NoReplace: true}, fill("three"))
			if !errors.Is(err, fs.ErrExist) {
				t.Errorf("NoReplace over an existing file: %v", err)
			}
			if err := Write(fsys, "sub/new", Options{NoReplace: true, Perm: 0o600}, fill("new")); err != nil {
				t.Errorf("NoReplace onto a free name: %v", err)
			}
			if left := leftovers(t, filepath.Join(dir, "sub"), "index.json", "new"); len(left) != 0 {
				t.Errorf("left behind: %q", left)
			}
			// A missing directory: a PathError naming the temporary file
			// within fsys.
			err = Write(fsys, "missing/x", Options{}, fill("x"))
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Op != "create" || !strings.HasPrefix(pe.Path, "missing/.x.") || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("missing directory: %v", err)
			}
		})
	}
}

// TestWriteReplacesLinks: a symbolic link at the name is replaced by the
// file, and the file it pointed to is untouched.
func TestWriteReplacesLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "index.json")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := Write(Dir(dir), "index.json", Options{}, fill("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "index.json")); !fi.Mode().IsRegular() {
		t.Errorf("the name is %v, want a regular file", fi.Mode())
	}
}
