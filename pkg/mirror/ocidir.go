package mirror

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/rehost/rehost/internal/safefile"
)

// Limits on what rehost reads whole from an OCI image layout. A layout
// travels on removable media and is treated as hostile: every size is
// checked before anything is read.
const (
	// MaxManifestSize bounds index.json, manifests and indexes: 4 MiB,
	// the limit the OCI distribution spec sets for manifests.
	MaxManifestSize = 4 << 20
	// MaxConfigSize bounds image configuration blobs, which are read
	// whole to be pushed.
	MaxConfigSize = 16 << 20
	// MaxIndexDepth bounds the nesting of indexes under a descriptor of
	// index.json (an index of indexes is depth 2).
	MaxIndexDepth = 8

	// maxLayoutFile bounds the oci-layout file.
	maxLayoutFile = 64 << 10
)

// Errors about an OCI image layout. The errors returned wrap them with the
// file or digest they are about; test for them with errors.Is.
var (
	// ErrSymlink: a symbolic link inside the layout. rehost follows none,
	// whether it reads the layout or writes it.
	ErrSymlink = errors.New("symbolic link inside an OCI layout, which rehost never follows")
	// ErrNotRegular: a layout file that is a directory, a device or a pipe.
	ErrNotRegular = errors.New("not a regular file")
	// ErrDigestMismatch: a blob whose content does not match its digest.
	ErrDigestMismatch = errors.New("content does not match its digest")
	// ErrSizeMismatch: a blob whose size is not the size its descriptor
	// declares.
	ErrSizeMismatch = errors.New("size differs from the declared size")
	// ErrTooLarge: a manifest, index or config over its limit
	// (MaxManifestSize, MaxConfigSize), declared or actual.
	ErrTooLarge = errors.New("over the size limit")
	// ErrCycle: an index that lists itself, directly or through others.
	ErrCycle = errors.New("index lists itself (a cycle)")
	// ErrTooDeep: indexes nested deeper than MaxIndexDepth.
	ErrTooDeep = errors.New("indexes nested too deep")
)

// ociDir is an OCI image layout directory, read and written without ever
// following a symbolic link inside it. Every access goes through an
// os.Root, so that nothing can reach outside the directory even if the
// layout changes while rehost uses it; and every component of a path is
// checked with Lstat first, so that a link that stays inside is refused
// too, with an error naming it. The directory itself may be a link: the
// user named it.
type ociDir struct {
	path string // as given, for messages
	root *os.Root
}

// openOCIDir opens the layout directory at p, creating it when create is
// set and it is missing.
func openOCIDir(p string, create bool) (*ociDir, error) {
	if create {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(p)
	if err != nil {
		return nil, err
	}
	return &ociDir{path: p, root: r}, nil
}

func (d *ociDir) Close() error { return d.root.Close() }

// show is the path of rel (slash-separated, relative to the layout) for
// messages.
func (d *ociDir) show(rel string) string {
	return filepath.Join(d.path, filepath.FromSlash(rel))
}

// blobPath is the layout path of a blob. A v1.Hash holds only an
// algorithm name and hex digits, so the path cannot leave blobs/.
func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// lstat checks every component of rel, refusing symbolic links and
// components that are not directories, and returns the last one's info.
// A missing component is an error that wraps fs.ErrNotExist.
func (d *ociDir) lstat(rel string) (fs.FileInfo, error) {
	parts := strings.Split(rel, "/")
	var fi fs.FileInfo
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		var err error
		fi, err = d.root.Lstat(p)
		if err != nil {
			return nil, d.pathErr("lstat", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, d.linkErr(p)
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return nil, fmt.Errorf("%s: not a directory", d.show(p))
		}
	}
	return fi, nil
}

// pathErr names the layout path in an error of the os.Root.
func (d *ociDir) pathErr(op, rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: d.show(rel), Err: err}
}

// linkErr is the refusal of the link at rel, naming where it points.
func (d *ociDir) linkErr(rel string) error {
	if to, err := d.root.Readlink(rel); err == nil {
		return fmt.Errorf("%s (a link to %s): %w", d.show(rel), Quote(to), ErrSymlink)
	}
	return fmt.Errorf("%s: %w", d.show(rel), ErrSymlink)
}

