package helm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPackageOutputs: Package publishes as safefile does: a regular file
// is replaced, keeping its mode; a symbolic link is written through, and
// stays a link; a directory is refused and left alone.
func TestPackageOutputs(t *testing.T) {
	want, err := os.ReadFile(packaged(t, "airgap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		prepare func(out string) (check string)
		wantErr bool
	}{
		{"new file", func(out string) string { return out }, false},
		{"regular file", func(out string) string {
			if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			return out
		}, false},
		{"link", func(out string) string {
			target := out + ".target"
			if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Base(target), out); err != nil {
				t.Fatal(err)
			}
			return target
		}, false},
		{"directory", func(out string) string {
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			return ""
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".tgz")
			check := tt.prepare(out)
			before, _ := os.Lstat(out)
			_, err := Package(chartPath("airgap"), out)
			if tt.wantErr {
				if after, _ := os.Lstat(out); err == nil || after == nil || !after.IsDir() {
					t.Errorf("err %v: want an error and the directory left", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(check); !bytes.Equal(got, want) {
				t.Errorf("%s does not hold the packaged chart", check)
			}
			after, err := os.Lstat(out)
			if err != nil {
				t.Fatal(err)
			}
			if before != nil && after.Mode() != before.Mode() {
				t.Errorf("mode %v, was %v", after.Mode(), before.Mode())
			}
		})
	}
	if es, _ := filepath.Glob(filepath.Join(dir, ".rehost-*")); len(es) != 0 {
		t.Errorf("left behind: %v", es)
	}
}
