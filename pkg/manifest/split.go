package manifest

import (
	"bytes"
	"io"

	"github.com/rehost/rehost/internal/textpos"
)

// document is one YAML document of a stream, as raw bytes: its "---" line,
// directives and comments before it included, its "..." line included.
// Concatenating the documents of a stream gives the stream back.
type document struct {
	data  []byte
	line  int // line of data[0] in the stream, 1-based
	index int // position in the stream, 0-based
}

// splitter cuts a stream into documents without parsing it. A line that
// starts with "---" or "..." followed by white space or the end of the line
// is a document marker anywhere in a stream (YAML 1.2, c-forbidden), even
// inside block or quoted scalars, so no YAML state is needed.
//
// It reads in large blocks and, once a document has content, jumps from one
// possible marker line to the next with bytes.Index; each document is copied
// out of the window once.
type splitter struct {
	r   io.Reader
	buf []byte // window; buf[start:end] is read and not yet emitted
	// start is where the current document begins, scan the next line to
	// examine (always a line start), end the end of the data read.
	start, scan, end int
	// clean is how many bytes from scan are known to hold no "\n": a long
	// line read in many pieces is scanned once, not once per piece.
	clean       int
	eof         bool
	err         error
	line, index int
}

// The window starts small, for small inputs, and doubles with every read
// up to splitBlock; beyond that it grows only to hold a larger document.
const (
	splitStart = 4 << 10
	splitBlock = 256 << 10
)

func newSplitter(r io.Reader) *splitter {
	return &splitter{r: r, buf: make([]byte, splitStart), line: 1}
}

// next returns the next document, or io.EOF (or the read error) at the end.
func (s *splitter) next() (document, error) {
	content := false // a line other than blank, comment or directive was seen
	for {
		if content {
			rest := s.buf[s.scan:s.end]
			if p := markerCandidate(rest, s.clean); p > 0 {
				s.advance(p)
			} else if p < 0 {
				if last := bytes.LastIndexByte(rest[s.clean:], '\n'); last >= 0 {
					// No marker among the complete lines read: skip them.
					s.advance(s.clean + last + 1)
				}
			}
		}
		line, ok := s.peekLine()
		if !ok {
			if s.eof || s.err != nil {
				return s.finish()
			}
			s.fill()
			continue
		}
		switch {
		case isMarker(line, "---"):
			if content {
				return s.emit(), nil
			}
			content = true
		case isMarker(line, "..."):
			s.advance(len(line))
			return s.emit(), nil
		case !content && !isBlankOrComment(line) && line[0] != '%':
			content = true
		}
		s.advance(len(line))
	}
}

// advance moves scan forward by n bytes, to a line start.
func (s *splitter) advance(n int) {
	s.scan += n
	s.clean = 0
}

var newline = []byte{'\n'}

// markerCandidate returns the offset of the first line in rest that starts
// with "---" or "...", or -1. The first clean bytes of rest hold no "\n".
func markerCandidate(rest []byte, clean int) int {
	if bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("...")) {
		return 0
	}
	hay := rest[clean:]
	p := -1
	if i := bytes.Index(hay, []byte("\n---")); i >= 0 {
		p = i + 1
		hay = hay[:i+1]
	}
	if i := bytes.Index(hay, []byte("\n...")); i >= 0 {
		p = i + 1
	}
	if p < 0 {
		return -1
	}
	return clean + p
}

// peekLine returns the complete line at scan (with its "\n"), or the last
// line of the stream without one; ok is false when more must be read.
func (s *splitter) peekLine() ([]byte, bool) {
	rest := s.buf[s.scan:s.end]
	if i := bytes.IndexByte(rest[s.clean:], '\n'); i >= 0 {
		return rest[:s.clean+i+1], true
	}
	s.clean = len(rest)
	if (s.eof || s.err != nil) && len(rest) > 0 {
		return rest, true
	}
	return nil, false
}

// fill reads more input, first moving the current document to the front of
// the window and growing the window when the document fills it.
func (s *splitter) fill() {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.scan -= s.start
		s.end = n
		s.start = 0
	}
	if s.end == len(s.buf) || len(s.buf) < splitBlock {
		grown := make([]byte, 2*len(s.buf))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err == io.EOF {
		s.eof = true
	} else if err != nil {
		s.err = err
	}
}

// emit returns buf[start:scan] as a document and starts the next document
// at scan.
func (s *splitter) emit() document {
	d := document{data: bytes.Clone(s.buf[s.start:s.scan]), line: s.line, index: s.index}
	s.start = s.scan
	s.line += lineBreaks(d.data)
	s.index++
	return d
}

// lineBreaks counts line breaks as yaml.v3 does (see lineStarts), so that
// lines reported across documents agree with the lines inside them.
func lineBreaks(data []byte) int {
	if bytes.IndexByte(data, '\r') < 0 && bytes.IndexByte(data, 0xC2) < 0 && bytes.IndexByte(data, 0xE2) < 0 {
		return bytes.Count(data, newline)
	}
	return len(textpos.LineStarts(data)) - 1
}

// finish emits what is left at the end of the stream.
func (s *splitter) finish() (document, error) {
	s.advance(s.end - s.scan)
	if s.start < s.end {
		return s.emit(), nil
	}
	if s.err != nil {
		return document{}, s.err
	}
	return document{}, io.EOF
}

func isMarker(line []byte, m string) bool {
	if !bytes.HasPrefix(line, []byte(m)) {
		return false
	}
	if len(line) == 3 {
		return true
	}
	switch line[3] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func isBlankOrComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) == 0 || t[0] == '#'
}

// splitterOf returns a splitter of a stream held in memory whose first
// line is line line: it reads nothing (it has met the end of its input)
// and cuts data where newSplitter would.
func splitterOf(data []byte, line int) *splitter {
	return &splitter{buf: data, end: len(data), eof: true, line: line}
}
