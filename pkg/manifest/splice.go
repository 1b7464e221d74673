package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/textpos"
	"go.yaml.in/yaml/v3"
)

// edit replaces the value of a scalar node in a document's bytes (whole),
// or a part of it (sub): the bytes of old, at byte at of the node's value
// and at byte start of the document.
type edit struct {
	node  *yaml.Node
	value string
	sub   bool
	at    int
	old   string
	start int
	// embedded marks the edit of an embedded reference.
	embedded bool
	// alias marks the edit of an alias node ("*name"): it is replaced by a
	// scalar holding value, in the style of the node it names.
	alias bool
	// insert, when set, makes the edit an insertion: the keys to add to
	// the map node, the last one with the value (see insert.go).
	insert []string
}

var bom = textpos.BOM

// splice applies edits to the raw bytes of one document, writing each new
// whole value in its node's original style where that style can hold it
// (see scalarText) and each sub edit in place, escaped for its scalar's
// style. Everything outside the edited values is copied as it is. Edits of
// the same node or part (an anchor reached twice) are applied once; a sub
// edit of a node edited whole is dropped (the same reference, reached as an
// image field and as an embedded reference through an alias). A scalar
// whose sub edits its style cannot hold in place (a plain scalar that
// would start with "[", an IPv6 registry; one in a flow collection that
// would hold ",[]{}"; a line break in single quotes) is written whole,
// with the value want gives it, quoted. ctx says where a node is written.
// It returns, besides the new bytes, the scalars it replaced whole.
func splice(data []byte, edits []edit, want map[*yaml.Node]string, ctx *scalarContext) ([]byte, []replacement, error) {
	type span struct {
		start, end int
		text       string
		sub        bool
	}
	var reps []replacement
	var lines []int
	spans := make([]span, 0, len(edits))
	whole := map[*yaml.Node]bool{}
	for _, e := range edits {
		if e.insert != nil {
			if lines == nil {
				lines = textpos.LineStarts(data)
			}
			at, text, err := insertion(data, lines, e)
			if err != nil {
				return nil, nil, err
			}
			spans = append(spans, span{at, at, text, false})
			continue
		}
		if !e.sub && !whole[e.node] {
			whole[e.node] = true
			if lines == nil {
				lines = textpos.LineStarts(data)
			}
			start, end, text, err := locate(data, lines, e.node, e.value, ctx)
			if err != nil {
				return nil, nil, err
			}
			spans = append(spans, span{start, end, text, false})
			reps = append(reps, replacement{e.node, string(data[start:end]), text})
		}
	}
	// The scalars whose sub edits do not fit in place are written whole.
	for _, e := range edits {
		if !e.sub || e.insert != nil || whole[e.node] || subFits(e, want[e.node], ctx) {
			continue
		}
		whole[e.node] = true
		if lines == nil {
			lines = textpos.LineStarts(data)
		}
		start, end, text, err := locate(data, lines, e.node, want[e.node], ctx)
		if err != nil {
			return nil, nil, err
		}
		spans = append(spans, span{start, end, text, false})
		reps = append(reps, replacement{e.node, string(data[start:end]), text})
	}
	for _, e := range edits {
		if !e.sub || e.insert != nil || whole[e.node] {
			continue
		}
		if e.start < 0 || e.start+len(e.old) > len(data) || string(data[e.start:e.start+len(e.old)]) != e.old {
			return nil, nil, fmt.Errorf("cannot locate %s at byte %d to rewrite in place", bounded.Quote(e.old), e.start)
		}
		text, _ := inQuotes(e.value, e.node.Style) // subFits said it holds
		spans = append(spans, span{e.start, e.start + len(e.old), text, true})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	size := len(data)
	for _, s := range spans {
		size += len(s.text) - (s.end - s.start)
	}
	out := make([]byte, 0, max(size, 0))
	pos := 0
	var last *span
	for i := range spans {
		s := &spans[i]
		if s.sub && last != nil && last.sub && *s == *last {
			continue // the same part again: an anchor reached twice
		}
		if s.start < pos {
			return nil, nil, fmt.Errorf("overlapping edits at byte %d", s.start)
		}
		out = append(out, data[pos:s.start]...)
		out = append(out, s.text...)
		pos, last = s.end, s
	}
	return append(out, data[pos:]...), reps, nil
}

// replacement is a scalar replaced whole: its token as written (quotes
// included, tag and anchor not) and the token written in its place.
type replacement struct {
	node     *yaml.Node
	old, new string
}

// spliceVerified splices and proves the result: it parses into one
// document with the same tree as root except for the edited values, which
// hold exactly their new values (in any quoting style), and the fields
// added. A splice that fails the proof is a bug: it is an error (an
// *unsafeEditError) naming the line, never a broken document. A nil p
// skips the proof (for the benchmark that measures it).
//
// Parsing the result again would double the cost of a rewrite (its parse
// is most of it), so a document whose edits all replace one-line scalars
// whole, the common case, is proved token by token (verifyTokens); the
// others (parts of strings, aliases, added fields, block scalars, tagged
// values) are parsed again whole.
func spliceVerified(data []byte, root *yaml.Node, edits []edit, p tokenProver) ([]byte, error) {
	want := expectedValues(edits)
	ctx := &scalarContext{root: root, edits: edits}
	out, reps, err := splice(data, edits, want, ctx)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return out, nil
	}
	if tokensOnly(edits, reps) {
		err = verifyTokens(reps, want, ctx, p)
	} else {
		err = verifySplice(out, root, edits, want)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// expectedValues is the value each edited node must have after the edits.
// The sub edits of a node are applied in the order of their offsets, each
// part once. It allocates the map and the new values, nothing per edit.
func expectedValues(edits []edit) map[*yaml.Node]string {
	want := make(map[*yaml.Node]string, len(edits))
	for _, e := range edits {
		if !e.sub && e.insert == nil {
			want[e.node] = e.value
		}
	}
	// The sub edits of the nodes not edited whole, by node (in the order
	// of their first edit) and offset.
	type key struct{ group, at, i int }
	group := make(map[*yaml.Node]int, len(edits))
	keys := make([]key, 0, len(edits))
	for i, e := range edits {
		if _, isWhole := want[e.node]; !e.sub || e.insert != nil || isWhole {
			continue
		}
		g, ok := group[e.node]
		if !ok {
			g = len(group)
			group[e.node] = g
		}
		keys = append(keys, key{g, e.at, i})
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].group != keys[b].group {
			return keys[a].group < keys[b].group
		}
		return keys[a].at < keys[b].at
	})
	for k := 0; k < len(keys); {
		n := edits[keys[k].i].node
		var b strings.Builder
		b.Grow(len(n.Value))
		pos := 0
		for ; k < len(keys) && edits[keys[k].i].node == n; k++ {
			e := &edits[keys[k].i]
			if e.at < pos {
				continue // the same part again (an anchor), or overlapping
			}
			b.WriteString(n.Value[pos:e.at])
			b.WriteString(e.value)
			pos = e.at + len(e.old)
		}
		b.WriteString(n.Value[pos:])
		want[n] = b.String()
	}
	return want
}

