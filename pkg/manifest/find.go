package manifest

import (
	"strconv"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Field is an image field found in an object.
type Field struct {
	// Node is the field's value, aliases resolved. It is not necessarily a
	// string: validating the value is the caller's job.
	Node *yaml.Node
	// Path is the field path from the document root,
	// "spec.template.spec.containers[0].image".
	Path string
	// Kind, Namespace and Name identify the object holding the field; an item
	// of a List is an object of its own.
	Kind, Namespace, Name string
}

// podSpecPaths is where the built-in workload kinds keep their PodSpec, for
// any apiVersion.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"PodTemplate":           {"template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"Deployment":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
}

// containerListKeys are the PodSpec keys that hold container lists; the same
// keys identify container lists in custom resources.
var containerListKeys = []string{"containers", "initContainers", "ephemeralContainers"}

const crdKind = "CustomResourceDefinition"

type groupKind struct{ group, kind string }

// Finder finds the image fields of Kubernetes objects:
//   - the PodSpec images of the built-in workload kinds (containers,
//     initContainers, ephemeralContainers and image volumes);
//   - in any other kind but CustomResourceDefinition, every list under a
//     containers, initContainers or ephemeralContainers key whose items are
//     maps with a string image (Argo Rollouts, Knative, OpenKruise, ...), and
//     the image volumes beside it;
//   - the extra fields configured per group and kind;
//   - the items of List kinds, recursively.
//
// A Finder is immutable and safe for concurrent use.
type Finder struct {
	extra map[groupKind][]rewrite.FieldPath
	// keys are the map keys that can hold an image; a document without any of
	// them as a substring holds no image field.
	keys []string
}

// NewFinder returns a Finder that also finds the given extra fields.
func NewFinder(extra []rewrite.ImageField) (*Finder, error) {
	f := &Finder{extra: map[groupKind][]rewrite.FieldPath{}, keys: []string{"image"}}
	for _, e := range extra {
		p, err := rewrite.ParseFieldPath(e.Path)
		if err != nil {
			return nil, err
		}
		gk := groupKind{e.Group, e.Kind}
		f.extra[gk] = append(f.extra[gk], p)
		if leaf := p[len(p)-1].Key; !strings.Contains(leaf, "image") {
			f.keys = append(f.keys, leaf)
		}
	}
	return f, nil
}

// Find returns the image fields of the object in node (a document or a
// mapping), in document order of discovery. Objects without a kind, and
// CustomResourceDefinitions, have none.
func (f *Finder) Find(node *yaml.Node) []Field {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	w := walker{f: f}
	w.object(node)
	return w.dedup()
}

type walker struct {
	f    *Finder
	path []string // segments: keys, and "[i]" for list items
	obj  Field    // Kind, Namespace, Name of the current object
	out  []Field
	seen map[*yaml.Node]bool // alias targets already searched
}

func (w *walker) push(seg ...string) { w.path = append(w.path, seg...) }
func (w *walker) pop(n int)          { w.path = w.path[:len(w.path)-n] }

func (w *walker) pathString(extra ...string) string {
	var b strings.Builder
	for _, s := range append(w.path[:len(w.path):len(w.path)], extra...) {
		if b.Len() > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

func (w *walker) add(n *yaml.Node, extra ...string) {
	w.out = append(w.out, Field{Node: resolve(n), Path: w.pathString(extra...), Kind: w.obj.Kind, Namespace: w.obj.Namespace, Name: w.obj.Name})
}

func (w *walker) object(n *yaml.Node) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return
	}
	kind := scalar(get(n, "kind"))
	if kind == "" || kind == crdKind {
		return
	}
	if items := resolve(get(n, "items")); items != nil && items.Kind == yaml.SequenceNode && strings.HasSuffix(kind, "List") {
		for i, it := range items.Content {
			w.push("items", index(i))
			w.object(it)
			w.pop(2)
		}
		return
	}
	parent := w.obj
	w.obj = Field{Kind: kind, Name: scalar(get(resolve(get(n, "metadata")), "name")), Namespace: scalar(get(resolve(get(n, "metadata")), "namespace"))}
	defer func() { w.obj = parent }()

	if p, ok := podSpecPaths[kind]; ok {
		if spec := lookup(n, p...); spec != nil {
			w.push(p...)
			w.podSpec(spec)
			w.pop(len(p))
		}
	} else {
		w.search(n)
	}
	group, _, _ := strings.Cut(scalar(get(n, "apiVersion")), "/")
	if !strings.Contains(scalar(get(n, "apiVersion")), "/") {
		group = ""
	}
	for _, p := range w.f.extra[groupKind{group, kind}] {
		w.configured(n, p)
	}
}

