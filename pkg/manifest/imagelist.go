package manifest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
)

// ImageListName is the name of sealer's hand-kept image list file: a file
// with this name in an input directory is read as an image list.
const ImageListName = "imageList"

// OriginImageList is the Location.Origin of the images of an image list.
const OriginImageList = "imageList"

// ReadImageList adds the images of an image list (sealer's imageList
// format: one reference a line, which may be quoted; blank lines are
// skipped, and "#" at the start of a line or after white space starts a
// comment) to the image set, as if found at their lines of name, with
// Origin OriginImageList. Invalid references are errors naming the file
// and the line, every line read; with Config.SkipInvalid they are
// warnings, and the line is skipped.
func (rw *Rewriter) ReadImageList(r io.Reader, name string) error {
	rw.mu.Lock()
	rw.lists++
	rw.mu.Unlock()
	var errs []error
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		v := sc.Text()
		if i := strings.Index(v, "#"); i >= 0 && (i == 0 || v[i-1] == ' ' || v[i-1] == '\t') {
			v = v[:i] // a comment: the whole line, or after white space
		}
		// sealer trims quotes around a reference ("nginx:1.25", 'nginx:1.25');
		// no reference contains one.
		if v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), `"'`)); v == "" {
			continue
		}
		if err := rw.Add(v, rewrite.Location{File: name, Line: line, Origin: OriginImageList}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return errors.Join(errs...)
}
