package mirror

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rehost/rehost/internal/bytesize"
)

// The files of an archive FILE: FILE itself, or its parts FILE.part000,
// FILE.part001, … (three digits, more past 999), and the checksum file
// FILE.sha256, in sha256sum's format, listing them by their names in the
// same folder.

// partName is the path of part i of the archive at path.
func partName(path string, i int) string { return fmt.Sprintf("%s.part%03d", path, i) }

// checksumName is the path of the checksum file of the archive at path.
func checksumName(path string) string { return path + ".sha256" }

// partNumber is the number of a part's base name ("bundle.tar.part012"),
// for the archive's base name base; ok is false for any other name.
func partNumber(name, base string) (int, bool) {
	digits, ok := strings.CutPrefix(name, base+".part")
	if !ok || len(digits) < 3 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || (len(digits) > 3 && digits[0] == '0') || fmt.Sprintf("%03d", n) != digits {
		return 0, false
	}
	return n, true
}

// CheckProgress is how far ImportArchive has come checking the files of
// an archive against its checksum file, before it reads anything else.
type CheckProgress struct {
	// Checksums is the checksum file.
	Checksums string
	// Bytes and Total count the bytes checked and to check.
	Bytes, Total int64
	// Checked and Files count the files (parts, or the archive) checked
	// and to check.
	Checked, Files int
	// File, when set, is the file just checked (it matches).
	File string
}

// PartReporter is implemented by Reporters that follow the files of an
// archive: the check of its parts before ImportArchive reads them, and
// the parts ExportArchive completes. A Mirror calls it only if its
// Reporter implements it.
type PartReporter interface {
	// CheckProgress reports the check of the parts, every few megabytes
	// and once per file checked (File set).
	CheckProgress(p CheckProgress)
	// PartWritten says that ExportArchive completed a file of the
	// archive: a part, the archive itself, or its checksum file, of
	// size bytes.
	PartWritten(path string, size int64)
}

// archiveFile is one file of an archive, checked and open for reading.
type archiveFile struct {
	path string
	size int64
	off  int64 // where it starts in the archive
	f    *os.File
}

// archiveFiles are the files of an archive, read as one (io.ReaderAt).
type archiveFiles struct {
	path   string // as given
	files  []archiveFile
	size   int64
	listed bool // checked against a checksum file
}

func (a *archiveFiles) Close() error {
	var errs []error
	for _, f := range a.files {
		if f.f != nil {
			errs = append(errs, f.f.Close())
		}
	}
	return errors.Join(errs...)
}

// ReadAt reads the concatenation of the files.
func (a *archiveFiles) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset", a.path)
	}
	n := 0
	i := sort.Search(len(a.files), func(i int) bool { return a.files[i].off+a.files[i].size > off })
	for n < len(p) && i < len(a.files) {
		f := a.files[i]
		want := min(int64(len(p)-n), f.off+f.size-off)
		m, err := f.f.ReadAt(p[n:n+int(want)], off-f.off)
		n += m
		off += int64(m)
		if err == io.EOF && int64(m) < want {
			// The file shrank after it was checked.
			return n, fmt.Errorf("%s: %w (it changed after it was checked)", f.path, io.ErrUnexpectedEOF)
		}
		if err != nil && err != io.EOF {
			return n, err
		}
		if off >= f.off+f.size {
			i++
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// openArchive finds the files of the archive at path and checks them
// against its checksum file: a missing, unlisted, altered or truncated
// file fails with a *PartError (every such file, joined), a malformed
// checksum file or one naming files outside the archive's folder with a
// *ChecksumFileError. A single file without a checksum file is accepted
// (notice says so); parts without one are not. progress is told how the
// check goes. The files stay open, as checked.
func openArchive(ctx context.Context, path string, progress func(CheckProgress)) (*archiveFiles, string, error) {
	a := &archiveFiles{path: path}
	files, notice, err := a.openAll(ctx, path, progress)
	if err != nil {
		a.Close()
	}
	return files, notice, err
}

func (a *archiveFiles) openAll(ctx context.Context, path string, progress func(CheckProgress)) (*archiveFiles, string, error) {
	sums := checksumName(path)
	raw, err := readChecksums(sums)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(path); err == nil {
			if err := a.open(path, true); err != nil {
				return nil, "", err
			}
			return a, fmt.Sprintf("%s has no checksum file %s: only the digests of its blobs check it", path, sums), nil
		}
		if _, err := os.Lstat(partName(path, 0)); err == nil {
			return nil, "", &ChecksumFileError{File: sums, Reason: fmt.Sprintf("missing: the parts of an archive (%s, …) are read only with the checksum file written with them, which says that they are all there and whole", partName(path, 0))}
		}
		return nil, "", &NoArchiveError{Path: path}
	case err != nil:
		return nil, "", err
	}
	want, err := parseChecksums(sums, raw, filepath.Base(path))
	if err != nil {
		return nil, "", err
	}
	a.listed = true
	dir := filepath.Dir(path)
	var errs []error
	for _, w := range want {
		p := filepath.Join(dir, w.name)
		if err := a.open(p, p == path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = ErrPartMissing
			}
			errs = append(errs, &PartError{Part: p, Checksums: sums, Want: w.sum, Err: err})
		}
	}
	if len(want) > 1 || want[0].name != filepath.Base(path) {
		errs = append(errs, unlistedParts(path, sums, len(want))...)
	}
	if len(errs) > 0 {
		return nil, "", errors.Join(errs...)
	}
	if err := a.check(ctx, sums, want, progress); err != nil {
		return nil, "", err
	}
	return a, "", nil
}

