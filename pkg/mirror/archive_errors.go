package mirror

import (
	"errors"
	"fmt"
	"strings"
)

// Limits on the archives ImportArchive reads. An archive travels on
// removable media and is treated as hostile, like a layout.
const (
	// MinPartSize is the smallest part ExportArchive writes: 1 MiB.
	MinPartSize = 1 << 20
	// MaxArchiveEntries bounds the entries of a tar archive: an OCI
	// layout holds a few per image (manifest, config, layers).
	MaxArchiveEntries = 100_000
	// MaxParts bounds the parts of an archive (each is kept open while
	// the archive is read).
	MaxParts = 10_000

	// maxChecksumFile bounds the checksum file (a line per part).
	maxChecksumFile = 4 << 20
)

// Errors about the entries of a tar archive, wrapped in an *EntryError
// naming the entry; test for them with errors.Is.
var (
	// ErrUnsafeName: an entry whose name is absolute or has a ".."
	// component, which would land outside the folder it is extracted in.
	ErrUnsafeName = errors.New(`name is absolute or has a ".." component`)
	// ErrLinkEntry: a symbolic or hard link, which rehost never follows.
	ErrLinkEntry = errors.New("a link, which rehost never follows")
	// ErrSpecialEntry: a device, a FIFO, a sparse file or an entry of an
	// unknown type: an OCI layout holds regular files and directories.
	ErrSpecialEntry = errors.New("not a regular file or a directory")
	// ErrDuplicateEntry: a second entry with the name of an earlier one
	// ("./" and a trailing "/" aside): which one counts would depend on
	// the reader.
	ErrDuplicateEntry = errors.New("a second entry of the same name")
	// ErrPastEnd: an entry whose data runs past the end of the archive.
	ErrPastEnd = errors.New("its data runs past the end of the archive")
	// ErrTooManyEntries: more than MaxArchiveEntries entries.
	ErrTooManyEntries = errors.New("too many entries")
)

// EntryError is an entry of a tar archive refused by ImportArchive.
type EntryError struct {
	// Archive is the archive as it was given.
	Archive string
	// Entry is the entry's name as the archive spells it (untrusted).
	Entry string
	// Index is the entry's position, from 0.
	Index int
	// Err is why: ErrUnsafeName, ErrLinkEntry, ErrSpecialEntry,
	// ErrDuplicateEntry, ErrPastEnd or ErrTooManyEntries, wrapped with
	// details.
	Err error
}

// Error is "ARCHIVE: entry NAME: reason", the name quoted (Quote).
func (e *EntryError) Error() string {
	return fmt.Sprintf("%s: entry %s: %v", e.Archive, Quote(e.Entry), e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Errors about the parts of an archive, wrapped in a *PartError.
var (
	// ErrPartMissing: a part the checksum file lists is not there.
	ErrPartMissing = errors.New("missing")
	// ErrPartMismatch: a part whose content is not what the checksum
	// file says: damaged, truncated, or in the place of another.
	ErrPartMismatch = errors.New("content does not match its checksum")
	// ErrPartUnlisted: a file named like a part that the checksum file
	// does not list (a left-over, or a checksum file cut short).
	ErrPartUnlisted = errors.New("not listed in the checksum file")
)

// PartError is a file of an archive that fails its check against the
// archive's checksum file (FILE.sha256): nothing of the archive is read.
type PartError struct {
	// Part is the file's path: FILE.part001, or FILE.
	Part string
	// Checksums is the checksum file's path.
	Checksums string
	// Want is the SHA-256 the checksum file lists (hex), Got the one
	// the file has ("" when it was not read).
	Want, Got string
	// Err is ErrPartMissing, ErrPartMismatch, ErrPartUnlisted, or what
	// reading the file failed with.
	Err error
}

func (e *PartError) Error() string {
	switch {
	case errors.Is(e.Err, ErrPartMismatch):
		return fmt.Sprintf("%s: %v: it is sha256:%s, %s lists sha256:%s (damaged, truncated, or another part in its place)", e.Part, e.Err, e.Got, e.Checksums, e.Want)
	case errors.Is(e.Err, ErrPartUnlisted):
		return fmt.Sprintf("%s: %v %s (a left-over, or a checksum file cut short)", e.Part, e.Err, e.Checksums)
	case errors.Is(e.Err, ErrPartMissing):
		return fmt.Sprintf("%s: %v (%s lists it)", e.Part, e.Err, e.Checksums)
	}
	return fmt.Sprintf("%s: %v", e.Part, e.Err)
}

func (e *PartError) Unwrap() error { return e.Err }

// ChecksumFileError is a checksum file (FILE.sha256) that cannot be used:
// malformed, or naming a file outside the archive's folder or not of the
// archive.
type ChecksumFileError struct {
	// File is the checksum file's path.
	File string
	// Line is the line at fault, from 1; 0 for the file as a whole.
	Line int
	// Reason says what is wrong.
	Reason string
}

func (e *ChecksumFileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// NoArchiveError: neither the archive, nor its parts, nor its checksum
// file exist.
type NoArchiveError struct {
	// Path is the archive as it was given.
	Path string
}

func (e *NoArchiveError) Error() string {
	return fmt.Sprintf("no archive %s: neither the file, nor its parts (%s), nor its checksum file (%s) exist", e.Path, partName(e.Path, 0), checksumName(e.Path))
}

// ExistsError is the refusal to overwrite an archive: ExportArchive
// writes a new one only where none of its files exist, unless
// ArchiveOptions.Force.
type ExistsError struct {
	// Paths are the files of an archive that exist.
	Paths []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s: already there; an archive is never overwritten unless asked to", strings.Join(e.Paths, ", "))
}
