package rendered

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The form of a [Draft] that rehost-helm writes before its chart: a line
// of JSON, the draft's header,
//
//	{"format":3,"draft":[{"name":"app/templates/a.yaml","line":3,"size":120},...]}
//
// then the contents of its manifests, size bytes each, one after the
// other, as they are. Contents are copied, not escaped: in JSON, the 8 MB
// draft of a chart with large CRDs took 0.1 s to write and as much to
// read, while the helper waited.

// draftHeader is the first line of a draft's form.
type draftHeader struct {
	Format int           `json:"format"`
	Draft  *[]draftEntry `json:"draft"`
}

// draftEntry is a manifest of a draft's header: its content's size
// instead of its content.
type draftEntry struct {
	Name string `json:"name"`
	Line int    `json:"line,omitempty"`
	Size int    `json:"size"`
}

// Write writes d in the form ReadDraft reads. A content that is not
// valid UTF-8 is written as the chart's JSON would hold it (each invalid
// byte as U+FFFD): a document reads the same from the draft as from the
// chart.
func (d *Draft) Write(w io.Writer) error {
	entries := make([]draftEntry, len(d.Manifests))
	contents := make([]string, len(d.Manifests))
	for i, m := range d.Manifests {
		contents[i] = asJSONReads(m.Content)
		entries[i] = draftEntry{Name: m.Name, Line: m.Line, Size: len(contents[i])}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := json.NewEncoder(bw).Encode(draftHeader{Format: d.Format, Draft: &entries}); err != nil {
		return err
	}
	for _, c := range contents {
		if _, err := bw.WriteString(c); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// asJSONReads is s as encoding/json writes it and reads it back: each
// byte that is not part of valid UTF-8 replaced by U+FFFD.
func asJSONReads(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// maxDraftGrow is as much as ReadDraft allocates before it reads.
const maxDraftGrow = 64 << 20

// errNotDraft is output that does not start with a draft of this Format.
var errNotDraft = errors.New("not a draft of this format")

// ReadDraft reads a Draft of this [Format] in the form Write writes from
// the start of r, and returns it with the number of bytes of r it takes.
// It returns an error when r does not start with a draft of this format,
// or ends within it. It may read r beyond the draft.
func ReadDraft(r io.Reader) (*Draft, int64, error) {
	dec := json.NewDecoder(r)
	var h draftHeader
	if err := dec.Decode(&h); err != nil {
		return nil, 0, err
	}
	if h.Format != Format || h.Draft == nil {
		return nil, 0, errNotDraft
	}
	var total int64
	for _, e := range *h.Draft {
		if e.Size < 0 || total+int64(e.Size) < total {
			return nil, 0, fmt.Errorf("a draft's manifest %s of %d bytes", e.Name, e.Size)
		}
		total += int64(e.Size)
	}
	rest := io.MultiReader(dec.Buffered(), r)
	var nl [1]byte
	if _, err := io.ReadFull(rest, nl[:]); err != nil || nl[0] != '\n' {
		return nil, 0, errors.New("a draft's header does not end its line")
	}
	// Read as it comes: the header's sizes allocate at most maxDraftGrow.
	var buf strings.Builder
	buf.Grow(int(min(total, maxDraftGrow)))
	if n, err := io.CopyN(&buf, rest, total); err != nil {
		return nil, 0, fmt.Errorf("a draft of %d bytes ends after %d", total, n)
	}
	all := buf.String()
	d := &Draft{Format: h.Format, Manifests: make([]Manifest, len(*h.Draft))}
	at := 0
	for i, e := range *h.Draft {
		d.Manifests[i] = Manifest{Name: e.Name, Line: e.Line, Content: all[at : at+e.Size]}
		at += e.Size
	}
	return d, dec.InputOffset() + 1 + total, nil
}
