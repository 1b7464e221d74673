package rendered

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Write writes d in the form ReadDraft reads.
func (d *Draft) Write(w io.Writer) error {
	entries := make([]draftEntry, len(d.Manifests))
	for i, m := range d.Manifests {
		entries[i] = draftEntry{Name: m.Name, Line: m.Line, Size: len(m.Content)}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := json.NewEncoder(bw).Encode(draftHeader{Format: d.Format, Draft: &entries}); err != nil {
		return err
	}
	for _, m := range d.Manifests {
		if _, err := bw.WriteString(m.Content); err != nil {
			return err
		}
	}
	return bw.Flush()
}

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
	// Read as it comes, not allocated from the header's sizes.
	var buf bytes.Buffer
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
