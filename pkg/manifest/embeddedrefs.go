package manifest

import "go.yaml.in/yaml/v3"

// embeddedReferences finds, with FindEmbedded, the references embedded in
// string values: container args, command and env values, ConfigMap data,
// annotations, and name/value pairs whose name says image. Those whose
// flag, key or name says image are named (Field.Named); the others are
// free text.
type embeddedReferences struct{}

func (embeddedReferences) detect(w *walker, o object) {
	if !w.embedded {
		return
	}
	if o.gk == (groupKind{"", "ConfigMap"}) {
		w.configMap(o.node)
	}
	w.pairs(o.node, false)
}

// container scans the args, command and env values of a container (a map
// with an image) for embedded references.
func (w *walker) container(c *yaml.Node) {
	if c == nil || c.Kind != yaml.MappingNode {
		return
	}
	eachArg(c, hasImageWord, func(key string, i int, raw *yaml.Node, _ string, afterFlag bool) {
		w.scanArg(raw, afterFlag, key, index(i))
	})
	eachItem(c, "env", func(i int, e *yaml.Node) {
		e = resolve(e)
		named := hasImageWord(scalar(get(e, "name")))
		eachValue(e, "value", func(raw *yaml.Node) {
			if isString(resolve(raw)) {
				w.scanNamed(raw, named, named, "env", index(i), "value")
			}
		})
	})
}

// configMap scans a ConfigMap's data values.
func (w *walker) configMap(n *yaml.Node) {
	eachValue(n, "data", func(d *yaml.Node) {
		data := resolve(d)
		if data.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(data.Content); i += 2 {
			k, raw := data.Content[i].Value, data.Content[i+1]
			if isString(resolve(raw)) {
				w.scan(raw, hasImageWord(k), "data", k)
			}
		}
	})
}

// pairs scans, everywhere in an object, the values of every
// metadata.annotations map (its own, its Pod templates') and of the
// name/value pairs whose name says image: Tekton and Argo Workflows
// parameters ({name: BUILDER_IMAGE, default: ...}), Argo CD Helm
// parameters ({name: image.repository, value: ...}), env entries of
// containers not found as such.
func (w *walker) pairs(n *yaml.Node, isMeta bool) {
	n, ok := followOnce(n, &w.seenMeta)
	if !ok {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		if name := resolve(get(n, "name")); name != nil && isString(name) && hasImageWord(name.Value) {
			for _, key := range []string{"value", "default"} {
				eachValue(n, key, func(raw *yaml.Node) {
					if isString(resolve(raw)) {
						w.scanNamed(raw, true, true, key)
					}
				})
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			w.push(k)
			if isMeta && k == "annotations" {
				if a := resolve(v); a.Kind == yaml.MappingNode {
					for j := 0; j+1 < len(a.Content); j += 2 {
						if raw := a.Content[j+1]; isString(resolve(raw)) {
							w.scan(raw, hasImageWord(a.Content[j].Value), a.Content[j].Value)
						}
					}
				}
			} else {
				w.pairs(v, k == "metadata")
			}
			w.pop(1)
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			w.push(index(i))
			w.pairs(it, false)
			w.pop(1)
		}
	}
}

// scanArg adds the embedded references of an argument of a command,
// including the words of a shell command line. ctx says the argument
// before it is a flag that says image; a reference is named when it is
// the value of a flag that says image, or the whole argument after one.
func (w *walker) scanArg(n *yaml.Node, ctx bool, extra ...string) {
	for _, t := range scanString(resolve(n).Value, ctx, true) {
		f := w.field(n, extra...)
		f.Value, f.At, f.Type = t.value, t.at, TypeEmbedded
		f.Named = t.flag != "" && flagSaysImage(t.flag) || t.whole && ctx
		w.emb = appendField(w.emb, f)
	}
}

// scan adds the embedded references of the string n. named says the
// string is the value of an env var or name/value pair whose name says
// image: its whole value is then a named reference.
func (w *walker) scan(n *yaml.Node, ctx bool, extra ...string) {
	w.scanNamed(n, ctx, false, extra...)
}

func (w *walker) scanNamed(n *yaml.Node, ctx, named bool, extra ...string) {
	for _, t := range scanString(resolve(n).Value, ctx, false) {
		f := w.field(n, extra...)
		f.Value, f.At, f.Type = t.value, t.at, TypeEmbedded
		f.Named = named && t.whole
		w.emb = appendField(w.emb, f)
	}
}
