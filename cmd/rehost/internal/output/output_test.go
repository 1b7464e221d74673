package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpool(t *testing.T) {
	for _, size := range []int{0, 10, memLimit - 1, memLimit + 1, 3*memLimit + 7} {
		var s Spool
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		for i := 0; i < len(want); i += 1 << 20 {
			end := min(i+1<<20, len(want))
			if _, err := s.Write(want[i:end]); err != nil {
				t.Fatal(err)
			}
		}
		if spilled := s.file != nil; spilled != (size > memLimit) {
			t.Errorf("size %d: spilled = %v", size, spilled)
		}
		var got bytes.Buffer
		if err := s.Commit(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("size %d: committed %d bytes that differ", size, got.Len())
		}
	}
}

func TestStaged(t *testing.T) {
	dir := t.TempDir()
	stage := filepath.Join(dir, "stage")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Staged{Dir: stage, Root: filepath.Join(dir, "out")}
	dest := filepath.Join(dir, "out", "a", "b.yaml")
	f, err := s.Create(dest, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x: 1\n")
	f.Close()
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Fatal("destination directory exists before Commit")
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dest)
	if err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("after Commit: %v %v", st, err)
	}
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Error("staging directory left behind")
	}

	var beside Staged
	existing := filepath.Join(dir, "in.yaml")
	os.WriteFile(existing, []byte("old"), 0o644)
	f, _ = beside.Create(existing, 0o644)
	f.WriteString("new")
	f.Close()
	beside.Abort()
	if got, _ := os.ReadFile(existing); string(got) != "old" {
		t.Errorf("Abort changed the file: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "in.yaml,out" {
		t.Errorf("leftovers after Abort: %v", names)
	}
}
