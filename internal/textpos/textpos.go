// Package textpos turns the positions yaml.v3 reports (1-based line, column
// in characters) into byte offsets of the text and back, counting lines as
// yaml.v3 does: "\n", "\r\n", a lone "\r", NEL (U+0085), LS (U+2028) and PS
// (U+2029) each end a line, and a byte order mark at the start of the text
// is not a column. pkg/manifest and pkg/helm share it, so that every
// line ending the core supports is supported by both.
package textpos

import (
	"bytes"
	"fmt"
	"sort"
	"unicode/utf8"
)

// BOM is the UTF-8 byte order mark.
var BOM = []byte{0xEF, 0xBB, 0xBF}

// LineStarts returns the byte offset of each line (index 0 is line 1).
func LineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); i++ {
		if n := breakLen(data, i); n > 0 {
			i += n - 1
			starts = append(starts, i+1)
		}
	}
	return starts
}

// breakLen is the length of the line break at data[i], 0 when there is none.
func breakLen(data []byte, i int) int {
	switch data[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(data) && data[i+1] == '\n' {
			return 2
		}
		return 1
	case 0xC2:
		if i+1 < len(data) && data[i+1] == 0x85 {
			return 2
		}
	case 0xE2:
		if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9) {
			return 3
		}
	}
	return 0
}

// LineEnd returns the offset of the line break that ends the line holding
// byte at, or len(data) on the last line.
func LineEnd(data []byte, at int) int {
	for i := at; i < len(data); i++ {
		if breakLen(data, i) > 0 {
			return i
		}
	}
	return len(data)
}

// Offset converts a 1-based line and character column to a byte offset;
// lines are the text's LineStarts.
func Offset(data []byte, lines []int, line, col int) (int, error) {
	if line < 1 || line > len(lines) || col < 1 {
		return 0, fmt.Errorf("position %d:%d is outside the document", line, col)
	}
	off := lines[line-1]
	if line == 1 && bytes.HasPrefix(data, BOM) {
		off += len(BOM)
	}
	for c := 1; c < col; c++ {
		if off >= len(data) {
			return 0, fmt.Errorf("position %d:%d is outside the document", line, col)
		}
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
	return off, nil
}

// Positioner gives the 1-based line and character column of byte offsets
// of a text; offsets asked in increasing order on a line are counted from
// the previous one, so a long line costs one pass.
type Positioner struct {
	data           []byte
	lines          []int
	off, line, col int // the last answer
}

// NewPositioner returns a Positioner for data, whose LineStarts are lines.
func NewPositioner(data []byte, lines []int) *Positioner {
	return &Positioner{data: data, lines: lines}
}

// Position returns the line and column of byte off.
func (p *Positioner) Position(off int) (line, col int) {
	i := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
	if i+1 == p.line && off >= p.off && p.col > 0 {
		p.col += utf8.RuneCount(p.data[p.off:off])
		p.off = off
		return p.line, p.col
	}
	start := p.lines[i]
	if i == 0 && bytes.HasPrefix(p.data, BOM) {
		start += len(BOM)
	}
	p.off, p.line, p.col = off, i+1, utf8.RuneCount(p.data[start:off])+1
	return p.line, p.col
}
