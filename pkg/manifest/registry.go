package manifest

import (
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// registrySettings finds the registry settings of operators' kinds
// (BuiltinRegistryFields): present, or absent where the entry adds them.
type registrySettings struct {
	entries map[groupKind][]registryEntry
}

func (d registrySettings) detect(w *walker, o object) {
	for _, r := range d.entries[o.gk] {
		w.registry(o.node, r)
	}
}

// registryEntry is a parsed RegistryField.

// registry adds the registry setting r of the object n, present or, for
// an entry that adds it, absent.
func (w *walker) registry(n *yaml.Node, r registryEntry) {
	leaf := r.path[len(r.path)-1].Key
	w.atPartial(n, r.path[:len(r.path)-1], func(m *yaml.Node, missing []string) {
		if m.Kind != yaml.MappingNode { // "spec:" null
			if r.Add {
				f := w.field(m)
				f.Type, f.Default = TypeRegistry, true
				w.out = append(w.out, f)
			}
			return
		}
		if missing != nil {
			if r.Add {
				f := w.field(m)
				f.Path = w.pathString(append(missing, leaf)...)
				f.Type, f.Default, f.Add, f.Slash = TypeRegistry, true, append(missing, leaf), r.TrailingSlash
				w.out = append(w.out, f)
			}
			return
		}
		v := get(m, leaf)
		if v == nil {
			if r.Add {
				f := w.field(m)
				f.Path = w.pathString(leaf)
				f.Type, f.Default, f.Add, f.Slash = TypeRegistry, true, []string{leaf}, r.TrailingSlash
				w.out = append(w.out, f)
			}
			return
		}
		f := w.field(v, leaf)
		f.Type = TypeRegistry
		isDefault := isEmpty(f.Node)
		for _, d := range r.Defaults {
			isDefault = isDefault || isString(f.Node) && f.Node.Value == d
		}
		if isDefault {
			if !r.Add {
				return
			}
			f.Default, f.Slash = true, r.TrailingSlash
		}
		w.out = append(w.out, f)
	})
}

// atPartial is at for a path that may stop short: fn gets each map at p
// below n with missing nil; or, where a key is absent and no list follows,
// the deepest map reached and the keys missing below it; or, where a key's
// value is null ("spec:" with nothing), that null node and the keys below
// it. Other values that are not maps end the path without a call.
func (w *walker) atPartial(n *yaml.Node, p rewrite.FieldPath, fn func(m *yaml.Node, missing []string)) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	if len(p) == 0 {
		fn(n, nil)
		return
	}
	v := get(n, p[0].Key)
	if v == nil || isEmpty(v) && resolve(v).Kind == yaml.ScalarNode && resolve(v).Tag == "!!null" {
		for _, s := range p {
			if s.Each {
				return // nothing to add to a list that is not there
			}
		}
		if v == nil {
			fn(n, pathSegments(p))
		} else {
			w.push(p[0].Key)
			fn(resolve(v), pathSegments(p[1:]))
			w.pop(1)
		}
		return
	}
	w.push(p[0].Key)
	defer w.pop(1)
	if !p[0].Each {
		w.atPartial(v, p[1:], fn)
		return
	}
	list := resolve(v)
	if list.Kind != yaml.SequenceNode {
		return
	}
	for i, it := range list.Content {
		w.push(index(i))
		w.atPartial(it, p[1:], fn)
		w.pop(1)
	}
}
