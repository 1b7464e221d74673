package manifest

import (
	"bytes"
	"io"
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
	eof              bool
	err              error
	line, index      int
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
	lines := 0       // line breaks consumed in this document
	for {
		if content {
			rest := s.buf[s.scan:s.end]
			p := markerCandidate(rest)
			if p < 0 {
				// No marker among the complete lines read: consume them all.
				if last := bytes.LastIndexByte(rest, '\n'); last >= 0 {
					lines += bytes.Count(rest[:last+1], newline)
					s.scan += last + 1
				}
			} else {
				lines += bytes.Count(rest[:p], newline)
				s.scan += p
			}
		}
		line, ok := s.peekLine()
		if !ok {
			if s.eof || s.err != nil {
				return s.finish(lines)
			}
			s.fill()
			continue
		}
		switch {
		case isMarker(line, "---"):
			if content {
				return s.emit(lines), nil
			}
			content = true
		case isMarker(line, "..."):
			s.scan += len(line)
			return s.emit(lines + 1), nil
		case !content && !isBlankOrComment(line) && line[0] != '%':
			content = true
		}
		s.scan += len(line)
		if line[len(line)-1] == '\n' {
			lines++
		}
	}
}

var newline = []byte{'\n'}

// markerCandidate returns the offset of the first line in rest that starts
// with "---" or "...", or -1.
func markerCandidate(rest []byte) int {
	if bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("...")) {
		return 0
	}
	p := -1
	if i := bytes.Index(rest, []byte("\n---")); i >= 0 {
		p = i + 1
	}
	hay := rest
	if p >= 0 {
		hay = rest[:p]
	}
	if i := bytes.Index(hay, []byte("\n...")); i >= 0 {
		p = i + 1
	}
	return p
}

// peekLine returns the complete line at scan (with its "\n"), or the last
// line of the stream without one; ok is false when more must be read.
func (s *splitter) peekLine() ([]byte, bool) {
	rest := s.buf[s.scan:s.end]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		return rest[:i+1], true
	}
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

// emit returns buf[start:scan] as a document of the given number of line
// breaks and starts the next document at scan.
func (s *splitter) emit(lines int) document {
	d := document{data: bytes.Clone(s.buf[s.start:s.scan]), line: s.line, index: s.index}
	s.start = s.scan
	s.line += lines
	s.index++
	return d
}

// finish emits what is left at the end of the stream.
func (s *splitter) finish(lines int) (document, error) {
	s.scan = s.end
	if s.start < s.end {
		return s.emit(lines), nil
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
