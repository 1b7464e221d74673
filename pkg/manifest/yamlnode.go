package manifest

import (
	"strconv"
	"strings"

	"github.com/rehost/rehost/internal/yamlnode"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// The YAML node helpers of the package: merge keys, duplicate keys, paths.
// The rules for a repeated key are internal/yamlnode's: get reads the
// first value (kyaml's rule) where one value is needed, eachValue walks
// every value where an image may lie; get and eachValue add merge keys
// ("<<"), followed once per mapping.

// isEmpty reports whether n is absent, null or the empty string.
func isEmpty(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "")
}

func pathSegments(p rewrite.FieldPath) []string {
	out := make([]string, len(p))
	for i, s := range p {
		out[i] = s.Key
	}
	return out
}

func pathString(p rewrite.FieldPath) string { return strings.Join(pathSegments(p), ".") }

// lookupRaw is lookupPath without resolving the last node: an alias stays
// an alias, for the place of a field.
func lookupRaw(m *yaml.Node, p rewrite.FieldPath) *yaml.Node {
	if len(p) == 0 {
		return m
	}
	if m = lookupPath(m, p[:len(p)-1]); m == nil || p[len(p)-1].Each {
		return nil
	}
	return get(m, p[len(p)-1].Key)
}

func lookupPath(m *yaml.Node, p rewrite.FieldPath) *yaml.Node {
	for _, s := range p {
		if s.Each {
			return nil
		}
		m = resolve(get(m, s.Key))
	}
	return m
}

// isString reports whether n is a scalar that YAML resolves to a string.
func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "" && n.Style != 0)
}

// followOnce resolves an alias the first time its target is reached in a
// walk (seen records targets); it reports false when the target was walked
// already, so alias bombs cost one walk of each node.
func followOnce(n *yaml.Node, seen *map[*yaml.Node]bool) (*yaml.Node, bool) {
	if n.Kind != yaml.AliasNode {
		return n, true
	}
	if (*seen)[n.Alias] {
		return nil, false
	}
	if *seen == nil {
		*seen = map[*yaml.Node]bool{}
	}
	(*seen)[n.Alias] = true
	return n.Alias, true
}

// resolve is yamlnode.Resolve, short for the package's many uses.
func resolve(n *yaml.Node) *yaml.Node { return yamlnode.Resolve(n) }

// get returns the value of key in mapping m, following merge keys ("<<").
// A duplicated key yields its first value: where images may lie, use
// eachValue. Each mapping is searched once,
// so merges of a mapping into itself, or fan-outs of merges, end quickly.
func get(m *yaml.Node, key string) *yaml.Node {
	return getMerged(m, key, nil)
}

func getMerged(m *yaml.Node, key string, seen map[*yaml.Node]bool) *yaml.Node {
	if m == nil || seen[m] {
		return nil
	}
	v, merge := yamlnode.FirstOrMerge(m, key)
	if v != nil {
		return v
	}
	if merge = resolve(merge); merge == nil {
		return nil
	}
	if seen == nil {
		seen = map[*yaml.Node]bool{}
	}
	seen[m] = true
	if merge.Kind == yaml.SequenceNode {
		for _, mm := range merge.Content {
			if v := getMerged(resolve(mm), key, seen); v != nil {
				return v
			}
		}
		return nil
	}
	return getMerged(merge, key, seen)
}

// eachValue calls fn with every value of key in mapping m, in document
// order: a duplicated key yields each of its values, since a decoder keeps
// one of them (which one depends on the decoder; some reject the document)
// and any may be the image deployed. Without the key in m itself, it calls fn with the
// value a merge key ("<<") gives, if any.
func eachValue(m *yaml.Node, key string, fn func(v *yaml.Node)) {
	if !yamlnode.Each(m, key, fn) {
		if v := get(m, key); v != nil {
			fn(v)
		}
	}
}

// eachItem calls fn with the index and the node (alias unresolved) of
// every item of every list under key in m, through every value of a
// duplicated key; values that are not lists are skipped.
func eachItem(m *yaml.Node, key string, fn func(i int, item *yaml.Node)) {
	eachValue(m, key, func(l *yaml.Node) {
		if list := resolve(l); list != nil && list.Kind == yaml.SequenceNode {
			for i, item := range list.Content {
				fn(i, item)
			}
		}
	})
}

// eachAt calls fn with every map at path below m (aliases resolved),
// through every value of a duplicated key.
func eachAt(m *yaml.Node, path []string, fn func(m *yaml.Node)) {
	if len(path) == 0 {
		if m.Kind == yaml.MappingNode {
			fn(m)
		}
		return
	}
	eachValue(m, path[0], func(v *yaml.Node) { eachAt(resolve(v), path[1:], fn) })
}

func scalar(n *yaml.Node) string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func index(i int) string { return "[" + strconv.Itoa(i) + "]" }

// splitPath splits a field path, "spec.template.spec.containers[0].image",
// into keys and "[i]" indexes.
func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// lookupSegs follows keys and "[i]" indexes from the object in root.
func lookupSegs(root *yaml.Node, segs []string) *yaml.Node {
	n := resolve(root)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = resolve(n.Content[0])
	}
	for _, s := range segs {
		if n == nil {
			return nil
		}
		if strings.HasPrefix(s, "[") {
			i, err := strconv.Atoi(strings.Trim(s, "[]"))
			if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = resolve(n.Content[i])
			continue
		}
		n = resolve(get(n, s))
	}
	return n
}
