package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// edit replaces the value of a scalar node in a document's bytes.
type edit struct {
	node  *yaml.Node
	value string
}

var bom = []byte("\xef\xbb\xbf")

// splice applies edits to the raw bytes of one document, writing each new
// value in its node's original style. Everything outside the edited values
// is copied as it is. Edits of the same node (an anchor reached twice) are
// applied once.
func splice(data []byte, edits []edit) ([]byte, error) {
	type span struct {
		start, end int
		text       string
	}
	lines := lineStarts(data)
	spans := make([]span, 0, len(edits))
	done := map[*yaml.Node]bool{}
	for _, e := range edits {
		if done[e.node] {
			continue
		}
		done[e.node] = true
		start, end, text, err := locate(data, lines, e.node, e.value)
		if err != nil {
			return nil, err
		}
		spans = append(spans, span{start, end, text})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var out bytes.Buffer
	out.Grow(len(data) + 32*len(spans))
	pos := 0
	for _, s := range spans {
		if s.start < pos {
			return nil, fmt.Errorf("overlapping edits at byte %d", s.start)
		}
		out.Write(data[pos:s.start])
		out.WriteString(s.text)
		pos = s.end
	}
	out.Write(data[pos:])
	return out.Bytes(), nil
}

// locate finds the bytes of node's value and returns the span to replace and
// its replacement in the same style.
func locate(data []byte, lines []int, n *yaml.Node, value string) (start, end int, text string, err error) {
	off, err := offset(data, lines, n.Line, n.Column)
	if err != nil {
		return 0, 0, "", err
	}
	off = skipProperties(data, off)
	rest := data[off:]
	bad := func(what string) (int, int, string, error) {
		return 0, 0, "", fmt.Errorf("cannot locate the bytes of %q (%s) at line %d, column %d to rewrite in place", n.Value, what, n.Line, n.Column)
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '"' {
			return bad("double-quoted")
		}
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return off, off + i + 1, `"` + value + `"`, nil
			}
		}
		return bad("unterminated double-quoted")
	case n.Style&yaml.SingleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '\'' {
			return bad("single-quoted")
		}
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return off, off + i + 1, "'" + value + "'", nil
			}
		}
		return bad("unterminated single-quoted")
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// The header line ("|", ">-", ...) stays; the value, a single token
		// for an image reference, sits on a content line below it.
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return bad("block scalar")
		}
		i := bytes.Index(rest[nl:], []byte(n.Value))
		if i < 0 || n.Value == "" {
			return bad("block scalar")
		}
		s := off + nl + i
		return s, s + len(n.Value), value, nil
	default:
		if !bytes.HasPrefix(rest, []byte(n.Value)) {
			return bad("plain")
		}
		return off, off + len(n.Value), value, nil
	}
}

// skipProperties skips a node's tag ("!!str") and anchor ("&a") and the
// white space after them.
func skipProperties(data []byte, off int) int {
	for off < len(data) && (data[off] == '!' || data[off] == '&') {
		for off < len(data) && !isSpace(data[off]) {
			off++
		}
		for off < len(data) && isSpace(data[off]) {
			off++
		}
	}
	return off
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// offset converts yaml.v3's 1-based line and rune column to a byte offset.
func offset(data []byte, lines []int, line, col int) (int, error) {
	if line < 1 || line > len(lines) || col < 1 {
		return 0, fmt.Errorf("position %d:%d is outside the document", line, col)
	}
	off := lines[line-1]
	if line == 1 && bytes.HasPrefix(data, bom) {
		off += len(bom)
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

// lineStarts returns the byte offset of each line as yaml.v3 counts lines:
// "\r\n", "\r", "\n", NEL, LS and PS each end a line.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		case 0xC2:
			if i+1 < len(data) && data[i+1] == 0x85 {
				i++
				starts = append(starts, i+1)
			}
		case 0xE2:
			if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9) {
				i += 2
				starts = append(starts, i+1)
			}
		}
	}
	return starts
}