// open opens the file p of the archive and appends it. Only the path the
// user named (named) may be a symbolic link; the files found from it must
// be regular files.
func (a *archiveFiles) open(p string, named bool) error {
	stat := os.Lstat
	if named {
		stat = os.Stat
	}
	fi, err := stat(p)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: %w", p, ErrSymlink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %w (%s)", p, ErrNotRegular, fi.Mode().Type())
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && (!st.Mode().IsRegular() || !os.SameFile(fi, st)) {
		err = fmt.Errorf("%s: replaced while being opened", p)
	}
	if err != nil {
		f.Close()
		return err
	}
	a.files = append(a.files, archiveFile{path: p, size: st.Size(), off: a.size, f: f})
	a.size += st.Size()
	return nil
}

// unlistedParts are the errors for the files beside the archive named
// like its parts that the checksum file does not list (it lists n).
func unlistedParts(path, sums string, n int) []error {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, e := range entries {
		if i, ok := partNumber(e.Name(), filepath.Base(path)); ok && i >= n {
			errs = append(errs, &PartError{Part: filepath.Join(filepath.Dir(path), e.Name()), Checksums: sums, Err: ErrPartUnlisted})
		}
	}
	return errs
}

// readChecksums reads the checksum file: a regular file (not a link), at
// most maxChecksumFile bytes.
func readChecksums(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &ChecksumFileError{File: p, Reason: ErrSymlink.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, &ChecksumFileError{File: p, Reason: fmt.Sprintf("%v (%s)", ErrNotRegular, fi.Mode().Type())}
	}
	if fi.Size() > maxChecksumFile {
		return nil, &ChecksumFileError{File: p, Reason: fmt.Sprintf("%s, %v of %s", bytesize.Fixed(fi.Size()), ErrTooLarge, bytesize.Fixed(maxChecksumFile))}
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxChecksumFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxChecksumFile {
		return nil, &ChecksumFileError{File: p, Reason: fmt.Sprintf("grew while being read, %v of %s", ErrTooLarge, bytesize.Fixed(maxChecksumFile))}
	}
	return b, nil
}

// listed is a file the checksum file lists.
type listed struct {
	name string // base name, in the archive's folder
	sum  string // lower-case hex
}

// parseChecksums parses a checksum file in sha256sum's format ("HEX  NAME"
// or "HEX *NAME" lines) for the archive whose base name is base: it must
// list either base alone or its parts base.part000 … without a gap, each
// once, by a name in the archive's folder. They are returned in order.
func parseChecksums(file string, raw []byte, base string) ([]listed, error) {
	var out []listed
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), maxChecksumFile)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		bad := func(format string, a ...any) error {
			return &ChecksumFileError{File: file, Line: line, Reason: fmt.Sprintf(format, a...)}
		}
		sum, name, ok := strings.Cut(l, " ")
		if !ok || len(sum) != sha256.Size*2 || (!strings.HasPrefix(name, " ") && !strings.HasPrefix(name, "*")) {
			return nil, bad("not a sha256sum line (%s): want a SHA-256 in hex, two spaces and a file name", Quote(l))
		}
		if _, err := hex.DecodeString(sum); err != nil {
			return nil, bad("not a SHA-256 in hex: %s", Quote(sum))
		}
		name = name[1:]
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || filepath.Base(name) != name {
			return nil, bad("names %s, which is not a file of the archive's folder: a checksum file lists only the archive's files, by their names beside it", Quote(name))
		}
		if name != base {
			if _, ok := partNumber(name, base); !ok {
				return nil, bad("names %s, which is neither %s nor one of its parts (%s, …)", Quote(name), base, partName(base, 0))
			}
		}
		if prev, ok := seen[name]; ok {
			return nil, bad("lists %s again (line %d lists it)", Quote(name), prev)
		}
		seen[name] = line
		out = append(out, listed{name: name, sum: strings.ToLower(sum)})
	}
	if err := sc.Err(); err != nil {
		return nil, &ChecksumFileError{File: file, Reason: err.Error()}
	}
	if len(out) == 0 {
		return nil, &ChecksumFileError{File: file, Reason: "lists no file"}
	}
	if len(out) > MaxParts {
		return nil, &ChecksumFileError{File: file, Reason: fmt.Sprintf("lists %d files, more than the %d parts an archive may have", len(out), MaxParts)}
	}
	if _, ok := seen[base]; ok {
		if len(out) > 1 {
			return nil, &ChecksumFileError{File: file, Reason: fmt.Sprintf("lists both %s and parts of it: one or the other", base)}
		}
		return out, nil
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := partNumber(out[i].name, base)
		b, _ := partNumber(out[j].name, base)
		return a < b
	})
	for i, l := range out {
		if n, _ := partNumber(l.name, base); n != i {
			return nil, &ChecksumFileError{File: file, Line: seen[l.name], Reason: fmt.Sprintf("lists %s but no %s: the parts must be numbered from %s without a gap", l.name, filepath.Base(partName(base, i)), filepath.Base(partName(base, 0)))}
		}
	}
	return out, nil
}

