package mirror

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// maxEntries is MaxArchiveEntries; tests lower it.
var maxEntries = MaxArchiveEntries

// tarEntry is where the data of a regular file of a tar archive is.
type tarEntry struct {
	off, size int64
	dir       bool
}

// tarIndex is a tar archive read without extracting it: the headers are
// walked once (the data skipped by seeking, never read), and each regular
// file is then read in place. It holds the files of an OCI image layout
// (fileSource) or of a docker save archive.
type tarIndex struct {
	name    string // the archive as given, for messages
	r       io.ReaderAt
	size    int64
	closer  io.Closer
	entries map[string]tarEntry // by cleaned name
}

var _ fileSource = (*tarIndex)(nil)

// indexTar walks the headers of the tar archive r of size bytes. It
// refuses, with an *EntryError naming the entry, names that are absolute
// or have a ".." component (ErrUnsafeName), links (ErrLinkEntry),
// devices, FIFOs, sparse files and unknown types (ErrSpecialEntry), two
// entries of the same name once "./" and a trailing "/" are dropped
// (ErrDuplicateEntry), data that runs past the end (ErrPastEnd), and
// more than MaxArchiveEntries entries (ErrTooManyEntries). PAX global
// headers are skipped, and "." (as "tar -C dir ." writes it) is a
// directory like any other.
func indexTar(name string, r io.ReaderAt, size int64, closer io.Closer) (*tarIndex, error) {
	t := &tarIndex{name: name, r: r, size: size, closer: closer, entries: map[string]tarEntry{}}
	sr := io.NewSectionReader(r, 0, size)
	tr := tar.NewReader(sr)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if errors.Is(err, tar.ErrInsecurePath) {
			err = nil // checked below, with the same rule for every reader
		}
		if err == io.EOF {
			if i == 0 {
				return nil, fmt.Errorf("%s: not a tar archive (no entry)", name)
			}
			return t, nil
		}
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("%s: not a tar archive: %v", name, err)
			}
			return nil, fmt.Errorf("%s: not a tar archive after %d entries (cut short?): %v", name, i, err)
		}
		bad := func(err error) error { return &EntryError{Archive: name, Entry: h.Name, Index: i, Err: err} }
		if i >= maxEntries {
			return nil, bad(fmt.Errorf("%w: more than %d", ErrTooManyEntries, maxEntries))
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg, tar.TypeDir:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, bad(fmt.Errorf("%w (to %s)", ErrLinkEntry, Quote(h.Linkname)))
		case tar.TypeChar, tar.TypeBlock:
			return nil, bad(fmt.Errorf("%w: a device", ErrSpecialEntry))
		case tar.TypeFifo:
			return nil, bad(fmt.Errorf("%w: a FIFO", ErrSpecialEntry))
		case tar.TypeGNUSparse:
			return nil, bad(fmt.Errorf("%w: a sparse file", ErrSpecialEntry))
		default:
			return nil, bad(fmt.Errorf("%w: type %s", ErrSpecialEntry, Quote(string(h.Typeflag))))
		}
		for k := range h.PAXRecords {
			if strings.HasPrefix(k, "GNU.sparse.") {
				return nil, bad(fmt.Errorf("%w: a sparse file", ErrSpecialEntry))
			}
		}
		clean, ok := cleanEntryName(h.Name)
		if !ok {
			return nil, bad(ErrUnsafeName)
		}
		if _, dup := t.entries[clean]; dup {
			return nil, bad(ErrDuplicateEntry)
		}
		e := tarEntry{dir: h.Typeflag == tar.TypeDir}
		if !e.dir {
			if e.off, err = sr.Seek(0, io.SeekCurrent); err != nil {
				return nil, err
			}
			e.size = h.Size
			if e.size > size-e.off {
				return nil, bad(fmt.Errorf("%w: %d bytes from offset %d, and the archive has %d", ErrPastEnd, h.Size, e.off, size))
			}
		}
		t.entries[clean] = e
	}
}

// cleanEntryName is the name of an entry as a layout path: "./" prefixes
// and a trailing "/" dropped, "a//b" and "a/./b" as "a/b"; ok is false
// for absolute names, names with a ".." component, and empty ones.
func cleanEntryName(n string) (string, bool) {
	if n == "" || strings.HasPrefix(n, "/") || strings.Contains(n, "\x00") {
		return "", false
	}
	for _, c := range strings.Split(n, "/") {
		if c == ".." {
			return "", false
		}
	}
	return path.Clean(n), true
}

func (t *tarIndex) has(rel string) bool {
	_, ok := t.entries[rel]
	return ok
}

func (t *tarIndex) open(rel string) (io.ReadCloser, int64, error) {
	e, ok := t.entries[rel]
	switch {
	case !ok:
		return nil, 0, &fs.PathError{Op: "open", Path: t.show(rel), Err: fs.ErrNotExist}
	case e.dir:
		return nil, 0, fmt.Errorf("%s: %w (a directory)", t.show(rel), ErrNotRegular)
	}
	return io.NopCloser(io.NewSectionReader(t.r, e.off, e.size)), e.size, nil
}

func (t *tarIndex) show(rel string) string { return t.name + " (entry " + rel + ")" }

func (t *tarIndex) where() string { return t.name }

func (t *tarIndex) Close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer.Close()
}
