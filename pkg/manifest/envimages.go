package manifest

import (
	"bytes"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envImages finds the images passed to a program through an environment
// variable: a container argument or command holds "$(VAR)", Kubernetes
// expands it from the container's env, and VAR comes from a ConfigMap key
// (env[].valueFrom.configMapKeyRef, or envFrom[].configMapRef with its
// prefix). The ConfigMap's value is an image when the argument is the value
// of a flag that says image (--*-image=$(VAR), --prometheus-config-reloader=
// $(VAR), or "$(VAR)" after such a flag), or when VAR's name says image
// (*_IMAGE). Bitnami's kube-prometheus chart passes the config-reloader
// image to the Prometheus operator so:
//
//	ConfigMap data:  prometheus-config-reloader: docker.io/bitnami/prometheus-operator:0.85.0
//	Deployment args: --prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER)
//	           env:  PROMETHEUS_CONFIG_RELOADER from configMapKeyRef {name, key: prometheus-config-reloader}
//
// The reference and the value live in different objects, and Helm renders
// the ConfigMap before the Deployment, so the references ("this key of that
// ConfigMap is an image") are collected before the documents are walked:
// the Rewriter pre-scans each input (envscan.go: a search for "$(", and
// only the documents around those whose line says image are read and
// parsed) into a run-level set (envRefSet) that the walker hands this
// detector. A ConfigMap value so referenced is a named embedded
// reference (Field.Named): listed, rewritten and reported at the
// ConfigMap's line and data key, as a *_IMAGE env value is.
//
// A ConfigMap matches a reference by name and key, and by namespace unless
// either leaves its namespace unset (kubectl apply -n puts both in one).
// Only the containers of the built-in workload kinds are read (podSpecPaths),
// as Kubernetes expands $(VAR) only there; "$$(VAR)" is an escaped, literal
// "$(VAR)", as Kubernetes defines.
type envImages struct{}

func (envImages) detect(w *walker, o object) {
	if !w.embedded || w.envRefs == nil || o.gk != (groupKind{"", "ConfigMap"}) {
		return
	}
	name := scalar(get(resolve(get(o.node, "metadata")), "name"))
	ns := scalar(get(resolve(get(o.node, "metadata")), "namespace"))
	eachValue(o.node, "data", func(d *yaml.Node) {
		data := resolve(d)
		if data.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(data.Content); i += 2 {
			k, raw := data.Content[i].Value, data.Content[i+1]
			if isString(resolve(raw)) && w.envRefs.has(ns, name, k) {
				w.scanNamed(raw, true, true, "data", k)
			}
		}
	})
}

// ScanEnvImages adds to the run the ConfigMap keys that the documents of
// the stream r pass to containers as images through $(VAR), so that those
// ConfigMaps are rewritten and listed wherever they come in the run's
// inputs. Rewrite, RewriteAt, RewriteBytes and RewriteParts scan their own
// input first; a caller that rewrites one input in several calls (one per
// template) or several inputs whose ConfigMaps and workloads may sit in
// different files scans them all before the first rewrite. It returns the
// read error of r, if any; documents that do not parse are left to the
// rewrite, which reports them.
func (rw *Rewriter) ScanEnvImages(r io.Reader) error {
	refs, err := prescanReader(r)
	rw.envRefs.add(refs)
	return err
}

// ScanEnvImagesNode is ScanEnvImages for an object the caller has parsed
// (the node RewriteNode takes): a pipeline that rewrites node by node (the
// kio filter of package krmfn) scans every node first.
func (rw *Rewriter) ScanEnvImagesNode(node *yaml.Node) {
	if node != nil {
		rw.envRefs.add(envRefsOf(node))
	}
}

// WithEnvImages returns a Finder that also finds, as named embedded
// references (FindEmbedded), the ConfigMap values that the documents of
// streams pass to containers as images through $(VAR).
func (f *Finder) WithEnvImages(streams ...[]byte) *Finder {
	c := *f
	for _, s := range streams {
		c.envRefs = c.envRefs.with(prescanEnvRefs(s))
	}
	return &c
}

// envRef is a ConfigMap key whose value a container receives as an image.
type envRef struct{ namespace, name, key string }

// envRefSet is the run's set of envRefs. It is never modified once
// published (Rewriter.envRefs): adding makes a new set.
type envRefSet struct {
	// byName maps a ConfigMap's name and key to the namespaces that
	// reference it ("" for unset).
	byName map[[2]string][]string
	// names are the ConfigMap names, for the fast path.
	names []string
}

// has reports whether the key of the ConfigMap ns/name is referenced.
func (s *envRefSet) has(ns, name, key string) bool {
	if s == nil {
		return false
	}
	for _, n := range s.byName[[2]string{name, key}] {
		if n == ns || n == "" || ns == "" {
			return true
		}
	}
	return false
}

// mayHold reports whether a document may be a ConfigMap of the set: the
// fast path skips documents without an image word, which such a ConfigMap
// need not have.
func (s *envRefSet) mayHold(data []byte) bool {
	if s == nil {
		return false
	}
	for _, n := range s.names {
		if bytes.Contains(data, []byte(n)) {
			return true
		}
	}
	return false
}

// with returns s with refs added (s itself when they are all in it).
func (s *envRefSet) with(refs []envRef) *envRefSet {
	out := s
	for _, r := range refs {
		if out != nil && out.holds(r) {
			continue
		}
		if out == s { // copy on first change
			out = &envRefSet{byName: map[[2]string][]string{}}
			if s != nil {
				for k, v := range s.byName {
					out.byName[k] = v[:len(v):len(v)]
				}
				out.names = s.names[:len(s.names):len(s.names)]
			}
		}
		k := [2]string{r.name, r.key}
		if len(out.byName[k]) == 0 && !contains(out.names, r.name) {
			out.names = append(out.names, r.name)
		}
		out.byName[k] = append(out.byName[k], r.namespace)
	}
	return out
}

// same reports whether s and o hold the same references.
func (s *envRefSet) same(o *envRefSet) bool {
	return s == o || (s.within(o) && o.within(s))
}

// within reports whether every reference of s is in o.
func (s *envRefSet) within(o *envRefSet) bool {
	if s == nil {
		return true
	}
	for k, nss := range s.byName {
		for _, ns := range nss {
			if o == nil || !o.holds(envRef{namespace: ns, name: k[0], key: k[1]}) {
				return false
			}
		}
	}
	return true
}

func (s *envRefSet) holds(r envRef) bool {
	for _, n := range s.byName[[2]string{r.name, r.key}] {
		if n == r.namespace {
			return true
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// envRefsOf returns the envRefs of the object in node (items of Lists
// included).
func envRefsOf(node *yaml.Node) []envRef {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	var out []envRef
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n = resolve(n)
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		if objs := runTogether(n); objs != nil {
			for _, o := range objs {
				walk(o)
			}
			return
		}
		kind := scalar(get(n, "kind"))
		if strings.HasSuffix(kind, "List") {
			eachValue(n, "items", func(v *yaml.Node) {
				if items := resolve(v); items.Kind == yaml.SequenceNode {
					for _, it := range items.Content {
						walk(it)
					}
				}
			})
		}
		p, ok := podSpecPaths[kind]
		if !ok {
			return
		}
		ns := scalar(get(resolve(get(n, "metadata")), "namespace"))
		eachAt(n, p, func(spec *yaml.Node) {
			for _, key := range containerListKeys {
				eachItem(spec, key, func(_ int, c *yaml.Node) {
					out = append(out, containerEnvRefs(resolve(c), ns)...)
				})
			}
		})
	}
	walk(node)
	return out
}

// containerEnvRefs returns the ConfigMap keys a container passes as images
// through $(VAR) in its command or args.
func containerEnvRefs(c *yaml.Node, ns string) []envRef {
	if c == nil || c.Kind != yaml.MappingNode {
		return nil
	}
	var vars []string
	eachArg(c, flagSaysImage, func(_ string, _ int, _ *yaml.Node, value string, afterFlag bool) {
		vars = append(vars, imageVars(value, afterFlag)...)
	})
	if len(vars) == 0 {
		return nil
	}
	// Where each variable comes from: env wins over envFrom, and a later
	// env entry over an earlier one, as Kubernetes builds the environment.
	type source struct {
		name, key string
		set       bool // an env entry defines it (from a ConfigMap or not)
	}
	env := map[string]source{}
	eachItem(c, "env", func(_ int, e *yaml.Node) {
		e = resolve(e)
		v := scalar(get(e, "name"))
		if v == "" {
			return
		}
		cm := resolve(get(resolve(get(e, "valueFrom")), "configMapKeyRef"))
		s := source{set: true}
		if name := resolve(get(cm, "name")); name != nil {
			s.name = scalar(name)
			s.key = scalar(get(cm, "key"))
		}
		env[v] = s
	})
	type from struct{ name, prefix string }
	var froms []from
	eachItem(c, "envFrom", func(_ int, e *yaml.Node) {
		e = resolve(e)
		if name := scalar(get(resolve(get(e, "configMapRef")), "name")); name != "" {
			froms = append(froms, from{name, scalar(get(e, "prefix"))})
		}
	})
	var out []envRef
	for _, v := range vars {
		if s, ok := env[v]; ok {
			if s.name != "" && s.key != "" {
				out = append(out, envRef{ns, s.name, s.key})
			}
			continue
		}
		// Any ConfigMap of envFrom may hold the key; the one that does is
		// the one found.
		for _, f := range froms {
			if k, ok := strings.CutPrefix(v, f.prefix); ok && k != "" {
				out = append(out, envRef{ns, f.name, k})
			}
		}
	}
	return out
}

// imageVars returns the variables of the $(VAR) references in an argument
// that pass an image: the whole value of a flag that says image, the whole
// argument after such a flag (ctx), or any variable whose name says image.
// "$$" is a literal "$" (Kubernetes' expansion), so "$$(VAR)" is no
// reference.
func imageVars(s string, ctx bool) []string {
	if !strings.Contains(s, "$(") {
		return nil
	}
	whole := func(v string) (string, bool) { // v is exactly one $(VAR)
		v = strings.TrimSpace(v)
		refs := expansionRefs(v)
		if len(refs) == 1 && refs[0].at == 0 && refs[0].end == len(v) {
			return refs[0].name, true
		}
		return "", false
	}
	var out []string
	if name, at, ok := flagValue(s); ok && flagSaysImage(name) {
		if v, ok := whole(s[at:]); ok {
			out = append(out, v)
		}
	} else if ctx {
		if v, ok := whole(s); ok {
			out = append(out, v)
		}
	}
	for _, r := range expansionRefs(s) {
		if hasImageWord(r.name) && !contains(out, r.name) {
			out = append(out, r.name)
		}
	}
	return out
}

// expansionRef is a $(VAR) reference: the variable and the bytes [at, end)
// of "$(VAR)".
type expansionRef struct {
	name    string
	at, end int
}

// expansionRefs returns the $(VAR) references of s as Kubernetes reads them
// (k8s.io/kubernetes third_party/forked/golang/expansion): "$$" is an
// escaped "$", "$(" runs to the next ")", an unclosed "$(" is text.
func expansionRefs(s string) []expansionRef {
	var out []expansionRef
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		switch s[i+1] {
		case '$':
			i++
		case '(':
			if j := strings.IndexByte(s[i+2:], ')'); j >= 0 {
				out = append(out, expansionRef{name: s[i+2 : i+2+j], at: i, end: i + 3 + j})
				i += 2 + j
			} else {
				i++
			}
		}
	}
	return out
}