// where is the layout directory, for messages.
func (d *ociDir) where() string { return d.path }

// open opens the regular file rel for reading, and returns it with its
// size. The file is opened non-blocking (a pipe swapped in after the check
// cannot block the open) and must be the file that was checked.
func (d *ociDir) open(rel string) (io.ReadCloser, int64, error) {
	fi, err := d.lstat(rel)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %w (%s)", d.show(rel), ErrNotRegular, fi.Mode().Type())
	}
	f, err := d.root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, d.pathErr("open", rel, err)
	}
	st, err := f.Stat()
	if err == nil && (!st.Mode().IsRegular() || !os.SameFile(fi, st)) {
		err = fmt.Errorf("%s: replaced while being opened", d.show(rel))
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// mkdirs creates the directory rel and its parents inside the layout,
// refusing links and non-directories on the way.
func (d *ociDir) mkdirs(rel string) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := d.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if err := d.root.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return d.pathErr("mkdir", p, err)
			}
			if fi, err = d.root.Lstat(p); err != nil {
				return d.pathErr("lstat", p, err)
			}
		} else if err != nil {
			return d.pathErr("lstat", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return d.linkErr(p)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory", d.show(p))
		}
	}
	return nil
}

// writeAtomic writes the file rel: fill writes its content into a new
// temporary file beside it, which is synced and renamed over rel, all
// inside the os.Root (safefile.Write, rehost's one atomic write). rel is
// replaced, never written through: an existing link is refused and an
// existing hard link is left pointing at the old content. On any error
// (fill's included) the temporary file is removed and rel is left as it
// was.
func (d *ociDir) writeAtomic(rel string, fill func(w io.Writer) error) error {
	fi, err := d.lstat(rel)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %w (%s)", d.show(rel), ErrNotRegular, fi.Mode().Type())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	var fillErr error
	err = safefile.Write(d.root, rel, safefile.Options{Perm: 0o644}, func(w io.Writer) error {
		fillErr = fill(w)
		return fillErr
	})
	var pe *fs.PathError
	if err != nil && err != fillErr && errors.As(err, &pe) { //nolint:errorlint // fill's own error, by identity
		// The path within the layout, shown with the layout's.
		return d.pathErr(pe.Op, pe.Path, pe.Err)
	}
	return err
}

// writeFile writes data to rel (see writeAtomic).
func (d *ociDir) writeFile(rel string, data []byte) error {
	return d.writeAtomic(rel, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeBlob stores the blob with digest h and size (-1: unknown) that
// open reads, unless the layout holds it already (a regular file of that
// size). The content is checked against h and size before it takes the
// blob's name; ctx stops the copy.
func (d *ociDir) writeBlob(ctx context.Context, h v1.Hash, size int64, open func() (io.ReadCloser, error)) error {
	rel := blobPath(h)
	if err := d.mkdirs(path.Dir(rel)); err != nil {
		return err
	}
	fi, err := d.lstat(rel)
	switch {
	case err == nil && fi.Mode().IsRegular() && (size < 0 || fi.Size() == size):
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	hh, err := v1.Hasher(h.Algorithm)
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	return d.writeAtomic(rel, func(w io.Writer) error {
		rc, err := open()
		if err != nil {
			return fmt.Errorf("blob %s: %w", h, err)
		}
		defer rc.Close()
		n, err := io.Copy(io.MultiWriter(w, hh), ctxReader{ctx, rc})
		if err != nil {
			return fmt.Errorf("blob %s: %w", h, err)
		}
		if size >= 0 && n != size {
			return fmt.Errorf("blob %s: %d bytes, but its descriptor declares %d: %w", h, n, size, ErrSizeMismatch)
		}
		if got := hex.EncodeToString(hh.Sum(nil)); got != h.Hex {
			return fmt.Errorf("blob %s: %w (it is %s:%s)", h, ErrDigestMismatch, h.Algorithm, got)
		}
		return nil
	})
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
