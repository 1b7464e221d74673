package manifest

import "go.yaml.in/yaml/v3"

// podSpecs finds the images of PodSpecs: in the built-in workload kinds
// (podSpecPaths) the containers, initContainers and ephemeralContainers
// images and the image volumes; in any other kind, every list under one of
// those keys whose items are maps with a string image (Argo Rollouts,
// Knative, OpenKruise, ...) and the image volumes beside it.
type podSpecs struct{}

func (podSpecs) detect(w *walker, o object) {
	if !o.builtin {
		w.search(o.node)
		return
	}
	p := podSpecPaths[o.gk.kind]
	w.push(p...)
	eachAt(o.node, p, func(spec *yaml.Node) { w.podSpec(spec, false) })
	w.pop(len(p))
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

// addImage adds an image field; in a custom resource (cr), patterns and
// placeholders are not images.
func (w *walker) addImage(n *yaml.Node, cr bool, extra ...string) {
	if v := resolve(n); cr && isString(v) {
		if isPattern(v.Value) || w.placeholder != nil && w.placeholder(v.Value) {
			return
		}
	}
	w.add(n, extra...)
}

// podSpec adds the images of a PodSpec (or of a map holding a container list
// in a custom resource: cr).
// eachArg calls fn with every string of a container's command and args
// (its key, index, node with alias unresolved and value) and whether it
// follows a flag whose name flagSays says image ("--engine-image"
// "longhornio/longhorn-engine:v1.7.2": the flag says image for the next
// argument). A value that is not a string ends the flag's context.
func eachArg(c *yaml.Node, flagSays func(name string) bool, fn func(key string, i int, raw *yaml.Node, value string, afterFlag bool)) {
	for _, key := range []string{"command", "args"} {
		eachValue(c, key, func(l *yaml.Node) {
			list := resolve(l)
			if list == nil || list.Kind != yaml.SequenceNode {
				return
			}
			after := false
			for i, raw := range list.Content {
				it := resolve(raw)
				if !isString(it) {
					after = false
					continue
				}
				fn(key, i, raw, it.Value, after)
				name, ok := flagName(it.Value)
				after = ok && flagSays(name)
			}
		})
	}
}

func (w *walker) podSpec(spec *yaml.Node, cr bool) {
	if spec.Kind != yaml.MappingNode {
		return
	}
	for _, key := range containerListKeys {
		eachItem(spec, key, func(i int, c *yaml.Node) {
			eachValue(resolve(c), "image", func(img *yaml.Node) {
				w.addImage(img, cr, key, index(i), "image")
			})
			if w.embedded {
				w.push(key, index(i))
				w.container(resolve(c))
				w.pop(2)
			}
		})
	}
	eachItem(spec, "volumes", func(i int, v *yaml.Node) {
		eachAt(resolve(v), []string{"image"}, func(img *yaml.Node) {
			eachValue(img, "reference", func(ref *yaml.Node) {
				w.add(ref, "volumes", index(i), "image", "reference")
			})
		})
	})
}

// search walks a custom resource for container lists.
func (w *walker) search(n *yaml.Node) {
	n, ok := followOnce(n, &w.seen)
	if !ok {
		return
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
			w.podSpec(n, true)
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
		str := true
		eachValue(it, "image", func(img *yaml.Node) {
			str = str && isString(resolve(img))
			found = true
		})
		if !str {
			return false
		}
	}
	return found
}
