// Package output makes the CLI's output all-or-nothing: standard output is
// spooled until the run succeeds, and files are staged and published (see
// package safefile) only when every input succeeded.
package output

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rehost/rehost/internal/safefile"
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

// Staged writes files to temporary names and publishes them on Commit;
// Abort removes them. Nothing appears at a destination, not even a
// directory, before Commit, and Commit checks every destination before it
// publishes any. Publishing goes through safefile: a regular file (or a
// free name) is replaced by a rename; a device, a FIFO or a symbolic link
// (/dev/null, a named pipe, /dev/stdout) is written into, never replaced.
type Staged struct {
	// Dir, when set, holds the temporary files of the destinations below
	// Root (a directory on the same file system, removed by Commit and
	// Abort): for an output tree that does not exist yet. Every other
	// temporary file sits beside its destination, whose directory must
	// exist, or in the system's temporary directory when the destination
	// is written into.
	Dir, Root string
	files     []staged
}

type staged struct {
	tmp  string
	dest string
	// mode is the permission of a new file; like, when set, the file
	// whose mode (and, with owner, owner) the output keeps.
	mode  os.FileMode
	like  os.FileInfo
	owner bool
	// below: dest is inside the output directory Root, never reached
	// through a symbolic link.
	below bool
	// replace: dest is an input replaced in place; it must be a regular
	// file (or a link to one).
	replace bool
}

// Create opens a staged file that becomes dest on Commit. A destination
// below Root is an output of the output directory: no component of its
// path below Root may be a symbolic link, and a new or replaced file gets
// permission mode. Any other destination is a file the user named: an
// existing regular file there keeps its mode and owner; a new one gets
// mode. A destination staged twice is an error: one output would
// overwrite the other.
func (s *Staged) Create(dest string, mode os.FileMode) (*os.File, error) {
	f := staged{dest: dest, mode: mode, below: s.Root != "" && safefile.Within(s.Root, dest)}
	if f.below {
		if err := safefile.CheckBelow(s.Root, dest); err != nil {
			return nil, err
		}
	}
	d, err := safefile.Inspect(dest)
	if err != nil {
		return nil, err
	}
	if !f.below && d.Existing != nil && !d.Direct() {
		f.like, f.owner = d.Existing, true
	}
	return s.create(f, d)
}

// Replace opens a staged file that replaces the input file path on Commit
// (--in-place), keeping its mode and owner. path must be a regular file,
// or a symbolic link to one (written through, the link kept): a device or
// a FIFO is never replaced.
func (s *Staged) Replace(path string) (*os.File, error) {
	d, err := safefile.Inspect(path)
	if err != nil {
		return nil, err
	}
	if err := replaceable(d); err != nil {
		return nil, err
	}
	return s.create(staged{dest: path, like: d.Existing, owner: true, replace: true}, d)
}

// replaceable checks that d is a regular file, or a link to one.
func replaceable(d safefile.Dest) error {
	if d.Existing == nil {
		return fmt.Errorf("%s: no such file", d.Path)
	}
	st, err := os.Stat(d.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is %s, not a regular file: only regular files are replaced in place", d.Path, safefile.Describe(st.Mode()))
	}
	return nil
}

func (s *Staged) create(f staged, d safefile.Dest) (*os.File, error) {
	if s.Has(f.dest) {
		return nil, fmt.Errorf("%s: two outputs would be written to this file", f.dest)
	}
	dir := ""
	switch {
	case s.Dir != "" && f.below:
		dir = s.Dir
	case d.Direct():
		dir = os.TempDir() // copied into the destination: any file system
	}
	tmp, err := safefile.Temp(dir, f.dest)
	if err != nil {
		return nil, err
	}
	f.tmp = tmp.Name()
	s.files = append(s.files, f)
	return tmp, nil
}

// Has reports whether dest is staged already.
func (s *Staged) Has(dest string) bool {
	for _, f := range s.files {
		if f.dest == dest {
			return true
		}
	}
	return false
}

// Commit publishes every staged file. It first checks every destination
// (none is a directory, none below Root is reached through a link, an
// input replaced in place is still a regular file), gives each staged file
// its mode and owner, and makes the destination directories; a publish
// that still fails leaves the remaining files for Abort.
func (s *Staged) Commit() error {
	dests := make([]safefile.Dest, len(s.files))
	for i, f := range s.files {
		if f.below {
			if err := safefile.CheckBelow(s.Root, f.dest); err != nil {
				return err
			}
		}
		d, err := safefile.Inspect(f.dest)
		if err != nil {
			return err
		}
		if f.replace {
			if err := replaceable(d); err != nil {
				return err
			}
		}
		dests[i] = d
		if d.Direct() {
			continue // written into: its mode and owner stay
		}
		if f.like != nil {
			err = safefile.Keep(f.tmp, f.like, f.owner)
		} else {
			err = os.Chmod(f.tmp, f.mode)
		}
		if err != nil {
			return err
		}
	}
	for _, f := range s.files {
		if err := os.MkdirAll(filepath.Dir(f.dest), 0o755); err != nil {
			return err
		}
	}
	for len(s.files) > 0 {
		if err := safefile.Publish(s.files[0].tmp, dests[0]); err != nil {
			return err
		}
		s.files, dests = s.files[1:], dests[1:]
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
