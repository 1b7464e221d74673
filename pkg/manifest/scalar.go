package manifest

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Every value rehost writes into a document's bytes is a scalar token that
// reads back, in its place, as exactly that string: the token replaces a
// scalar in its own quoting style when it was quoted (escaped as that
// style needs), stays plain when a plain scalar can hold the value in its
// context (a block, or a flow collection: "{image: x}", "[a, b]"), and is
// single-quoted otherwise ("[::1]:5000/library/nginx" reads as a list when
// plain), or double-quoted when single quotes cannot hold it (a line
// break, a control character). yaml.v3's emitter, and so rehost fn, write
// plain values the same way.

// scalarText is value written as a scalar token in place of one written in
// style (the node's style; a block scalar's is read as plain), in a flow
// collection when flow is set.
func scalarText(value string, style yaml.Style, flow bool) string {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		return doubleQuoted(value)
	case style&yaml.SingleQuotedStyle != 0:
		if singleOK(value) {
			return singleQuoted(value)
		}
		return doubleQuoted(value)
	case plainOK(value, flow):
		return value
	case singleOK(value):
		return singleQuoted(value)
	}
	return doubleQuoted(value)
}

// inQuotes is value written inside a scalar of the given style, as part of
// it: escaped for a double-quoted scalar, quotes doubled for a
// single-quoted one, as it is otherwise. ok is false when the style cannot
// hold the value so (a line break in a single-quoted scalar).
func inQuotes(value string, style yaml.Style) (text string, ok bool) {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		q := doubleQuoted(value)
		return q[1 : len(q)-1], true
	case style&yaml.SingleQuotedStyle != 0:
		if !singleOK(value) {
			return "", false
		}
		return strings.ReplaceAll(value, "'", "''"), true
	}
	return value, true
}

// plainOK reports whether value, written as a plain scalar in a block
// (flow false) or in a flow collection, reads back as the string value:
// where a plain scalar may start and end as yaml.v3's scanner reads one
// (yaml_parser_fetch_next_token, yaml_parser_scan_plain_scalar; a ":" that
// ends a value, a "-" before a blank and a leading space are refused as
// its emitter refuses them), and the value must resolve to a string
// ("true", "1.5", "null", "~" do not).
func plainOK(value string, flow bool) bool {
	if value == "" || strings.HasPrefix(value, "---") || strings.HasPrefix(value, "...") {
		return false
	}
	prevBlank := true // the start counts as preceded by white space
	for i, r := range value {
		size := utf8.RuneLen(r)
		nextBlank := i+size >= len(value) || value[i+size] == ' ' || value[i+size] == '\t'
		switch {
		case r == ' ':
			if i == 0 || i+1 == len(value) {
				return false // leading or trailing space
			}
		case r == '\t', isBreak(r), !printable(r):
			return false
		case i == 0 && strings.ContainsRune("#,[]{}&*!|>'\"%@`", r):
			return false
		case i == 0 && (r == '?' || r == ':'):
			if flow || nextBlank {
				return false
			}
		case i == 0 && r == '-':
			if nextBlank {
				return false
			}
		case i > 0 && strings.ContainsRune(",?[]{}", r):
			if flow {
				return false
			}
		case i > 0 && r == ':':
			if nextBlank {
				return false
			}
		case r == '#':
			if prevBlank {
				return false
			}
		}
		prevBlank = r == ' ' || r == '\t'
	}
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: value}).ShortTag() == "!!str"
}

// singleOK reports whether a single-quoted scalar holds value as it is: no
// line break (which would fold) and no character that must be escaped.
func singleOK(value string) bool {
	for _, r := range value {
		if isBreak(r) || r != '\t' && !printable(r) {
			return false
		}
	}
	return true
}

func singleQuoted(value string) string {
	return "'" + strings.ReplaceAll(value, "'", "''") + "'"
}

// doubleQuoted writes value as a double-quoted scalar: backslashes, quotes,
// line breaks and every character YAML does not allow raw are escaped.
func doubleQuoted(value string) string {
	var b strings.Builder
	b.Grow(len(value) + 2)
	b.WriteByte('"')
	for _, r := range value {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == 0x85:
			b.WriteString(`\N`)
		case r == 0x2028:
			b.WriteString(`\L`)
		case r == 0x2029:
			b.WriteString(`\P`)
		case r == utf8.RuneError || !printable(r):
			switch {
			case r < 0x100:
				b.WriteString(`\x`)
				b.WriteString(hex(uint32(r), 2))
			case r < 0x10000:
				b.WriteString(`\u`)
				b.WriteString(hex(uint32(r), 4))
			default:
				b.WriteString(`\U`)
				b.WriteString(hex(uint32(r), 8))
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func hex(v uint32, digits int) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", digits-len(s)) + s
}

// printable reports whether YAML allows r raw in a scalar (c-printable,
// without the byte order mark).
func printable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r < 0x20 || r == 0x7f:
		return false
	case r < 0xa0:
		return r < 0x7f
	case r == 0xfeff:
		return false
	case r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

// isBreak reports whether r ends a line in YAML.
func isBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029
}

// flowNodes returns which nodes of targets, below root, sit in a flow
// collection ("{...}", "[...]"), where a plain scalar ends at ",", "]" or
// "}". Aliases are not followed: an alias node is in the context where it
// is written. The walk ends when every target was met.
func flowNodes(root *yaml.Node, targets map[*yaml.Node]bool) map[*yaml.Node]bool {
	out := map[*yaml.Node]bool{}
	left := len(targets)
	var walk func(n *yaml.Node, flow bool)
	walk = func(n *yaml.Node, flow bool) {
		if left == 0 {
			return
		}
		if targets[n] {
			left--
			if flow {
				out[n] = true
			}
		}
		if n.Kind == yaml.AliasNode {
			return
		}
		flow = flow || n.Style&yaml.FlowStyle != 0 && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode)
		for _, c := range n.Content {
			walk(c, flow)
		}
	}
	walk(root, false)
	return out
}
