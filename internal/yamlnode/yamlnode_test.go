package yamlnode

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// root parses doc and returns its top node.
func root(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n.Content[0]
}

// text is what a found value holds: its scalar text, "<alias>" for an
// alias, "<map>" or "<list>", "" for nil.
func text(n *yaml.Node) string {
	switch {
	case n == nil:
		return ""
	case n.Kind == yaml.AliasNode:
		return "<alias>"
	case n.Kind == yaml.MappingNode:
		return "<map>"
	case n.Kind == yaml.SequenceNode:
		return "<list>"
	}
	return n.Value
}

// TestKeyRules: the value each rule gives for a key, repeated or not.
func TestKeyRules(t *testing.T) {
	for _, tt := range []struct {
		name, doc, key      string
		in                  string // the key of the mapping to look in; "" for the top
		first, last, each   string // each: every value, joined by ","
		firstOrMergeIsFirst bool   // FirstOrMerge gives First's value and no merge
	}{
		{name: "once", doc: "kind: Pod\n", key: "kind", first: "Pod", last: "Pod", each: "Pod", firstOrMergeIsFirst: true},
		{name: "repeated", doc: "kind: Pod\nx: 1\nkind: Service\nkind: Job\n", key: "kind", first: "Pod", last: "Job", each: "Pod,Service,Job", firstOrMergeIsFirst: true},
		{name: "absent", doc: "a: 1\n", key: "kind"},
		{name: "quoted key", doc: "\"kind\": Pod\n'kind': Job\n", key: "kind", first: "Pod", last: "Job", each: "Pod,Job", firstOrMergeIsFirst: true},
		{name: "alias value", doc: "a: &x Pod\nkind: *x\n", key: "kind", first: "<alias>", last: "<alias>", each: "<alias>", firstOrMergeIsFirst: true},
		{name: "alias key matches none", doc: "k: &kind v\n*kind : Pod\n", key: "kind"},
		{name: "map key matches none", doc: "? {kind: a}\n: Pod\n", key: ""},
		{name: "empty key", doc: "\"\": Pod\n", key: "", first: "Pod", last: "Pod", each: "Pod", firstOrMergeIsFirst: true},
		{name: "merge key not followed", doc: "b: &b {kind: Pod}\nc:\n  <<: *b\n", key: "kind", in: "c"},
		{name: "own key after merge", doc: "b: &b {kind: Pod}\nc:\n  <<: *b\n  kind: Job\n", key: "kind", in: "c", first: "Job", last: "Job", each: "Job", firstOrMergeIsFirst: true},
		{name: "not a mapping", doc: "[kind, Pod]\n", key: "kind"},
		{name: "scalar", doc: "kind\n", key: "kind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := root(t, tt.doc)
			if tt.in != "" {
				m = Resolve(First(m, tt.in))
			}
			if got := text(First(m, tt.key)); got != tt.first {
				t.Errorf("First = %q, want %q", got, tt.first)
			}
			if k, v := FirstPair(m, tt.key); text(v) != tt.first || (v != nil) != (k != nil) || k != nil && k.Value != tt.key {
				t.Errorf("FirstPair = %v, %q; want the key and %q", k, text(v), tt.first)
			}
			if got := text(Last(m, tt.key)); got != tt.last {
				t.Errorf("Last = %q, want %q", got, tt.last)
			}
			var each []string
			found := Each(m, tt.key, func(v *yaml.Node) { each = append(each, text(v)) })
			if got := strings.Join(each, ","); got != tt.each || found != (tt.each != "") {
				t.Errorf("Each = %q, %v; want %q", got, found, tt.each)
			}
			v, merge := FirstOrMerge(m, tt.key)
			if tt.firstOrMergeIsFirst && (text(v) != tt.first || merge != nil) {
				t.Errorf("FirstOrMerge = %q, %v; want %q and no merge", text(v), merge, tt.first)
			}
			if !tt.firstOrMergeIsFirst && v != nil {
				t.Errorf("FirstOrMerge = %q, want none", text(v))
			}
		})
	}
}

// TestFirstOrMerge: without the key, the merge key's value, the last one
// when "<<" is repeated; a "<<" that is not a merge key (quoted) is none.
func TestFirstOrMerge(t *testing.T) {
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"merge", "a: &a {x: 1}\nc: {<<: *a, y: 2}\n", "<alias>"},
		{"merge list", "a: &a {x: 1}\nb: &b {x: 2}\nc: {<<: [*a, *b]}\n", "<list>"},
		{"merge map", "c: {<<: {x: 1}}\n", "<map>"},
		{"last merge", "a: &a {x: 1}\nc:\n  <<: {x: 2}\n  <<: *a\n", "<alias>"},
		{"quoted <<", "a: &a {x: 1}\nc: {\"<<\": *a}\n", ""},
		{"no merge", "c: {y: 2}\n", ""},
		{"key present", "a: &a {x: 1}\nc: {<<: *a, x: 3}\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Resolve(First(root(t, tt.doc), "c"))
			v, merge := FirstOrMerge(c, "x")
			if got := text(merge); got != tt.want {
				t.Errorf("merge = %q, want %q", got, tt.want)
			}
			if tt.name == "key present" && text(v) != "3" {
				t.Errorf("value = %q, want 3", text(v))
			}
		})
	}
}

func TestResolve(t *testing.T) {
	m := root(t, "a: &x {b: 1}\nc: *x\n")
	a, c := First(m, "a"), First(m, "c")
	for _, tt := range []struct {
		name     string
		in, want *yaml.Node
	}{
		{"alias", c, a},
		{"anchored", a, a},
		{"nil", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Resolve(tt.in); got != tt.want {
				t.Errorf("Resolve = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNil(t *testing.T) {
	if First(nil, "a") != nil || Last(nil, "a") != nil || Each(nil, "a", func(*yaml.Node) { t.Error("called") }) {
		t.Error("a nil mapping has values")
	}
	if v, m := FirstOrMerge(nil, "a"); v != nil || m != nil {
		t.Error("a nil mapping has a merge")
	}
}

func TestErrorLine(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		line      int
		msg       string
		ok        bool
	}{
		{"unclosed list", "a: 1\nb: [\n", 3, "did not find expected node content", true},
		{"parser error", "a: 1\n- b\n", 2, "did not find expected key", true},
		{"scanner error", "a: 1\nb: \"x\n", 2, "found unexpected end of stream", true},
		{"first line", "a: b: c\n", 1, "mapping values are not allowed in this context", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			err := yaml.Unmarshal([]byte(tt.doc), &n)
			if err == nil {
				t.Fatal("no error")
			}
			line, msg, ok := ErrorLine(err)
			if line != tt.line || !strings.HasPrefix(msg, tt.msg) || ok != tt.ok {
				t.Errorf("ErrorLine(%q) = %d, %q, %v; want %d, %q…, %v", err, line, msg, ok, tt.line, tt.msg, tt.ok)
			}
		})
	}
}