// sameTree compares two parsed documents node by node (aliases by name,
// not followed): kinds, tags, styles, anchors and values are equal, except
// that the nodes of a in want hold their values in b as strings, in any
// style. It returns the path (below path) and the line in a of the first
// difference.
func sameTree(a, b *yaml.Node, want map[*yaml.Node]string, path string) (string, int, bool) {
	if rel, at, ok := sameNodes(a, b, want); !ok {
		return joinPath(path, rel), at.Line, false
	}
	return "", 0, true
}

// sameNodes is sameTree without the path, which it builds only for a
// difference (relative to a), with the node of a where it shows: a large
// document compares without allocating.
func sameNodes(a, b *yaml.Node, want map[*yaml.Node]string) (string, *yaml.Node, bool) {
	if v, ok := want[a]; ok {
		// An edited scalar, or an alias replaced by a value.
		return "", a, b.Kind == yaml.ScalarNode && b.Value == v && b.ShortTag() == "!!str" && (a.Kind == yaml.AliasNode || a.Anchor == b.Anchor)
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Style != b.Style || a.Anchor != b.Anchor || len(a.Content) != len(b.Content) || a.Value != b.Value {
		return "", a, false
	}
	if a.Kind == yaml.AliasNode {
		return "", a, true
	}
	for i := range a.Content {
		rel, at, ok := sameNodes(a.Content[i], b.Content[i], want)
		if ok {
			continue
		}
		switch {
		case a.Kind == yaml.MappingNode && i%2 == 1:
			rel = joinPath(a.Content[i-1].Value, rel)
		case a.Kind == yaml.SequenceNode:
			if rel != "" && !strings.HasPrefix(rel, "[") {
				rel = "." + rel
			}
			rel = index(i) + rel
		}
		return rel, at, false
	}
	return "", a, true
}

func joinPath(p, k string) string {
	switch {
	case p == "":
		return k
	case k == "":
		return p
	case strings.HasPrefix(k, "["):
		return p + k
	}
	return p + "." + k
}

func hasEmbedded(edits []edit) bool {
	for _, e := range edits {
		if e.embedded {
			return true
		}
	}
	return false
}

func withoutEmbedded(edits []edit) []edit {
	var out []edit
	for _, e := range edits {
		if !e.embedded {
			out = append(out, e)
		}
	}
	return out
}

// part is a part of a scalar's value to locate in the source: at is its
// byte offset in the value.
type part struct {
	at   int
	text string
}

// locateParts finds, in one pass over the source of scalar n, the byte
// offset in data of each part of its value (parts sorted by at; a part
// holds no white space, quote or backslash), into res (one per part), or
// -1 for a part that is not
// written verbatim (inside or across an escape sequence). It walks the
// source and the value side by side: verbatim characters match one to
// one, escape sequences ("\\x41", "”") produce known bytes, and runs of
// blanks and line breaks (indentation, folding) match runs of white space
// in the value. When the two disagree, the remaining parts are not
// located; nothing is guessed.
func locateParts(data []byte, lines []int, n *yaml.Node, parts []part, res []int) error {
	for i := range res {
		res[i] = -1
	}
	off, err := textpos.Offset(data, lines, n.Line, n.Column)
	if err != nil {
		return err
	}
	off = skipProperties(data, off)
	i := off // in data
	var quote byte
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		quote = '"'
	case n.Style&yaml.SingleQuotedStyle != 0:
		quote = '\''
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// The header line ("|", ">-", "|2 # comment") is not content.
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return fmt.Errorf("block scalar at line %d without content", n.Line)
		}
		i = off + nl + 1
	}
	if quote != 0 {
		if i >= len(data) || data[i] != quote {
			return fmt.Errorf("scalar at line %d, column %d does not start with its quote", n.Line, n.Column)
		}
		i++
	}
	v := n.Value
	j, p := 0, 0 // in v, in parts
	for p < len(parts) && i < len(data) && j <= len(v) {
		for p < len(parts) && parts[p].at < j {
			p++ // passed inside an escape sequence: not verbatim
		}
		if p == len(parts) {
			break
		}
		if parts[p].at == j {
			t := parts[p].text
			if i+len(t) <= len(data) && string(data[i:i+len(t)]) == t {
				for ; p < len(parts) && parts[p].at == j; p++ {
					res[p] = i
				}
				i, j = i+len(t), j+len(t)
				continue
			}
		}
		if j == len(v) {
			break
		}
		c := data[i]
		switch {
		case quote != 0 && c == quote && !(quote == '\'' && i+1 < len(data) && data[i+1] == '\''):
			return nil // the end of the scalar
		case quote == '\'' && c == '\'':
			if v[j] != '\'' {
				return nil
			}
			i, j = i+2, j+1
		case quote == '"' && c == '\\':
			if i+1 < len(data) && (data[i+1] == '\n' || data[i+1] == '\r') {
				i++ // an escaped line break: nothing in the value
				if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
					i++
				}
				i++
				continue
			}
			produced, size := unescape(data[i:])
			if size == 0 || !strings.HasPrefix(v[j:], produced) {
				return nil
			}
			i, j = i+size, j+len(produced)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			for i < len(data) && isSpace(data[i]) {
				i++
			}
			for j < len(v) && (v[j] == ' ' || v[j] == '\t' || v[j] == '\n') {
				j++
			}
		case c == 0xC2 || c == 0xE2:
			// NEL, LS and PS are line breaks in YAML: give up on them.
			if bytes.HasPrefix(data[i:], []byte("\u0085")) || bytes.HasPrefix(data[i:], []byte("\u2028")) || bytes.HasPrefix(data[i:], []byte("\u2029")) || v[j] != c {
				return nil
			}
			i, j = i+1, j+1
		default:
			if v[j] != c {
				return nil
			}
			i, j = i+1, j+1
		}
	}
	return nil
}

