package helm

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rehost/rehost/internal/textpos"
	"github.com/rehost/rehost/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// setYAML sets the value (a string or a bool) at path in a YAML values
// file by editing its bytes: an existing scalar is replaced in place, a
// string in its quoting style, and a missing key is added as a block at
// the end of the deepest mapping that exists, with comment above it. Every
// other byte, comments and key order included, stays as it was.
func setYAML(data []byte, path []interface{}, value interface{}, comment string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	lines := textpos.LineStarts(data)
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return insertAtEnd(data, path, value, comment)
	}
	cur := doc.Content[0]
	var parentKey *yaml.Node
	for i, seg := range path {
		switch seg := seg.(type) {
		case string:
			if isNull(cur) {
				return insertUnderNull(data, lines, parentKey, cur, path[i:], value, comment)
			}
			if cur.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: %s is not a map", cur.Line, PathString(path[:i]))
			}
			kn, vn := yamlnode.FirstPair(cur, seg)
			if kn == nil {
				return insertInMapping(data, lines, parentKey, cur, path[i:], value, comment)
			}
			parentKey, cur = kn, vn
		case int:
			if cur.Kind != yaml.SequenceNode || seg >= len(cur.Content) {
				return nil, fmt.Errorf("line %d: %s is not a list of at least %d items", cur.Line, PathString(path[:i]), seg+1)
			}
			parentKey, cur = nil, cur.Content[seg]
		}
	}
	if isNull(cur) && cur.Value == "" && parentKey != nil {
		// "key:" with no value: write the value after the colon.
		at, err := afterColon(data, lines, parentKey)
		if err != nil {
			return nil, err
		}
		return splice(data, at, at, " "+valueText(value, 0)), nil
	}
	if cur.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("line %d: %s is not a scalar", cur.Line, PathString(path))
	}
	start, end, err := scalarSpan(data, lines, cur)
	if err != nil {
		return nil, err
	}
	return splice(data, start, end, valueText(value, cur.Style)), nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func splice(data []byte, start, end int, s string) []byte {
	out := make([]byte, 0, len(data)+len(s))
	out = append(out, data[:start]...)
	out = append(out, s...)
	return append(out, data[end:]...)
}

// scalarSpan returns the bytes of a one-line scalar, quotes included.
func scalarSpan(data []byte, lines []int, n *yaml.Node) (int, int, error) {
	if n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return 0, 0, fmt.Errorf("line %d: a tagged or anchored value is not edited", n.Line)
	}
	start, err := textpos.Offset(data, lines, n.Line, n.Column)
	if err != nil {
		return 0, 0, err
	}
	eol := textpos.LineEnd(data, start)
	end := -1
	switch n.Style {
	case yaml.DoubleQuotedStyle:
		for i := start + 1; i < eol; i++ {
			if data[i] == '\\' {
				i++
				continue
			}
			if data[i] == '"' {
				end = i + 1
				break
			}
		}
	case yaml.SingleQuotedStyle:
		for i := start + 1; i < eol; i++ {
			if data[i] == '\'' {
				if i+1 < eol && data[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
				break
			}
		}
	case 0:
		end = eol
		if i := bytes.Index(data[start:eol], []byte(" #")); i >= 0 {
			end = start + i
		}
		if inFlow(data, start) {
			// A plain scalar in a flow collection ends at , ] or }.
			if i := bytes.IndexAny(data[start:end], ",]}"); i >= 0 {
				end = start + i
			}
		}
		for end > start && (data[end-1] == ' ' || data[end-1] == '\t' || data[end-1] == '\r') {
			end--
		}
	}
	if end < 0 {
		return 0, 0, fmt.Errorf("line %d: a value spanning lines is not edited", n.Line)
	}
	var got string
	if err := yaml.Unmarshal(data[start:end], &got); err != nil || got != n.Value {
		return 0, 0, fmt.Errorf("line %d: a value spanning lines or in block style is not edited", n.Line)
	}
	return start, end, nil
}

