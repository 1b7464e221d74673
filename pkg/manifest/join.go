package manifest

import (
	"bytes"
	"io"
)

// JoinWriter writes several streams to one writer as a single YAML stream:
// before each stream after the first it ends an unterminated last line and
// adds a "---" separator, unless the stream starts with one itself.
type JoinWriter struct {
	w       io.Writer
	last    byte // last byte written, 0 when nothing was
	pending bool // a separator is due before the next content
}

// NewJoinWriter returns a JoinWriter writing to w.
func NewJoinWriter(w io.Writer) *JoinWriter { return &JoinWriter{w: w} }

// Next marks the start of another stream.
func (j *JoinWriter) Next() { j.pending = j.last != 0 }

// Write writes stream bytes.
func (j *JoinWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n := len(p)
	if j.pending {
		j.pending = false
		// A byte order mark only belongs at the start of the stream.
		p = bytes.TrimPrefix(p, bom)
		if len(p) == 0 {
			j.pending = true
			return n, nil
		}
		var sep []byte
		if j.last != '\n' {
			sep = append(sep, '\n')
		}
		if !isMarker(p, "---") {
			sep = append(sep, "---\n"...)
		}
		if _, err := j.w.Write(sep); err != nil {
			return 0, err
		}
	}
	j.last = p[len(p)-1]
	if _, err := j.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}