// checkEvery is how many bytes go by between two progress reports while
// files are checked.
const checkEvery = 16 << 20

// check hashes every file of a against want (in the same order), a few
// at a time, and fails with every file that does not match.
func (a *archiveFiles) check(ctx context.Context, sums string, want []listed, progress func(CheckProgress)) error {
	var (
		done    atomic.Int64
		mu      sync.Mutex
		checked int
		errs    = make([]error, len(a.files))
		next    = make(chan int)
		wg      sync.WaitGroup
	)
	report := func(file string) {
		mu.Lock()
		defer mu.Unlock()
		if file != "" {
			checked++
		}
		progress(CheckProgress{Checksums: sums, Bytes: done.Load(), Total: a.size, Checked: checked, Files: len(a.files), File: file})
	}
	report("")
	workers := min(runtime.GOMAXPROCS(0), 4, len(a.files))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for i := range next {
				f := a.files[i]
				h := sha256.New()
				var since int64
				r := io.NewSectionReader(f.f, 0, f.size)
				var err error
				for err == nil {
					if err = ctx.Err(); err != nil {
						break
					}
					var n int
					n, err = r.Read(buf)
					h.Write(buf[:n])
					done.Add(int64(n))
					if since += int64(n); since >= checkEvery {
						since = 0
						report("")
					}
				}
				if err == io.EOF {
					err = nil
				}
				got := hex.EncodeToString(h.Sum(nil))
				switch {
				case err != nil:
					errs[i] = &PartError{Part: f.path, Checksums: sums, Want: want[i].sum, Err: err}
				case got != want[i].sum:
					errs[i] = &PartError{Part: f.path, Checksums: sums, Want: want[i].sum, Got: got, Err: ErrPartMismatch}
				default:
					report(f.path)
				}
			}
		}()
	}
	for i := range a.files {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}