// inFlow reports whether the scalar at start follows a flow collection's
// opening on its line ("image: {repository: x}").
func inFlow(data []byte, start int) bool {
	ls := bytes.LastIndexByte(data[:start], '\n') + 1
	line := data[ls:start]
	return bytes.ContainsAny(line, "{[")
}

// scalarText writes value as a YAML scalar, in the given style when it
// allows, plain when it reads back as the same string, else double-quoted.
// valueText is a value to set as YAML text: a string in the style given
// (quoted when plain would read otherwise), a bool as true or false.
func valueText(value interface{}, style yaml.Style) string {
	if b, ok := value.(bool); ok {
		return strconv.FormatBool(b)
	}
	return scalarText(fmt.Sprint(value), style)
}

func scalarText(value string, style yaml.Style) string {
	switch style {
	case yaml.SingleQuotedStyle:
		return "'" + strings.ReplaceAll(value, "'", "''") + "'"
	case yaml.DoubleQuotedStyle:
		return strconv.Quote(value)
	}
	var got interface{}
	if value != "" && !strings.ContainsAny(value, "#,[]{}\"'&*!|>%@`") &&
		yaml.Unmarshal([]byte("v: "+value), &map[string]interface{}{}) == nil &&
		yaml.Unmarshal([]byte(value), &got) == nil && got == value {
		return value
	}
	return strconv.Quote(value)
}

// block renders keys as nested block mappings at indent, the comment above
// the last.
func block(path []interface{}, value interface{}, comment string, indent int) (string, error) {
	var b strings.Builder
	for i, seg := range path {
		key, ok := seg.(string)
		if !ok {
			return "", errors.New("a list item that does not exist cannot be added")
		}
		pad := strings.Repeat(" ", indent+2*i)
		if i == len(path)-1 {
			for _, c := range strings.Split(comment, "\n") {
				if c != "" {
					b.WriteString(pad + "# " + c + "\n")
				}
			}
			b.WriteString(pad + scalarText(key, 0) + ": " + valueText(value, 0) + "\n")
		} else {
			b.WriteString(pad + scalarText(key, 0) + ":\n")
		}
	}
	return b.String(), nil
}

func insertAtEnd(data []byte, path []interface{}, value interface{}, comment string) ([]byte, error) {
	text, err := block(path, value, comment, 0)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), data...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, text...), nil
}

// insertInMapping adds the keys at the end of mapping m.
func insertInMapping(data []byte, lines []int, parentKey, m *yaml.Node, path []interface{}, value interface{}, comment string) ([]byte, error) {
	if m.Style&yaml.FlowStyle != 0 {
		if len(m.Content) > 0 {
			return nil, fmt.Errorf("line %d: a flow mapping ({...}) with content is not edited", m.Line)
		}
		return replaceEmpty(data, lines, parentKey, m, "{}", path, value, comment)
	}
	first := m.Content[0]
	indent := first.Column - 1
	last := m.Content[len(m.Content)-2]
	end := last.Line // the last line of the mapping's content
	for j := last.Line + 1; j <= len(lines); j++ {
		ls := lines[j-1]
		line := string(data[ls:textpos.LineEnd(data, ls)])
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if trimmed == "---" || trimmed == "..." {
			break
		}
		if len(line)-len(strings.TrimLeft(line, " ")) <= indent {
			break
		}
		end = j
	}
	text, err := block(path, value, comment, indent)
	if err != nil {
		return nil, err
	}
	at := textpos.LineEnd(data, lines[end-1])
	if at == len(data) {
		return append(append(append([]byte(nil), data...), '\n'), strings.TrimSuffix(text, "\n")...), nil
	}
	return splice(data, at+1, at+1, text), nil
}

