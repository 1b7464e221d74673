package manifest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rehost/rehost/internal/textpos"
	"go.yaml.in/yaml/v3"
)

// Insertions add a field that is absent: a registry setting an operator
// reads (tigera's Installation.spec.registry). The new key goes into the
// map's bytes in the map's own style, touching nothing else:
//   - a block map gets a line "key: value" at the indentation of its first
//     key, right below the line of its parent key (before the comments
//     that head its first key), or in front of its first key when that
//     key shares its line ("- name: x" in a list);
//   - a flow map gets ", key: value" after its last entry (JSON: quoted);
//   - the document's root map gets the new keys at its end.
//
// Keys to add below the map ("spec", "registry") nest as the map's style
// would nest them. spliceVerified then proves that the document parses to
// the same tree plus exactly the added keys.

// insertion returns where to insert the edit's keys into data and the
// text to insert.
func insertion(data []byte, lines []int, e edit) (int, string, error) {
	m := e.node
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	if m.Kind != yaml.MappingNode {
		return 0, "", fmt.Errorf("cannot add %s: not a map", strings.Join(e.insert, "."))
	}
	if m.Style&yaml.FlowStyle != 0 || len(m.Content) == 0 {
		off, err := textpos.Offset(data, lines, m.Line, m.Column)
		if err != nil {
			return 0, "", err
		}
		off = skipProperties(data, off)
		if off >= len(data) || data[off] != '{' {
			return 0, "", fmt.Errorf("cannot add %s to the map at line %d: no '{' where it starts", strings.Join(e.insert, "."), m.Line)
		}
		json := isJSON(data, m, off)
		text := flowKeys(e.insert, e.value, json)
		end := flowEnd(data, off)
		if end < 0 {
			return 0, "", fmt.Errorf("cannot add %s to the map at line %d: no '}' where it ends", strings.Join(e.insert, "."), m.Line)
		}
		if len(m.Content) > 0 {
			// After the last entry, before the white space that precedes "}".
			end = len(bytes.TrimRight(data[:end], " \t\r\n"))
			text = ", " + text
		}
		return end, text, nil
	}
	k0 := m.Content[0]
	off0, err := textpos.Offset(data, lines, k0.Line, k0.Column)
	if err != nil {
		return 0, "", err
	}
	off0 = skipProperties(data, off0)
	indent := strings.Repeat(" ", k0.Column-1)
	lineStart := lines[k0.Line-1]
	if strings.TrimLeft(string(data[lineStart:off0]), " ") != "" {
		// "- name: x": in front of the first key, on its line.
		return off0, blockKeys(e.insert, e.value, indent, nl, true), nil
	}
	if k0.Column == 1 { // the document's root map
		end := rootEnd(data)
		text := blockKeys(e.insert, e.value, indent, nl, false)
		if end > 0 && data[end-1] != '\n' {
			text = nl + text
		}
		return end, text, nil
	}
	// Above the comments and blank lines that head the first key.
	l := k0.Line - 1 // 0-based line of k0
	for l > 0 && isBlankOrComment(bytes.TrimRight(data[lines[l-1]:lines[l]], "\r\n")) {
		l--
	}
	return lines[l], blockKeys(e.insert, e.value, indent, nl, false), nil
}

// flowEnd returns the offset of the "}" that closes the flow map whose "{"
// is at off, skipping nested collections and quoted strings; -1 when there
// is none.
func flowEnd(data []byte, off int) int {
	depth := 0
	for i := off; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				if data[i] != '}' {
					return -1
				}
				return i
			}
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(data); i++ {
				if data[i] == '\'' {
					if i+1 < len(data) && data[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '#':
			// A comment runs to the end of the line (only after white space
			// in YAML; "#" inside plain scalars is kept as is).
			if i > 0 && (data[i-1] == ' ' || data[i-1] == '\t') {
				for i < len(data) && data[i] != '\n' {
					i++
				}
			}
		}
	}
	return -1
}

// blockKeys is "key:\n  key: value\n" at indent; inline means the text
// goes in front of a key on its line, so it ends with the indentation
// instead of starting with it.
func blockKeys(keys []string, value, indent, nl string, inline bool) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 || !inline {
			b.WriteString(indent + strings.Repeat("  ", i))
		}
		b.WriteString(k + ":")
		if i == len(keys)-1 {
			b.WriteString(" " + scalarText(value, 0, false))
		}
		b.WriteString(nl)
	}
	if inline {
		b.WriteString(indent)
	}
	return b.String()
}

