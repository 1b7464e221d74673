package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// FS is a directory that Write writes into: a Dir, or an *os.Root, whose
// every access stays inside it even if the tree changes meanwhile (package
// mirror writes OCI layouts, which are untrusted, so).
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	Lstat(name string) (fs.FileInfo, error)
}

// Dir is a directory of the file system, as an FS; names are
// slash-separated and relative to it.
type Dir string

func (d Dir) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

// OpenFile is os.OpenFile of name in d.
func (d Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(d.path(name), flag, perm)
}

// Rename is os.Rename of names in d.
func (d Dir) Rename(oldname, newname string) error {
	return os.Rename(d.path(oldname), d.path(newname))
}

// Remove is os.Remove of name in d.
func (d Dir) Remove(name string) error { return os.Remove(d.path(name)) }

// Lstat is os.Lstat of name in d.
func (d Dir) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(d.path(name)) }

// Options tune Write.
type Options struct {
	// Perm is the mode the file is created with, before the umask; zero
	// means 0644.
	Perm fs.FileMode
	// NoReplace refuses to rename over a name that exists by then: the
	// error wraps fs.ErrExist, and nothing is written.
	NoReplace bool
	// SyncDir syncs the directory after the rename too, so that the new
	// name survives a crash (errors ignored: not every system syncs
	// directories).
	SyncDir bool
}

// Write writes the file name (slash-separated, relative to fsys)
// atomically: fill writes the content into a temporary file beside it
// (".NAME.RANDOM.tmp", created exclusively), which is synced to disk,
// closed and renamed over name. A reader sees the old content or the new,
// whole, never a part, even after a crash. name is replaced, never written
// through: a link or hard link there is replaced, its target untouched.
// On any error (fill's included) the temporary file is removed and name
// is left as it was. Errors of the file system are *fs.PathError values
// naming the path within fsys.
func Write(fsys FS, name string, o Options, fill func(w io.Writer) error) (err error) {
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	dir, base := path.Split(name)
	tmp := dir + "." + base + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return pathError("create", tmp, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			fsys.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return pathError("sync", tmp, err)
	}
	if err = f.Close(); err != nil {
		return pathError("close", tmp, err)
	}
	if o.NoReplace {
		if _, lerr := fsys.Lstat(name); lerr == nil {
			err = &fs.PathError{Op: "rename", Path: name, Err: fs.ErrExist}
			return err
		}
	}
	if err = fsys.Rename(tmp, name); err != nil {
		return pathError("rename", name, err)
	}
	if o.SyncDir {
		syncDir(fsys, dir)
	}
	return nil
}

// pathError is err about name (in an FS), as an *fs.PathError.
func pathError(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// syncDir syncs the directory dir of fsys ("" is fsys itself), ignoring
// errors.
func syncDir(fsys FS, dir string) {
	if dir = path.Clean(dir); dir == "" {
		dir = "."
	}
	if d, err := fsys.OpenFile(dir, os.O_RDONLY, 0); err == nil {
		d.Sync()
		d.Close()
	}
}
