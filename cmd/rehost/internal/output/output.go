// Package output makes the CLI's output all-or-nothing: standard output is
// spooled until the run succeeds, and files are staged beside their
// destination and renamed into place only when every input succeeded.
package output

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// memLimit is how much of standard output is kept in memory before the
// spool moves to a temporary file. Small outputs never touch the disk; large
// ones cost no memory (and no page zeroing) as they grow, and Commit hands
// the file to the kernel (copy_file_range or sendfile) when the destination
// is a file or a pipe.
const memLimit = 1 << 20

// Spool holds output until Commit: up to 1 MiB in memory, the rest in an
// unlinked temporary file written through a 256 KiB buffer.
type Spool struct {
	buf  bytes.Buffer
	file *os.File
	w    *bufio.Writer
}

// Write implements io.Writer.
func (s *Spool) Write(p []byte) (int, error) {
	if s.file == nil && s.buf.Len()+len(p) > memLimit {
		f, err := os.CreateTemp("", "rehost-spool-*")
		if err != nil {
			return 0, err
		}
		os.Remove(f.Name()) // unlinked: gone when closed
		s.file = f
		s.w = bufio.NewWriterSize(f, 256<<10)
		if _, err := s.buf.WriteTo(s.w); err != nil {
			return 0, err
		}
		s.buf = bytes.Buffer{}
	}
	if s.file != nil {
		return s.w.Write(p)
	}
	return s.buf.Write(p)
}

// Commit copies everything written to w and releases the spool.
func (s *Spool) Commit(w io.Writer) error {
	if s.file == nil {
		_, err := s.buf.WriteTo(w)
		return err
	}
	defer s.Discard()
	if err := s.w.Flush(); err != nil {
		return err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.file)
	return err
}

// Discard drops what was written.
func (s *Spool) Discard() {
	s.buf.Reset()
	if s.file != nil {
		s.file.Close()
		s.file, s.w = nil, nil
	}
}

// Staged writes files to temporary names and renames them into place on
// Commit; Abort removes them. Nothing appears at a destination, not even a
// directory, before Commit, and Commit checks every destination before it
// renames any.
type Staged struct {
	// Dir, when set, holds the temporary files of the destinations below
	// Root (a directory on the same file system, removed by Commit and
	// Abort): for an output tree that does not exist yet. Every other
	// temporary file sits beside its destination, whose directory must exist.
	Dir, Root string
	files     []staged
}

type staged struct {
	tmp, dest string
	mode      os.FileMode
}

// Create opens a staged file that becomes dest on Commit with permission
// mode. A destination staged twice is an error: one output would overwrite
// the other.
func (s *Staged) Create(dest string, mode os.FileMode) (*os.File, error) {
	for _, f := range s.files {
		if f.dest == dest {
			return nil, fmt.Errorf("%s: two outputs would be written to this file", dest)
		}
	}
	dir := filepath.Dir(dest)
	if s.Dir != "" && within(s.Root, dest) {
		dir = s.Dir
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".rehost-*")
	if err != nil {
		return nil, err
	}
	s.files = append(s.files, staged{tmp: f.Name(), dest: dest, mode: mode})
	return f, nil
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Commit moves every staged file into place. It first checks that no
// destination is a directory and that every destination directory can be
// made; a rename that still fails leaves the remaining files for Abort.
func (s *Staged) Commit() error {
	for _, f := range s.files {
		if st, err := os.Stat(f.dest); err == nil && st.IsDir() {
			return fmt.Errorf("%s: is a directory", f.dest)
		}
		if err := os.Chmod(f.tmp, f.mode); err != nil {
			return err
		}
	}
	for _, f := range s.files {
		if err := os.MkdirAll(filepath.Dir(f.dest), 0o755); err != nil {
			return err
		}
	}
	for len(s.files) > 0 {
		f := s.files[0]
		if err := os.Rename(f.tmp, f.dest); err != nil {
			return err
		}
		s.files = s.files[1:]
	}
	if s.Dir != "" {
		os.RemoveAll(s.Dir)
	}
	return nil
}

// Abort removes every staged file that was not committed.
func (s *Staged) Abort() {
	for _, f := range s.files {
		os.Remove(f.tmp)
	}
	s.files = nil
	if s.Dir != "" {
		os.RemoveAll(s.Dir)
	}
}