// insertUnderNull gives a key with a null value ("global:", "global: ~")
// the keys as a block.
func insertUnderNull(data []byte, lines []int, parentKey, n *yaml.Node, path []interface{}, value interface{}, comment string) ([]byte, error) {
	if parentKey == nil {
		return insertAtEnd(data, path, value, comment)
	}
	if n.Value != "" {
		return replaceEmpty(data, lines, parentKey, n, n.Value, path, value, comment)
	}
	text, err := block(path, value, comment, parentKey.Column-1+2)
	if err != nil {
		return nil, err
	}
	ks, err := textpos.Offset(data, lines, parentKey.Line, 1)
	if err != nil {
		return nil, err
	}
	at := textpos.LineEnd(data, ks)
	if at == len(data) {
		return append(append(append([]byte(nil), data...), '\n'), strings.TrimSuffix(text, "\n")...), nil
	}
	return splice(data, at+1, at+1, text), nil
}

// replaceEmpty replaces an empty value token ("{}", "~", "null") after
// parentKey with the keys as a block.
func replaceEmpty(data []byte, lines []int, parentKey, n *yaml.Node, token string, path []interface{}, value interface{}, comment string) ([]byte, error) {
	start, err := textpos.Offset(data, lines, n.Line, n.Column)
	if err != nil {
		return nil, err
	}
	if token == "{}" {
		eol := textpos.LineEnd(data, start)
		i := bytes.IndexByte(data[start:eol], '}')
		if i < 0 {
			return nil, fmt.Errorf("line %d: an empty mapping spanning lines is not edited", n.Line)
		}
		token = string(data[start : start+i+1])
	}
	if !bytes.HasPrefix(data[start:], []byte(token)) {
		return nil, fmt.Errorf("line %d: unexpected text where %s should be", n.Line, token)
	}
	indent := 0
	if parentKey != nil {
		indent = parentKey.Column - 1 + 2
	}
	text, err := block(path, value, comment, indent)
	if err != nil {
		return nil, err
	}
	// "key: {}  # comment" becomes "key:  # comment" and the block.
	end := start + len(token)
	eol := textpos.LineEnd(data, end)
	rest := strings.TrimRight(string(data[end:eol]), " \t\r")
	head := strings.TrimRight(string(data[:start]), " ")
	out := head + rest + "\n" + strings.TrimSuffix(text, "\n")
	if parentKey == nil {
		out = string(data[:start]) + strings.TrimSuffix(text, "\n")
	}
	return []byte(out + string(data[eol:])), nil
}

func afterColon(data []byte, lines []int, key *yaml.Node) (int, error) {
	start, err := textpos.Offset(data, lines, key.Line, key.Column)
	if err != nil {
		return 0, err
	}
	eol := textpos.LineEnd(data, start)
	i := bytes.IndexByte(data[start:eol], ':')
	for i >= 0 && start+i+1 < eol && data[start+i+1] != ' ' && data[start+i+1] != '\t' {
		j := bytes.IndexByte(data[start+i+1:eol], ':')
		if j < 0 {
			i = -1
			break
		}
		i += j + 1
	}
	if i < 0 {
		return 0, fmt.Errorf("line %d: no colon after the key", key.Line)
	}
	return start + i + 1, nil
}

// commentKeyLine puts comment lines above the key at path, a key of a block
// mapping whose line holds only it, at the key's indentation; other keys
// are left as they are.
func commentKeyLine(data []byte, path []interface{}, comment string) []byte {
	var doc yaml.Node
	if comment == "" || yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return data
	}
	cur := doc.Content[0]
	var key *yaml.Node
	for _, seg := range path {
		name, ok := seg.(string)
		if !ok || cur.Kind != yaml.MappingNode || cur.Style&yaml.FlowStyle != 0 {
			return data
		}
		kn, vn := yamlnode.FirstPair(cur, name)
		if kn == nil {
			return data
		}
		key, cur = kn, vn
	}
	lines := textpos.LineStarts(data)
	if key == nil || key.Line < 1 || key.Line > len(lines) {
		return data
	}
	start := lines[key.Line-1]
	indent := string(data[start : start+key.Column-1])
	if strings.TrimSpace(indent) != "" {
		return data // not the first thing on its line
	}
	var b strings.Builder
	for _, c := range strings.Split(comment, "\n") {
		b.WriteString(indent + "# " + c + "\n")
	}
	return splice(data, start, start, b.String())
}
