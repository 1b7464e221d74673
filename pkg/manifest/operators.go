package manifest

import (
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// operatorNotes notes the objects of operators' kinds that start images
// no manifest names (BuiltinOperatorKinds), unless a field that names
// them is set.
type operatorNotes struct {
	kinds map[groupKind][]operatorEntry
}

func (d operatorNotes) detect(w *walker, o object) {
	for i := range d.kinds[o.gk] {
		if e := &d.kinds[o.gk][i]; !anySet(o.node, e.unless) {
			w.notes = append(w.notes, note{Field: w.field(o.node), op: &e.OperatorKind})
		}
	}
}

// operatorEntry is a parsed OperatorKind.

// anySet reports whether any of the paths holds a non-empty value in n.
func anySet(n *yaml.Node, paths []rewrite.FieldPath) bool {
	for _, p := range paths {
		if !isEmpty(lookupPath(resolve(n), p)) {
			return true
		}
	}
	return false
}
