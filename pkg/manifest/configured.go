package manifest

import (
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// operatorFields finds the image fields of the known kinds (the built-in
// table, BuiltinImageFields) and the fields configured per group and kind
// (Config.ImageFields).
type operatorFields struct {
	paths map[groupKind][]rewrite.FieldPath
}

func (d operatorFields) detect(w *walker, o object) {
	for _, p := range d.paths[o.gk] {
		w.configured(o.node, p)
	}
}

// configured adds the values at an extra field path. The map holding an
// image field is a container: its args, command and env are scanned for
// embedded references.
func (w *walker) configured(n *yaml.Node, p rewrite.FieldPath) {
	leaf := p[len(p)-1]
	w.at(n, p[:len(p)-1], func(m *yaml.Node) {
		container := false
		eachValue(m, leaf.Key, func(v *yaml.Node) {
			if !leaf.Each {
				w.addImage(v, w.cr, leaf.Key)
				container = w.embedded && leaf.Key == "image"
				return
			}
			list := resolve(v)
			if list.Kind != yaml.SequenceNode {
				return
			}
			for i, it := range list.Content {
				w.addImage(it, w.cr, leaf.Key, index(i))
			}
		})
		if container {
			w.container(m)
		}
	})
}