// flowKeys is "key: {key: value}", or its JSON form; the value is a
// scalar that reads back as value in a flow map (see scalarText).
func flowKeys(keys []string, value string, json bool) string {
	q := func(s string) string {
		if json {
			return doubleQuoted(s)
		}
		return s
	}
	v := scalarText(value, 0, true)
	if json {
		v = doubleQuoted(value)
	}
	text := q(keys[len(keys)-1]) + ": " + v
	for i := len(keys) - 2; i >= 0; i-- {
		text = q(keys[i]) + ": {" + text + "}"
	}
	return text
}

// isJSON reports whether the flow map m, whose "{" is at off, is written
// as JSON: its first key is double-quoted or, when it is empty, the key
// before it is ("spec": {}).
func isJSON(data []byte, m *yaml.Node, off int) bool {
	if len(m.Content) > 0 {
		return m.Content[0].Style&yaml.DoubleQuotedStyle != 0
	}
	before := bytes.TrimRight(data[:off], " \t\r\n")
	if !bytes.HasSuffix(before, []byte(":")) {
		return false
	}
	return bytes.HasSuffix(bytes.TrimRight(before[:len(before)-1], " \t"), []byte(`"`))
}

// rootEnd is where keys are added at the end of a document's root map:
// the end of the data, or the start of its "..." line.
func rootEnd(data []byte) int {
	end := len(data)
	for end > 0 {
		t := bytes.TrimRight(data[:end], "\r\n")
		start := bytes.LastIndexByte(t, '\n') + 1
		line := t[start:]
		if len(bytes.TrimSpace(line)) == 0 && start > 0 {
			end = start
			continue
		}
		if bytes.HasPrefix(line, []byte("...")) {
			return start
		}
		return end
	}
	return end
}

func hasInsert(edits []edit) bool {
	for _, e := range edits {
		if e.insert != nil {
			return true
		}
	}
	return false
}

// dropInserted checks that got, the parsed output, holds each inserted key
// with its value in the map that corresponds to the edit's node in root,
// and removes them so that got can be compared with root.
func dropInserted(root, got *yaml.Node, edits []edit) error {
	ins := map[*yaml.Node]edit{}
	for _, e := range edits {
		if e.insert != nil {
			ins[e.node] = e
		}
	}
	var walk func(a, b *yaml.Node) error
	walk = func(a, b *yaml.Node) error {
		if e, ok := ins[a]; ok {
			if b.Kind != yaml.MappingNode || len(b.Content) != len(a.Content)+2 {
				return fmt.Errorf("adding %s would change the map beyond it", strings.Join(e.insert, "."))
			}
			at := -1
			for i := 0; i+1 < len(b.Content); i += 2 {
				if b.Content[i].Value == e.insert[0] && (i >= len(a.Content) || a.Content[i].Value != e.insert[0]) {
					at = i
					break
				}
			}
			if at < 0 || !holds(b.Content[at+1], e.insert[1:], e.value) {
				return fmt.Errorf("adding %s would not give it the value %s", strings.Join(e.insert, "."), e.value)
			}
			b.Content = append(b.Content[:at:at], b.Content[at+2:]...)
		}
		if a.Kind == yaml.AliasNode || len(a.Content) != len(b.Content) {
			return nil // sameTree reports it
		}
		for i := range a.Content {
			if err := walk(a.Content[i], b.Content[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root, got)
}

// holds reports whether n is the string value, below the keys.
func holds(n *yaml.Node, keys []string, value string) bool {
	for _, k := range keys {
		if n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Value != k {
			return false
		}
		n = n.Content[1]
	}
	return n.Kind == yaml.ScalarNode && n.Value == value && (n.Tag == "!!str" || n.Tag == "")
}

// addNodes adds the edit's keys to its map node in a parsed tree (the kio
// filter's), first, so that the node writes as the CLI writes it.
func addNodes(e edit) {
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.value}
	for i := len(e.insert) - 1; i >= 1; i-- {
		v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.insert[i]}, v}}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.insert[0]}
	e.node.Content = append([]*yaml.Node{k, v}, e.node.Content...)
}
