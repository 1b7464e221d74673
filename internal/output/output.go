// Package output makes the CLI's output all-or-nothing: standard output is
// spooled until the run succeeds, and files are staged beside their
// destination and renamed into place only when every input succeeded.
package output

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
// directory, before Commit.
type Staged struct {
	// Dir, when set, holds the temporary files (a directory on the same file
	// system as the destinations, removed by Commit and Abort); otherwise
	// each temporary file sits beside its destination, whose directory must
	// exist.
	Dir   string
	files []staged
}

type staged struct {
	tmp, dest string
	mode      os.FileMode
}

// Create opens a staged file that becomes dest on Commit with permission
// mode.
func (s *Staged) Create(dest string, mode os.FileMode) (*os.File, error) {
	dir := s.Dir
	if dir == "" {
		dir = filepath.Dir(dest)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".rehost-*")
	if err != nil {
		return nil, err
	}
	s.files = append(s.files, staged{tmp: f.Name(), dest: dest, mode: mode})
	return f, nil
}

// Commit moves every staged file into place.
func (s *Staged) Commit() error {
	var errs []error
	for _, f := range s.files {
		if err := os.MkdirAll(filepath.Dir(f.dest), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Chmod(f.tmp, f.mode); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Rename(f.tmp, f.dest); err != nil {
			errs = append(errs, err)
		}
	}
	s.files = nil
	if s.Dir != "" {
		os.RemoveAll(s.Dir)
	}
	return errors.Join(errs...)
}

// Abort removes every staged file.
func (s *Staged) Abort() {
	for _, f := range s.files {
		os.Remove(f.tmp)
	}
	s.files = nil
	if s.Dir != "" {
		os.RemoveAll(s.Dir)
	}
}