// podSpec adds the images of a PodSpec (or of a map holding a container list
// in a custom resource).
func (w *walker) podSpec(spec *yaml.Node) {
	if spec.Kind != yaml.MappingNode {
		return
	}
	for _, key := range containerListKeys {
		list := resolve(get(spec, key))
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for i, c := range list.Content {
			if img := get(resolve(c), "image"); img != nil {
				w.add(img, key, index(i), "image")
			}
		}
	}
	if vols := resolve(get(spec, "volumes")); vols != nil && vols.Kind == yaml.SequenceNode {
		for i, v := range vols.Content {
			if ref := get(resolve(get(resolve(v), "image")), "reference"); ref != nil {
				w.add(ref, "volumes", index(i), "image", "reference")
			}
		}
	}
}

// search walks a custom resource for container lists.
func (w *walker) search(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		if w.seen[n.Alias] {
			return
		}
		if w.seen == nil {
			w.seen = map[*yaml.Node]bool{}
		}
		w.seen[n.Alias] = true
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		holdsContainers := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; isContainerListKey(k) && isContainerList(n.Content[i+1]) {
				holdsContainers = true
			}
		}
		if holdsContainers {
			w.podSpec(n)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if holdsContainers && (isContainerListKey(k) || k == "volumes") {
				continue
			}
			w.push(k)
			w.search(v)
			w.pop(1)
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			w.push(index(i))
			w.search(it)
			w.pop(1)
		}
	}
}

// configured adds the values at an extra field path.
func (w *walker) configured(n *yaml.Node, p rewrite.FieldPath) {
	if len(p) == 0 {
		w.add(n)
		return
	}
	v := get(n, p[0].Key)
	if v == nil {
		return
	}
	w.push(p[0].Key)
	defer w.pop(1)
	if !p[0].Each {
		if len(p) == 1 {
			w.add(v)
		} else if m := resolve(v); m.Kind == yaml.MappingNode {
			w.configured(m, p[1:])
		}
		return
	}
	list := resolve(v)
	if list.Kind != yaml.SequenceNode {
		return
	}
	for i, it := range list.Content {
		w.push(index(i))
		if len(p) == 1 {
			w.add(it)
		} else if m := resolve(it); m.Kind == yaml.MappingNode {
			w.configured(m, p[1:])
		}
		w.pop(1)
	}
}

// dedup drops fields found twice at the same path (a configured path that
// repeats a built-in one). An anchored value used at several paths stays a
// field at each of them.
func (w *walker) dedup() []Field {
	if len(w.out) < 2 {
		return w.out
	}
	type key struct {
		node *yaml.Node
		path string
	}
	seen := make(map[key]bool, len(w.out))
	out := w.out[:0]
	for _, f := range w.out {
		if k := (key{f.Node, f.Path}); !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

func isContainerListKey(k string) bool {
	for _, c := range containerListKeys {
		if k == c {
			return true
		}
	}
	return false
}

// isContainerList reports whether n is a list of maps, each with a string
// image or none, at least one with an image.
func isContainerList(n *yaml.Node) bool {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return false
	}
	found := false
	for _, it := range n.Content {
		it = resolve(it)
		if it.Kind != yaml.MappingNode {
			return false
		}
		if img := resolve(get(it, "image")); img != nil {
			if !isString(img) {
				return false
			}
			found = true
		}
	}
	return found
}

// isString reports whether n is a scalar that YAML resolves to a string.
func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "" && n.Style != 0)
}

func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

// get returns the value of key in mapping m, following merge keys ("<<").
// A duplicated key yields its first value.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var merge *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Value == key && k.Kind == yaml.ScalarNode {
			return m.Content[i+1]
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			merge = m.Content[i+1]
		}
	}
	if merge = resolve(merge); merge != nil {
		if merge.Kind == yaml.SequenceNode {
			for _, mm := range merge.Content {
				if v := get(resolve(mm), key); v != nil {
					return v
				}
			}
			return nil
		}
		return get(merge, key)
	}
	return nil
}

func lookup(m *yaml.Node, path ...string) *yaml.Node {
	for _, k := range path {
		m = resolve(get(m, k))
		if m == nil {
			return nil
		}
	}
	return m
}

func scalar(n *yaml.Node) string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func index(i int) string { return "[" + strconv.Itoa(i) + "]" }
