package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// duplicate is a key written more than once in one mapping whose values
// hold image references the finder found.
type duplicate struct {
	key string
	// keys are the key's nodes, in document order.
	keys []*yaml.Node
	// path is the field path of the key from the document root.
	path string
	// root says the mapping is the document's root.
	root bool
	// field is a reference found under the key, for the object's identity.
	field Field
}

// duplicateKeys returns the duplicated keys of the document in root whose
// values hold one of the found references, in document order. Aliases are
// not followed: a reference belongs to the place it was found at (an alias
// at an image field, the anchored value elsewhere).
func duplicateKeys(root *yaml.Node, found ...[]Field) []duplicate {
	if !hasDuplicates(root) {
		return nil
	}
	d := dupFinder{at: map[*yaml.Node]Field{}}
	for _, fs := range found {
		for _, f := range fs {
			// A reference reached through an alias is at the alias.
			if _, ok := d.at[f.place()]; !ok {
				d.at[f.place()] = f
			}
		}
	}
	if len(d.at) == 0 {
		return nil
	}
	d.walk(root, 0)
	// The walk finds inner keys first.
	sort.SliceStable(d.out, func(i, j int) bool {
		a, b := d.out[i].keys[0], d.out[j].keys[0]
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	return d.out
}

type dupFinder struct {
	at   map[*yaml.Node]Field // the found references by node
	path []string
	out  []duplicate
}

// walk reports the duplicated keys below n and returns a reference found
// in n, if any.
func (d *dupFinder) walk(n *yaml.Node, depth int) (Field, bool) {
	var first Field
	found := false
	note := func(f Field, ok bool) {
		if ok && !found {
			first, found = f, true
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			note(d.walk(c, depth))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.path = append(d.path, index(i))
			note(d.walk(c, depth+1))
			d.path = d.path[:len(d.path)-1]
		}
	case yaml.MappingNode:
		dups := duplicatedKeys(n)
		var holds map[int]Field // pair index -> reference found in its value
		for i := 0; i+1 < len(n.Content); i += 2 {
			d.path = append(d.path, n.Content[i].Value)
			f, ok := d.walk(n.Content[i+1], depth+1)
			d.path = d.path[:len(d.path)-1]
			note(f, ok)
			if ok && dups != nil {
				if holds == nil {
					holds = map[int]Field{}
				}
				holds[i] = f
			}
		}
		for _, group := range dups {
			var f Field
			held := false
			for _, i := range group {
				if hf, ok := holds[i]; ok && !held {
					f, held = hf, true
				}
			}
			if !held {
				continue
			}
			keys := make([]*yaml.Node, len(group))
			for k, i := range group {
				keys[k] = n.Content[i]
			}
			d.out = append(d.out, duplicate{key: keys[0].Value, keys: keys, path: joinSegments(append(d.path, keys[0].Value)), root: depth == 0, field: f})
		}
	case yaml.ScalarNode, yaml.AliasNode:
		f, ok := d.at[n]
		note(f, ok)
	}
	return first, found
}

// hasDuplicates reports whether a mapping in n has a duplicated key. It
// allocates nothing for mappings of up to 16 keys.
func hasDuplicates(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if hasDuplicates(c) {
				return true
			}
		}
	case yaml.MappingNode:
		if duplicatedKeys(n) != nil {
			return true
		}
		for i := 1; i < len(n.Content); i += 2 {
			if hasDuplicates(n.Content[i]) {
				return true
			}
		}
	}
	return false
}

// duplicatedKeys returns, for each scalar key written more than once in
// mapping m, the indexes in m.Content of its key nodes; nil when there is
// none.
func duplicatedKeys(m *yaml.Node) [][]int {
	n := len(m.Content) / 2
	if n < 2 {
		return nil
	}
	var groups [][]int
	if n <= 16 {
		for i := 0; i < 2*n; i += 2 {
			k := m.Content[i]
			if k.Kind != yaml.ScalarNode || sameKeyBefore(m, i) {
				continue
			}
			var group []int
			for j := i + 2; j < 2*n; j += 2 {
				if o := m.Content[j]; o.Kind == yaml.ScalarNode && o.Value == k.Value {
					if group == nil {
						group = []int{i}
					}
					group = append(group, j)
				}
			}
			if group != nil {
				groups = append(groups, group)
			}
		}
		return groups
	}
	byKey := map[string][]int{}
	var order []string
	for i := 0; i < 2*n; i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode {
			if len(byKey[k.Value]) == 0 {
				order = append(order, k.Value)
			}
			byKey[k.Value] = append(byKey[k.Value], i)
		}
	}
	for _, k := range order {
		if len(byKey[k]) > 1 {
			groups = append(groups, byKey[k])
		}
	}
	return groups
}

// sameKeyBefore reports whether the key at m.Content[i] was written before
// in m.
func sameKeyBefore(m *yaml.Node, i int) bool {
	for j := 0; j < i; j += 2 {
		if o := m.Content[j]; o.Kind == yaml.ScalarNode && o.Value == m.Content[i].Value {
			return true
		}
	}
	return false
}

// joinSegments joins path segments as Field.Path does.
func joinSegments(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		if b.Len() > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// duplicateWarnings turns the duplicated keys that hold references (image
// fields, embedded references, GitOps chart sources) into warnings at the
// second occurrence of each; line gives a node's line in the input (0 when
// unknown). Objects run together (see runTogether) get one warning each
// instead of one per key of the document's root.
func duplicateWarnings(root *yaml.Node, fields, emb, charts []Field, file string, line func(*yaml.Node) int) []error {
	dups := duplicateKeys(root, fields, emb, charts)
	if len(dups) == 0 {
		return nil
	}
	var out []error
	top := root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	objs := runTogether(top)
	for _, o := range objs[min(1, len(objs)):] {
		meta := resolve(get(o, "metadata"))
		loc := rewrite.Location{File: file, Line: line(o.Content[0]), Kind: scalar(get(o, "kind")), Namespace: scalar(get(meta, "namespace")), Name: scalar(get(meta, "name"))}
		out = append(out, &Error{Location: loc, Err: errors.New(`no "---" line before this object: decoders read it as duplicate keys of the object before it and keep one of each; rehost lists and rewrites the images of each object: add the "---" line`)})
	}
	for _, dk := range dups {
		if dk.root && objs != nil {
			continue
		}
		lines := make([]string, len(dk.keys))
		for i, k := range dk.keys {
			lines[i] = strconv.Itoa(line(k))
		}
		where := "lines " + strings.Join(lines, ", ")
		if line(dk.keys[0]) == 0 {
			where = fmt.Sprintf("%d times", len(dk.keys))
		}
		loc := rewrite.Location{File: file, Line: line(dk.keys[1]), Kind: dk.field.Kind, Namespace: dk.field.Namespace, Name: dk.field.Name, Field: dk.path}
		what := "holds image references: the images of every occurrence are listed and rewritten"
		if dk.field.Type == TypeChart {
			what = "holds chart sources: every occurrence is listed and rewritten"
		}
		out = append(out, &Error{Location: loc, Err: fmt.Errorf("duplicate key %s (%s) %s, but a decoder keeps only one of them", bounded.Quote(dk.key), where, what)})
	}
	return out
}
