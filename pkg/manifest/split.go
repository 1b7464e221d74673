package manifest

import (
	"bufio"
	"bytes"
	"errors"
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
type splitter struct {
	r     *bufio.Reader
	line  int
	index int
	err   error
	// carry is a line read past the end of the previous document.
	carry []byte
}

func newSplitter(r io.Reader) *splitter {
	return &splitter{r: bufio.NewReaderSize(r, 64<<10), line: 1}
}

// next returns the next document, or io.EOF.
func (s *splitter) next() (document, error) {
	if s.err != nil {
		return document{}, s.err
	}
	d := document{line: s.line, index: s.index}
	var buf []byte
	content := false // a line other than blank, comment or directive was seen
	if s.carry != nil {
		buf = append(buf, s.carry...)
		s.line++
		s.carry = nil
		content = true // a "---" line opens content
	}
	for {
		line, err := s.readLine()
		if len(line) > 0 {
			switch {
			case isMarker(line, "---"):
				if content {
					s.carry = append([]byte(nil), line...)
					return s.emit(d, buf), nil
				}
				content = true
			case isMarker(line, "..."):
				buf = append(buf, line...)
				s.line++
				return s.emit(d, buf), nil
			case !content && !isBlankOrComment(line) && line[0] != '%':
				content = true
			}
			buf = append(buf, line...)
			if line[len(line)-1] == '\n' {
				s.line++
			}
		}
		if err != nil {
			s.err = err
			if len(buf) > 0 {
				return s.emit(d, buf), nil
			}
			return document{}, err
		}
	}
}

func (s *splitter) emit(d document, buf []byte) document {
	d.data = buf
	s.index++
	return d
}

// readLine reads a line including its "\n". The result is valid until the
// next read; lines longer than the buffer are assembled in a new slice.
func (s *splitter) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = s.r.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
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
