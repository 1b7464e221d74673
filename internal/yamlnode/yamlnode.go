// Package yamlnode holds the yaml.v3 node helpers the core packages share:
// aliases resolved, and the value of a key in a mapping under each of the
// rules a reader may follow when a key is repeated.
//
// A repeated key is not valid YAML, yet it occurs in rendered charts, and
// the programs that read one keep different values:
//
//   - Last: Helm reads a manifest's kind and metadata through a
//     YAML-to-JSON conversion (sigs.k8s.io/yaml), which keeps the last
//     value. pkg/rendered reads a document's head with Last, to sort and
//     fail documents as Helm does.
//   - First: kyaml's RNode.Field keeps the first value. pkg/manifest reads
//     the fields that say what a document is (kind, metadata, a setting
//     it needs one value of) with First, through its get, which adds merge
//     keys: as kustomize and KRM functions see them. pkg/helm finds the
//     key of a values file it edits, and a rendered ConfigMap's kind,
//     with First too (FirstPair gives the key node too); Relocate refuses
//     a values file with a repeated key, whose last value Helm reads.
//   - Each: where an image may lie, any of the values may be the one
//     deployed (it depends on the decoder; some reject the document), so
//     pkg/manifest walks every value (Each) and reports what it finds.
//
// The helpers match a key by its text: a scalar key node whose value is
// key; an alias used as a key matches none. They do not follow merge keys
// ("<<"): FirstOrMerge gives a mapping's merge value, and pkg/manifest
// follows it (once per mapping) where it reads a field. Every helper returns nil for
// a nil node or one that is not a mapping.
//
// ErrorLine reads the line out of a yaml.v3 syntax error, for
// pkg/manifest and pkg/rendered. pkg/rewrite finds the line of a config
// error with First (yaml.v3 has refused a repeated key in the config
// before). The package uses yaml.v3 only, as the core module does.
package yamlnode

import "go.yaml.in/yaml/v3"

// Resolve returns the node the alias n names, or n itself (nil for nil).
// yaml.v3 never anchors an alias, so one step resolves it.
func Resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

// IsKey reports whether k is the mapping key key: a scalar whose text is
// key.
func IsKey(k *yaml.Node, key string) bool {
	return k.Kind == yaml.ScalarNode && k.Value == key
}

// First returns the value of the first key in mapping m (kyaml's rule),
// nil when m has none.
func First(m *yaml.Node, key string) *yaml.Node {
	_, v := FirstPair(m, key)
	return v
}

// FirstPair is First with the key node, for a caller that edits the key
// or reads its comments.
func FirstPair(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if IsKey(m.Content[i], key) {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// Last returns the value of the last key in mapping m (the rule of a
// YAML-to-JSON conversion, Helm's), nil when m has none.
func Last(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if IsKey(m.Content[i], key) {
			v = m.Content[i+1]
		}
	}
	return v
}

// Each calls fn with every value of key in mapping m, in document order,
// and reports whether it called fn.
func Each(m *yaml.Node, key string, fn func(v *yaml.Node)) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	found := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		if IsKey(m.Content[i], key) {
			found = true
			fn(m.Content[i+1])
		}
	}
	return found
}

// FirstOrMerge returns, in one pass over mapping m, the value of the
// first key (First), or, when m has none, the value of m's merge key
// ("<<" tagged !!merge, the last one if repeated), unresolved, for the
// caller to follow. Both are nil when m has neither.
func FirstOrMerge(m *yaml.Node, key string) (v, merge *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if IsKey(k, key) {
			return m.Content[i+1], nil
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			merge = m.Content[i+1]
		}
	}
	return nil, merge
}
