package manifest

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// scalarValues are values at the edges of what a plain scalar holds.
var scalarValues = []string{
	"nginx", "sea.hub:5000/library/nginx:1.25", "[::1]:5000/library/nginx", "[fd00::1]:5000/x/y:1@sha256:" + strings.Repeat("a", 64),
	"oci://[::1]:5000/charts", "sea.hub:5000/[x]", "a,b", "{x}", "x}", "a: b", "a:b", "x:", ":x", "?x", "? x", "-x", "- x", "--", "---x", "...x",
	"#x", "x #y", "x#y", "&x", "*x", "!x", "|x", ">x", "%x", "@x", "`x", "'q'", `"d"`, "it's", `back\slash`, "tab\tx", "line\nbreak", "cr\rx",
	"nel\u0085x", "ls\u2028x", "del\x7fx", "bom\ufeffx", "nul\x00x", "é", "😀", " lead", "trail ", "true", "FALSE", "yes", "on", "1.5", "0x1F", "1e3",
	".inf", "null", "~", "", "<<", "2001-12-14", "= x", "a\\b",
}

// readsAs parses text (a document holding the token) and returns the one
// scalar at path: the mapping's value, or the sequence's only item.
func readsAs(text string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("%d documents", len(doc.Content))
	}
	n := doc.Content[0]
	switch {
	case n.Kind == yaml.MappingNode && len(n.Content) == 2:
		return n.Content[1], nil
	case n.Kind == yaml.SequenceNode && len(n.Content) == 1:
		return n.Content[0], nil
	}
	return nil, fmt.Errorf("not one value: kind %d with %d nodes", n.Kind, len(n.Content))
}

// TestScalarText: every value, written in place of a plain, single- or
// double-quoted scalar, in a block or a flow map or list, reads back as
// that string; a quoted scalar stays in its quotes where they can hold
// the value; a plain one stays plain where a plain scalar can hold it.
func TestScalarText(t *testing.T) {
	contexts := []struct {
		name   string
		flow   bool
		format string
	}{
		{"block map", false, "k: %s\n"},
		{"block list", false, "- %s\n"},
		{"flow map", true, "{k: %s}\n"},
		{"flow list", true, "[%s]\n"},
		{"nested flow", true, "a:\n  - {b: [%s, c]}\n"},
	}
	plain, ran := 0, 0
	for _, c := range contexts {
		t.Run(c.name, func(t *testing.T) {
			ran++
			for _, v := range scalarValues {
				for _, style := range []yaml.Style{0, yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle} {
					tok := scalarText(v, style, c.flow)
					text := fmt.Sprintf(c.format, tok)
					if c.name == "nested flow" {
						var doc yaml.Node
						if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
							t.Errorf("%q (style %d) in %s: %s does not parse: %v", v, style, c.name, text, err)
							continue
						}
						n := doc.Content[0].Content[1].Content[0].Content[1].Content[0]
						if n.Value != v || n.ShortTag() != "!!str" {
							t.Errorf("%q (style %d) in %s: %s reads as %s %q", v, style, c.name, text, n.ShortTag(), n.Value)
						}
						continue
					}
					n, err := readsAs(text)
					if err != nil {
						t.Errorf("%q (style %d) in %s: %q: %v", v, style, c.name, text, err)
						continue
					}
					if n.Value != v || n.ShortTag() != "!!str" {
						t.Errorf("%q (style %d) in %s: %q reads as %s %q", v, style, c.name, text, n.ShortTag(), n.Value)
					}
					switch {
					case style == yaml.DoubleQuotedStyle && tok[0] != '"':
						t.Errorf("%q: a double-quoted scalar became %s", v, tok)
					case style == yaml.SingleQuotedStyle && tok[0] != '\'' && singleOK(v):
						t.Errorf("%q: a single-quoted scalar became %s", v, tok)
					case style == 0 && tok == v:
						plain++
					}
				}
			}
		})
	}
	// Over every context: a -run selecting one checks no count.
	if ran == len(contexts) && plain < 20 {
		t.Errorf("only %d plain tokens: plainOK refuses too much", plain)
	}
	for _, tt := range []struct {
		name  string
		value string
		flow  bool
		want  string
	}{
		{"reference in block", "sea.hub:5000/library/nginx:1.25", false, "sea.hub:5000/library/nginx:1.25"},
		{"reference in flow", "sea.hub:5000/library/nginx:1.25", true, "sea.hub:5000/library/nginx:1.25"},
		{"IPv6 in block", "[::1]:5000/library/nginx", false, "'[::1]:5000/library/nginx'"},
		{"IPv6 in flow", "[::1]:5000/library/nginx", true, "'[::1]:5000/library/nginx'"},
		{"oci IPv6 in block", "oci://[::1]:5000/charts", false, "oci://[::1]:5000/charts"},
		{"oci IPv6 in flow", "oci://[::1]:5000/charts", true, "'oci://[::1]:5000/charts'"},
		{"apostrophe", "it's", false, "it's"},
		{"apostrophe and brackets in flow", "it's [x]", true, "'it''s [x]'"},
		{"boolean", "true", false, "'true'"},
		{"line break", "line\nbreak", false, `"line\nbreak"`},
		{"DEL", "del\x7f", false, `"del\x7f"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := scalarText(tt.value, 0, tt.flow); got != tt.want {
				t.Errorf("scalarText(%q, plain, flow %v) = %s, want %s", tt.value, tt.flow, got, tt.want)
			}
		})
	}
}

// FuzzScalarText: any valid UTF-8 value, written in any style in a block
// map or a flow list, reads back as that string.
func FuzzScalarText(f *testing.F) {
	for _, v := range scalarValues {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			return // documents are valid UTF-8 (Rewriter.Rewrite checks)
		}
		for _, style := range []yaml.Style{0, yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle} {
			for _, format := range []string{"k: %s\n", "[%s]\n"} {
				text := fmt.Sprintf(format, scalarText(v, style, format[0] == '['))
				n, err := readsAs(text)
				if err != nil {
					t.Fatalf("%q (style %d): %q: %v", v, style, text, err)
				}
				if n.Value != v || n.ShortTag() != "!!str" {
					t.Fatalf("%q (style %d): %q reads as %s %q", v, style, text, n.ShortTag(), n.Value)
				}
			}
		}
	})
}