// simpleEscapes are the one-character escapes of double-quoted scalars.
var simpleEscapes = map[byte]string{'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f", 'r': "\r", 'e': "\x1b",
	' ': " ", '"': `"`, '\'': "'", '\\': `\`, '/': "/", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029"}

// unescape decodes the escape sequence at the start of b (b[0] is a
// backslash) of a double-quoted scalar: the bytes it stands for and its
// length, or n == 0 when it is not one.
func unescape(b []byte) (produced string, n int) {
	if len(b) < 2 {
		return "", 0
	}
	if s, ok := simpleEscapes[b[1]]; ok {
		return s, 2
	}
	digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[b[1]]
	if digits == 0 || len(b) < 2+digits {
		return "", 0
	}
	r, err := strconv.ParseUint(string(b[2:2+digits]), 16, 32)
	if err != nil || !utf8.ValidRune(rune(r)) {
		return "", 0
	}
	return string(rune(r)), 2 + digits
}

// locate finds the bytes of node's value and returns the span to replace and
// its replacement, in the same style where it holds the value (see
// scalarText; an alias is replaced in the style of the node it names).
func locate(data []byte, lines []int, n *yaml.Node, value string, ctx *scalarContext) (start, end int, text string, err error) {
	off, err := textpos.Offset(data, lines, n.Line, n.Column)
	if err != nil {
		return 0, 0, "", err
	}
	off = skipProperties(data, off)
	rest := data[off:]
	bad := func(what string) (int, int, string, error) {
		return 0, 0, "", fmt.Errorf("cannot locate the bytes of %s (%s) at line %d, column %d to rewrite in place", bounded.Quote(n.Value), what, n.Line, n.Column)
	}
	switch {
	case n.Kind == yaml.AliasNode:
		tok := "*" + n.Value
		if !bytes.HasPrefix(rest, []byte(tok)) || n.Alias == nil {
			return bad("alias")
		}
		if n.Alias.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return off, off + len(tok), doubleQuoted(value), nil
		}
		style := n.Alias.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
		return off, off + len(tok), ctx.text(value, style, n), nil
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '"' {
			return bad("double-quoted")
		}
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return off, off + i + 1, doubleQuoted(value), nil
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
				return off, off + i + 1, scalarText(value, yaml.SingleQuotedStyle, false), nil
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
		return off, off + len(n.Value), ctx.text(value, 0, n), nil
	}
}

// scalarContext says where the edited nodes of a document are written: in
// a flow collection or not, found out when first asked.
type scalarContext struct {
	root  *yaml.Node
	edits []edit
	flow  map[*yaml.Node]bool
}

// text is scalarText for a value written at node n in place of a scalar of
// style.
func (c *scalarContext) text(value string, style yaml.Style, n *yaml.Node) string {
	flow := false
	if style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 && plainOK(value, false) && !plainOK(value, true) {
		flow = c.inFlow(n)
	}
	return scalarText(value, style, flow)
}

// inFlow reports whether n, the node of an edit, is in a flow collection.
func (c *scalarContext) inFlow(n *yaml.Node) bool {
	if c.flow == nil {
		targets := make(map[*yaml.Node]bool, len(c.edits))
		for _, e := range c.edits {
			targets[e.node] = true
		}
		c.flow = flowNodes(c.root, targets)
	}
	return c.flow[n]
}

// subFits reports whether the sub edit e can be written in place in its
// scalar, whose value becomes whole: escaped in a double-quoted scalar,
// without a line break in a single-quoted one, and so that a plain scalar
// stays a plain scalar with that value. A block scalar's sub edits are
// written in place (the proof catches what they would break).
func subFits(e edit, whole string, ctx *scalarContext) bool {
	st := e.node.Style
	switch {
	case st&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return true
	case st&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		_, ok := inQuotes(e.value, st)
		return ok
	}
	if e.at > 0 && plainPart(e.value) {
		return true
	}
	if !plainOK(whole, false) {
		return false
	}
	return plainOK(whole, true) || !ctx.inFlow(e.node)
}

// plainPart reports whether v, put in place of a part of a plain scalar
// after its first byte, keeps it a plain scalar in any context: only
// bytes of references that end no plain scalar (a ":" only before another
// byte).
func plainPart(v string) bool {
	if v == "" || v[len(v)-1] == ':' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@' || c == '=' || c == '+') {
			return false
		}
	}
	return true
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
