package airgap

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/rehost/rehost/internal/yamlnode"
	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"go.yaml.in/yaml/v3"
)

// A key of the overlay may change, besides image fields, the copies of
// the chart's values that the chart itself writes into a ConfigMap: Istio's
// istiod renders its values as JSON into the istio-sidecar-injector
// ConfigMap (which is how injected sidecars find their proxy image) and
// into the "values" ConfigMap. Such a change is expected, and is the only
// non-image change allowed: a ConfigMap data entry that parses as a YAML
// or JSON map or list and differs from the chart's rendering only in
// leaves that hold a value the render set, at a path ending in that
// value's key path (the key is echoed where it is, or under a prefix). Any
// other change (a label, an annotation, a name, free text, a key echoed
// under another name) rejects the key.

// echoOnly reports whether two renderings of a document, image fields
// masked, differ only in echoes of the values set (see above).
func echoOnly(base, got *yaml.Node, set []Setting) bool {
	b, g := docMap(base), docMap(got)
	if b == nil || g == nil || scalar(yamlnode.First(b, "kind")) != "ConfigMap" || scalar(yamlnode.First(g, "kind")) != "ConfigMap" {
		return false
	}
	if len(b.Content) != len(g.Content) {
		return false
	}
	for i := 0; i+1 < len(b.Content); i += 2 {
		k := b.Content[i].Value
		if g.Content[i].Value != k {
			return false
		}
		bv, gv := b.Content[i+1], g.Content[i+1]
		if sameNode(bv, gv) {
			continue
		}
		if k != "data" || bv.Kind != yaml.MappingNode || gv.Kind != yaml.MappingNode || len(bv.Content) != len(gv.Content) {
			return false
		}
		for j := 0; j+1 < len(bv.Content); j += 2 {
			if bv.Content[j].Value != gv.Content[j].Value {
				return false
			}
			x, y := bv.Content[j+1], gv.Content[j+1]
			if sameNode(x, y) {
				continue
			}
			if x.Kind != yaml.ScalarNode || y.Kind != yaml.ScalarNode || !echoedText(x.Value, y.Value, set) {
				return false
			}
		}
	}
	return true
}

// echoedText reports whether the YAML or JSON text after differs from
// before only in echoes of the values set.
func echoedText(before, after string, set []Setting) bool {
	var x, y interface{}
	if yaml.Unmarshal([]byte(before), &x) != nil || yaml.Unmarshal([]byte(after), &y) != nil {
		return false
	}
	switch x.(type) {
	case map[string]interface{}, []interface{}:
	default:
		return false // free text, not a copy of values
	}
	return echoedTree(x, y, nil, set)
}

func echoedTree(x, y interface{}, path []interface{}, set []Setting) bool {
	switch xv := x.(type) {
	case map[string]interface{}:
		yv, ok := y.(map[string]interface{})
		if !ok {
			return false
		}
		for k := range xv {
			if _, ok := yv[k]; !ok {
				return false
			}
		}
		keys := make([]string, 0, len(yv))
		for k := range yv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(path[:len(path):len(path)], k)
			xe, had := xv[k]
			if !had {
				if !addedLeaves(yv[k], p, set) {
					return false
				}
				continue
			}
			if !echoedTree(xe, yv[k], p, set) {
				return false
			}
		}
		return true
	case []interface{}:
		yv, ok := y.([]interface{})
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !echoedTree(xv[i], yv[i], append(path[:len(path):len(path)], i), set) {
				return false
			}
		}
		return true
	}
	if reflect.DeepEqual(x, y) {
		return true
	}
	return isSet(y, path, set)
}

// addedLeaves reports whether every leaf of v, a subtree that only the
// new rendering has, is a value set at its path (a key absent from the
// chart's values that the overlay adds).
func addedLeaves(v interface{}, path []interface{}, set []Setting) bool {
	if m, ok := v.(map[string]interface{}); ok {
		if len(m) == 0 {
			return false
		}
		for k, e := range m {
			if !addedLeaves(e, append(path[:len(path):len(path)], k), set) {
				return false
			}
		}
		return true
	}
	return isSet(v, path, set)
}

// isSet reports whether v is the value of a change whose key path ends
// path.
func isSet(v interface{}, path []interface{}, set []Setting) bool {
	for _, c := range set {
		if len(c.Path) > len(path) || !valuetree.SamePath(c.Path, path[len(path)-len(c.Path):]) {
			continue
		}
		if want := c.value(); reflect.DeepEqual(v, want) || fmt.Sprint(v) == fmt.Sprint(want) && isScalarValue(v) && isScalarValue(want) {
			return true
		}
	}
	return false
}

func isScalarValue(v interface{}) bool {
	switch v.(type) {
	case string, bool, int, int64, float64:
		return true
	}
	return false
}

// docMap is the top mapping of a parsed document, or nil.
func docMap(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
