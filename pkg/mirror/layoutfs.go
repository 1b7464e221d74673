package mirror

import (
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/rehost/rehost/internal/bytesize"
)

// fileSource is where the files of an OCI image layout are read from: a
// directory (ociDir) or a tar archive (tarIndex). Paths are
// slash-separated and relative to the layout.
type fileSource interface {
	// open opens the regular file rel and returns it with its size; a
	// link or any other kind of file is refused (ErrSymlink,
	// ErrNotRegular), a missing one is an error wrapping fs.ErrNotExist.
	open(rel string) (io.ReadCloser, int64, error)
	// show is rel as messages name it.
	show(rel string) string
	// where is the layout as messages name it.
	where() string
	Close() error
}

// layoutFS reads the files of a layout from its source, bounded and
// checked: whole files only up to a limit checked before reading, blobs
// against their declared size and their digest.
type layoutFS struct{ fileSource }

// readFile reads the file rel whole; it must be at most max bytes, which
// is checked before reading.
func (d layoutFS) readFile(rel string, max int64) ([]byte, error) {
	f, size, err := d.open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > max {
		return nil, fmt.Errorf("%s: %s, %w of %s", d.show(rel), bytesize.Fixed(size), ErrTooLarge, bytesize.Fixed(max))
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: d.show(rel), Err: err}
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: grew while being read, %w of %s", d.show(rel), ErrTooLarge, bytesize.Fixed(max))
	}
	return b, nil
}

// readBlob reads the blob of desc whole, without checking its digest (see
// verify): its declared size must be at most max, and the file that size.
func (d layoutFS) readBlob(desc v1.Descriptor, max int64) ([]byte, error) {
	rel := blobPath(desc.Digest)
	if desc.Size < 0 || desc.Size > max {
		return nil, fmt.Errorf("%s: declared size %d bytes is %w of %s", d.show(rel), desc.Size, ErrTooLarge, bytesize.Fixed(max))
	}
	f, size, err := d.open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size != desc.Size {
		return nil, fmt.Errorf("%s: %d bytes, but its descriptor declares %d: %w", d.show(rel), size, desc.Size, ErrSizeMismatch)
	}
	b := make([]byte, desc.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w (reading %d bytes: %v)", d.show(rel), ErrSizeMismatch, desc.Size, err)
	}
	return b, nil
}

// verify checks that b is the content of the blob with digest h.
func (d layoutFS) verify(h v1.Hash, b []byte) error {
	hh, err := v1.Hasher(h.Algorithm)
	if err != nil {
		return fmt.Errorf("%s: %w", d.show(blobPath(h)), err)
	}
	hh.Write(b)
	if got := hex.EncodeToString(hh.Sum(nil)); got != h.Hex {
		return fmt.Errorf("%s: %w (it is %s:%s)", d.show(blobPath(h)), ErrDigestMismatch, h.Algorithm, got)
	}
	return nil
}

// readVerified reads the blob of desc whole and checks its digest.
func (d layoutFS) readVerified(desc v1.Descriptor, max int64) ([]byte, error) {
	b, err := d.readBlob(desc, max)
	if err != nil {
		return nil, err
	}
	if err := d.verify(desc.Digest, b); err != nil {
		return nil, err
	}
	return b, nil
}

// statBlob checks that the blob of desc is a regular file of the declared
// size, without reading it.
func (d layoutFS) statBlob(desc v1.Descriptor) error {
	f, size, err := d.open(blobPath(desc.Digest))
	if err != nil {
		return err
	}
	f.Close()
	if size != desc.Size {
		return fmt.Errorf("%s: %d bytes, but its descriptor declares %d: %w", d.show(blobPath(desc.Digest)), size, desc.Size, ErrSizeMismatch)
	}
	return nil
}

// openBlob streams the blob of desc. The size is checked before reading;
// the digest as the content goes by: the reader fails instead of
// returning io.EOF when it does not match.
func (d layoutFS) openBlob(desc v1.Descriptor) (io.ReadCloser, error) {
	rel := blobPath(desc.Digest)
	hh, err := v1.Hasher(desc.Digest.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.show(rel), err)
	}
	f, size, err := d.open(rel)
	if err != nil {
		return nil, err
	}
	if size != desc.Size {
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, but its descriptor declares %d: %w", d.show(rel), size, desc.Size, ErrSizeMismatch)
	}
	return &verifyingReader{f: f, r: io.LimitReader(f, desc.Size+1), h: hh, want: desc.Digest, size: desc.Size, name: d.show(rel)}, nil
}

// verifyingReader reads a blob and fails at its end unless it has the
// declared size and digest.
type verifyingReader struct {
	f    io.Closer
	r    io.Reader
	h    hash.Hash
	want v1.Hash
	size int64
	n    int64
	name string
	err  error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.size {
		v.err = fmt.Errorf("%s: longer than the %d bytes its descriptor declares: %w", v.name, v.size, ErrSizeMismatch)
		return 0, v.err
	}
	// The digest is checked with the read that reaches the declared size,
	// and the last bytes are withheld when it does not match: a reader
	// that wants exactly that many bytes (an HTTP request of that
	// Content-Length) never asks for the end, and a registry that got the
	// whole body could answer before the transport reports the error.
	if v.n == v.size && n > 0 || err == io.EOF && v.n != v.size {
		switch got := hex.EncodeToString(v.h.Sum(nil)); {
		case v.n != v.size:
			v.err = fmt.Errorf("%s: %d bytes, but its descriptor declares %d: %w", v.name, v.n, v.size, ErrSizeMismatch)
		case got != v.want.Hex:
			v.err = fmt.Errorf("%s: %w (it is %s:%s)", v.name, ErrDigestMismatch, v.want.Algorithm, got)
		}
		if v.err != nil {
			return 0, v.err
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.f.Close() }
