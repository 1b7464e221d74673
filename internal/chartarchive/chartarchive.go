// Package chartarchive reads the entries of a packaged Helm chart (.tgz)
// by the names Helm's loader gives them, and refuses an archive that
// Helm's loader would read as something other than one chart whose every
// file is in it once: helm.sh/helm/v3/pkg/chart/loader drops the first
// component of every path, whatever it is, so an archive with the
// directories a/ and b/ is read as one chart made of both, each
// Chart.yaml's fields over the previous one's, while a reader that takes
// the first Chart.yaml sees another chart. pkg/helm, pkg/mirror and
// pkg/app read packaged charts through it, so that all agree with Helm.
package chartarchive

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// ErrAmbiguous is wrapped by the error for an archive that Helm's loader
// would read other than as one chart whose files are each in it once.
var ErrAmbiguous = errors.New("a packaged chart Helm would not read as it appears")

// AmbiguousError is an archive with more than one top-level directory, or
// a file twice.
type AmbiguousError struct {
	// In is the packaged subchart the problem is in ("charts/db.tgz"),
	// "" for the archive itself.
	In string
	// Dirs are the first two top-level directories, when there are two.
	Dirs []string
	// Duplicate is a file the archive holds twice, by its name below the
	// top-level directory ("templates/app.yaml"), when Dirs is empty.
	Duplicate string
}

func (e *AmbiguousError) Error() string {
	var msg string
	if len(e.Dirs) >= 2 {
		msg = fmt.Sprintf("two top-level directories, %s and %s: Helm's loader reads every top-level directory as the same chart (each Chart.yaml's fields over the previous one's), so its name and version are not what its first Chart.yaml says", strconv.Quote(e.Dirs[0]), strconv.Quote(e.Dirs[1]))
	} else {
		msg = fmt.Sprintf("%s twice: Helm's loader reads both (the last one's fields, or template, win)", strconv.Quote(e.Duplicate))
	}
	if e.In != "" {
		msg = e.In + ": " + msg
	}
	return msg
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// Names gives the entries of one archive the names Helm's loader gives
// them, and finds a second top-level directory or a file twice. The zero
// value is ready to use.
type Names struct {
	top  string
	seen map[string]bool
}

// Add returns the name Helm's loader gives the entry h: its path below
// the archive's top-level directory, "/"-separated and cleaned. ok is
// false for an entry the loader skips (a directory, a PAX header) or
// refuses itself (an absolute path, one that leaves the chart, a file at
// the top level): their errors are the loader's to give. err is an
// *AmbiguousError for an entry under a second top-level directory, or a
// file added before.
func (n *Names) Add(h *tar.Header) (name string, ok bool, err error) {
	if h.FileInfo().IsDir() || h.Typeflag == tar.TypeXGlobalHeader || h.Typeflag == tar.TypeXHeader {
		return "", false, nil
	}
	// As helm.sh/helm/v3/pkg/chart/loader LoadArchiveFiles does.
	delimiter := "/"
	if strings.ContainsRune(h.Name, '\\') {
		delimiter = "\\"
	}
	parts := strings.Split(h.Name, delimiter)
	name = strings.ReplaceAll(strings.Join(parts[1:], delimiter), delimiter, "/")
	if path.IsAbs(name) {
		return "", false, nil
	}
	name = path.Clean(name)
	if name == "." || strings.HasPrefix(name, "..") {
		return "", false, nil
	}
	if n.seen == nil {
		n.top, n.seen = parts[0], map[string]bool{}
	}
	if parts[0] != n.top {
		return "", false, &AmbiguousError{Dirs: []string{n.top, parts[0]}}
	}
	if n.seen[name] {
		return "", false, &AmbiguousError{Duplicate: name}
	}
	n.seen[name] = true
	return name, true, nil
}

// TooLargeError is an archive that unpacks to more than the limit Check
// was given.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the chart unpacks to more than %d bytes", e.Limit)
}

// IsSubchart says whether a file of a chart, by its name in the chart, is
// a packaged subchart Helm's loader reads: a .tgz in a charts/ directory.
func IsSubchart(name string) bool {
	dir, file := path.Split(name)
	return strings.HasSuffix(file, ".tgz") && path.Base(dir) == "charts"
}

// Check reads the packaged chart from r (gzipped tar) and returns an
// *AmbiguousError when it, or a packaged subchart in it at any depth, has
// more than one top-level directory or a file twice. It unpacks at most
// limit bytes, the subcharts included (*TooLargeError past it). An
// archive that is not gzip or tar is an error as the readers give it; a
// subchart that is not is skipped (Helm's loader reports it).
func Check(r io.Reader, limit int64) error {
	b := &budget{left: limit, err: &TooLargeError{Limit: limit}}
	return check(r, "", b)
}

// budget is what may still be unpacked.
type budget struct {
	left int64
	err  *TooLargeError
}

// reader counts what is read from r against the budget.
type reader struct {
	r io.Reader
	b *budget
}

func (r reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b.left -= int64(n)
	if r.b.left < 0 {
		return n, r.b.err
	}
	return n, err
}

func check(r io.Reader, in string, b *budget) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(reader{zr, b})
	var names Names
	for {
		h, err := tr.Next()
		if b.left < 0 {
			return b.err
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name, ok, err := names.Add(h)
		if err != nil {
			var amb *AmbiguousError
			if errors.As(err, &amb) {
				amb.In = in
			}
			return err
		}
		if !ok || !IsSubchart(name) {
			continue
		}
		sub := name
		if in != "" {
			sub = in + "/" + name
		}
		// A subchart that is not an archive is the loader's to report.
		var amb *AmbiguousError
		if err := check(tr, sub, b); errors.As(err, &amb) || b.left < 0 {
			return err
		}
	}
}
