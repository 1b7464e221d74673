package manifest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Field is an image reference found in an object: an image field, the
// repository field of a composed reference, or a reference embedded in a
// string value.
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
	// Value is the reference as written: Node.Value for an image field; for
	// a composed reference the repository part of Node.Value; for an
	// embedded reference the token inside Node.Value. It starts at byte At
	// of Node.Value, and a rewrite replaces exactly these bytes.
	Value string
	At    int
	// Ref is the full reference when Value holds only its repository and
	// the tag or digest sit in other fields (the Prometheus operator's
	// baseImage with tag, sha or version; Flux's OCIRepository url with
	// ref.tag or ref.digest); a rewrite then puts the target repository in
	// place of Value. Empty when Value is the full reference.
	Ref string
	// Embedded marks a reference found inside a string value (container
	// args and command, env values, ConfigMap data, annotations) rather
	// than an image field.
	Embedded bool
	// Named marks an embedded reference whose name says image: the value
	// of a container argument --*-image=VALUE (or of the argument after
	// such a flag; also --prometheus-config-reloader), the whole value of
	// an env var or name/value pair whose name says image (*_IMAGE,
	// RELATED_IMAGE_*). Those are listed and rewritten by default; the
	// other embedded references (free text: ConfigMap data, annotations,
	// other arguments, words of a command line) only on request.
	Named bool
	// Rest is, for a split reference whose Value is its registry part,
	// "/" and the repository part: a rewrite writes the target's
	// repository name without Rest in place of Value.
	Rest string
	// Incomplete says why a split reference cannot be composed (its tag
	// is the operator's choice): its registry or repository part is
	// rewritten, and it is reported instead of listed.
	Incomplete string
	// Guessed marks a reference found in a custom resource of a kind
	// rehost has no entries for, by the name of its key (image, *Image:
	// see guess.go), rather than by a known field. It is listed and
	// rewritten like the others unless Config.NoGuessImages.
	Guessed bool
	// Registry marks a registry setting (RegistryField): Value is a
	// registry host with an optional path, not an image reference.
	Registry bool
	// Default marks a registry setting that is absent, empty or names the
	// operator's default ("UseDefault"), of an entry that adds it. When
	// the field is absent, Node is the map to add it to and Add the keys
	// to add below it, the field's last; otherwise Node is the value to
	// replace.
	Default bool
	Add     []string
	// Slash says an added registry setting ends in "/".
	Slash bool

	// chart is set for the URL of a GitOps chart source (gitops.go).
	chart *chartSpec

	// pos is the node at the field's place in the document: Node itself,
	// or the alias ("*name") through which the field names Node.
	pos *yaml.Node
}

// whole reports whether the field's reference is its node's whole value,
// which a rewrite replaces in the node's style.
func (f Field) whole() bool {
	return !f.Embedded && f.Ref == "" && f.Add == nil && f.At == 0 && f.Value == f.Node.Value
}

// place is the node at the field's place: Node, or the alias naming it.
func (f Field) place() *yaml.Node {
	if f.pos != nil {
		return f.pos
	}
	return f.Node
}

// ref is the reference to map.
func (f Field) ref() string {
	if f.Ref != "" {
		return f.Ref
	}
	return f.Value
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

// Finder finds the image references of Kubernetes objects:
//   - the PodSpec images of the built-in workload kinds (containers,
//     initContainers, ephemeralContainers and image volumes);
//   - in any other kind but CustomResourceDefinition, every list under a
//     containers, initContainers or ephemeralContainers key whose items are
//     maps with a string image (Argo Rollouts, Knative, OpenKruise, ...), and
//     the image volumes beside it;
//   - the fields of the built-in table of known kinds (BuiltinImageFields,
//     BuiltinCompositeFields) and the extra fields configured per group and
//     kind;
//   - the items of List kinds, recursively;
//   - in custom resources of kinds that are neither built-in Kubernetes
//     kinds nor in those tables, the values of keys named image or *Image
//     that are image references (Field.Guessed; see guess.go);
//   - with FindEmbedded, the image references embedded in the string values
//     of container args, command and env, ConfigMap data and annotations.
//
// A Finder is immutable and safe for concurrent use.
type Finder struct {
	extra      map[groupKind][]rewrite.FieldPath
	composites map[groupKind][]composite
	registries map[groupKind][]registryEntry
	operators  map[groupKind][]operatorEntry
	// charts are the GitOps chart sources (gitops.go); noCharts leaves
	// them out (Config.NoChartSources).
	charts   map[groupKind][]chartEntry
	noCharts bool
	// kindWords are the kinds whose documents must be parsed whatever
	// they hold: registry settings to add, operators to report.
	kindWords []string
	// keys are configured leaf keys without an image word: a document
	// holding an image field holds one of them or an image word (see
	// mayHoldImages).
	keys []string
	// schemes are the URL schemes of composite fields.
	schemes []string
}

// composite is a parsed CompositeField.
type composite struct {
	CompositeField
	path                      rewrite.FieldPath
	repo, registry, algorithm rewrite.FieldPath
	digest, tag, objectTag    []rewrite.FieldPath
}

// registryEntry is a parsed RegistryField.
type registryEntry struct {
	RegistryField
	path rewrite.FieldPath
}

// operatorEntry is a parsed OperatorKind.
type operatorEntry struct {
	OperatorKind
	unless []rewrite.FieldPath
}

// NewFinder returns a Finder for the built-in fields and the given extra
// fields.
func NewFinder(extra []rewrite.ImageField) (*Finder, error) {
	b, err := builtin()
	if err != nil {
		return nil, err
	}
	f := &Finder{extra: b.extra, composites: b.composites, registries: b.registries, operators: b.operators, charts: b.charts, kindWords: b.kindWords, keys: b.keys, schemes: b.schemes}
	if len(extra) == 0 {
		return f, nil // the built-in tables are never modified: share them
	}
	f.extra = cloneTable(b.extra)
	f.composites = cloneTable(b.composites)
	f.registries = cloneTable(b.registries)
	f.keys = b.keys[:len(b.keys):len(b.keys)]
	f.kindWords = b.kindWords[:len(b.kindWords):len(b.kindWords)]
	if err := f.addFields(extra); err != nil {
		return nil, err
	}
	f.schemes = f.schemeList()
	return f, nil
}

// cloneTable copies a table so that appending to it leaves the original
// alone.
func cloneTable[T any](t map[groupKind][]T) map[groupKind][]T {
	out := make(map[groupKind][]T, len(t))
	for gk, es := range t {
		out[gk] = es[:len(es):len(es)]
	}
	return out
}

// builtin is the Finder of the built-in tables, parsed once.
var builtin = sync.OnceValues(func() (*Finder, error) {
	f := &Finder{extra: map[groupKind][]rewrite.FieldPath{}, composites: map[groupKind][]composite{},
		registries: map[groupKind][]registryEntry{}, operators: map[groupKind][]operatorEntry{}, charts: map[groupKind][]chartEntry{}}
	if err := f.addFields(BuiltinImageFields()); err != nil {
		return nil, err
	}
	for _, c := range BuiltinCompositeFields() {
		if err := f.addComposite(c); err != nil {
			return nil, err
		}
	}
	for _, r := range BuiltinRegistryFields() {
		if err := f.addRegistry(r); err != nil {
			return nil, err
		}
	}
	for _, c := range BuiltinChartFields() {
		if err := f.addChartField(c); err != nil {
			return nil, err
		}
	}
	for _, o := range BuiltinOperatorKinds() {
		e := operatorEntry{OperatorKind: o}
		for _, u := range o.Unless {
			p, err := rewrite.ParseFieldPath(u)
			if err != nil {
				return nil, err
			}
			e.unless = append(e.unless, p)
		}
		for _, k := range o.Kinds {
			gk := groupKind{o.Group, k}
			f.operators[gk] = append(f.operators[gk], e)
			f.addKindWord(k)
		}
	}
	f.schemes = f.schemeList()
	return f, nil
})

func (f *Finder) addComposite(c CompositeField) error {
	pc, err := parseComposite(c)
	if err != nil {
		return err
	}
	for _, k := range c.Kinds {
		gk := groupKind{c.Group, k}
		f.composites[gk] = append(f.composites[gk], pc)
	}
	if c.Scheme == "" && !hasImageWord(c.Path+"."+c.Repository) {
		f.addKey(pc.repo[len(pc.repo)-1].Key)
	}
	return nil
}

func (f *Finder) addRegistry(r RegistryField) error {
	p, err := rewrite.ParseFieldPath(r.Path)
	if err != nil {
		return err
	}
	if p[len(p)-1].Each {
		return fmt.Errorf("registry setting %s: the field cannot be a list", r.Path)
	}
	for _, k := range r.Kinds {
		gk := groupKind{r.Group, k}
		f.registries[gk] = append(f.registries[gk], registryEntry{RegistryField: r, path: p})
		if r.Add {
			f.addKindWord(k)
		}
	}
	f.addKeyForms(p[len(p)-1].Key)
	return nil
}

// addKeyForms adds the fast-path forms of a key as a YAML or JSON map key
// ("hub:", "hub :", "'hub'", "\"hub\""), for keys such as "registry" and
// "hub" that occur in many documents as parts of words ("github",
// "registry.k8s.io").
func (f *Finder) addKeyForms(k string) {
	for _, form := range []string{k + ":", k + " :", "'" + k + "'", `"` + k + `"`} {
		f.addKey(form)
	}
}

// addKey adds a fast-path key, once.
func (f *Finder) addKey(k string) {
	if hasImageWord(k) {
		return
	}
	for _, have := range f.keys {
		if have == k {
			return
		}
	}
	f.keys = append(f.keys, k)
}

func (f *Finder) addKindWord(k string) {
	for _, have := range f.kindWords {
		if have == k {
			return
		}
	}
	f.kindWords = append(f.kindWords, k)
}

// addFields adds image fields to f's tables: whole references, split
// references and registry settings.
func (f *Finder) addFields(fields []rewrite.ImageField) error {
	for _, e := range fields {
		switch e.Type {
		case rewrite.FieldSplit:
			c := CompositeField{Group: e.Group, Kinds: []string{e.Kind}, Path: e.Path, Repository: e.Repository, Registry: e.Registry, OperatorTag: true}
			if e.Tag != "" {
				c.Tag = []string{e.Tag}
			}
			if e.Digest != "" {
				c.Digest = []string{e.Digest}
			}
			if err := f.addComposite(c); err != nil {
				return err
			}
			if e.Registry != "" {
				p, _ := rewrite.ParseFieldPath(e.Registry)
				f.addKeyForms(p[len(p)-1].Key)
			}
			continue
		case rewrite.FieldRegistry:
			if err := f.addRegistry(RegistryField{Group: e.Group, Kinds: []string{e.Kind}, Path: e.Path, Add: e.Add, TrailingSlash: e.TrailingSlash}); err != nil {
				return err
			}
			continue
		}
		p, err := rewrite.ParseFieldPath(e.Path)
		if err != nil {
			return err
		}
		gk := groupKind{e.Group, e.Kind}
		f.extra[gk] = append(f.extra[gk], p)
		if leaf := p[len(p)-1].Key; !hasImageWord(leaf) {
			f.keys = append(f.keys, leaf)
		}
	}
	return nil
}

func parseComposite(c CompositeField) (composite, error) {
	out := composite{CompositeField: c}
	var err error
	if out.path, err = rewrite.ParseFieldPath(c.Path); err != nil {
		return out, err
	}
	if out.repo, err = rewrite.ParseFieldPath(c.Repository); err != nil {
		return out, err
	}
	if c.Registry != "" {
		if out.registry, err = rewrite.ParseFieldPath(c.Registry); err != nil {
			return out, err
		}
	}
	if c.Algorithm != "" {
		if out.algorithm, err = rewrite.ParseFieldPath(c.Algorithm); err != nil {
			return out, err
		}
	}
	for _, d := range c.Digest {
		p, err := rewrite.ParseFieldPath(d)
		if err != nil {
			return out, err
		}
		out.digest = append(out.digest, p)
	}
	for _, t := range c.Tag {
		p, err := rewrite.ParseFieldPath(t)
		if err != nil {
			return out, err
		}
		out.tag = append(out.tag, p)
	}
	for _, t := range c.ObjectTag {
		p, err := rewrite.ParseFieldPath(t)
		if err != nil {
			return out, err
		}
		out.objectTag = append(out.objectTag, p)
	}
	return out, nil
}

// Find returns the image fields of the object in node (a document or a
// mapping), in document order of discovery, the guessed ones (Guessed set)
// after the others. Objects without a kind, and CustomResourceDefinitions,
// have none.
func (f *Finder) Find(node *yaml.Node) []Field {
	return f.findAll(node, false, true).fields
}

// FindEmbedded returns the image references embedded in the string values
// of the object in node: in container args, command and env values,
// ConfigMap data, annotations, and name/value pairs whose name says image.
// A token counts when it is the whole value, the value of a --flag=value
// argument, the value of an image key in YAML, JSON or env-file text, or a
// word of a shell command line; when it parses as an image reference; and
// when it has a registry host and a tag or digest, or its key, env name or
// flag name says image and it has a tag, a digest or a registry host. URLs,
// host:port addresses, paths, digests alone and patterns never count.
// Each Field has Embedded set, and Value and At give the token.
func (f *Finder) FindEmbedded(node *yaml.Node) []Field {
	return f.findAll(node, true, false).emb
}

// found is what the finder finds in a document.
type found struct {
	fields, emb []Field
	// notes are the objects whose operators start images no manifest
	// names.
	notes []note
	// skipped are the values under keys that name an image not taken for
	// images (guess).
	skipped []guessSkip
	// charts are the URLs of GitOps chart sources (Field.chart set), and
	// chartSkips the sources left as written (gitops.go).
	charts     []Field
	chartSkips []chartSkip
}

// note is an object of an OperatorKind; Field identifies the object.
type note struct {
	Field
	op *OperatorKind
}

// findAll finds the references of a document: image fields, with guess
// also those of custom resources found by key name (guess.go), and with
// embedded the embedded references.
func (f *Finder) findAll(node *yaml.Node, embedded, guess bool) found {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	w := walker{f: f, embedded: embedded, guess: guess, guessLeft: maxGuessNodes, mergeWalks: map[*yaml.Node]int{}}
	w.object(node)
	// Guessed fields go after the others: where a node is both, dedup
	// keeps the known field.
	fields := make([]Field, 0, len(w.out)+len(w.guessed))
	fields = append(append(fields, w.out...), w.guessed...)
	charts := dedup(w.charts)
	fields, held := admission(node, dedup(withoutChartURLs(fields, charts)))
	return found{fields: fields, emb: dedup(w.emb), notes: append(w.notes, held...), skipped: w.skipped, charts: charts, chartSkips: w.chartSkips}
}

type walker struct {
	f        *Finder
	embedded bool
	// guess: find images by key name in custom resources of unknown
	// kinds, into guessed; values not taken go to skipped.
	guess     bool
	guessed   []Field
	skipped   []guessSkip
	seenGuess map[*yaml.Node]bool
	guessLeft int // nodes the guess walk may still visit in this document
	// mergeWalks counts the places each merged map was taken in at.
	mergeWalks map[*yaml.Node]int
	path       []string // segments: keys, and "[i]" for list items
	obj        Field    // Kind, Namespace, Name of the current object
	// placeholder says which image values of the current custom resource
	// are placeholders, not images (see placeholders).
	placeholder func(string) bool
	// cr says the current object is not a built-in workload kind.
	cr       bool
	out      []Field
	emb      []Field
	notes    []note
	seen     map[*yaml.Node]bool // alias targets already searched
	seenMeta map[*yaml.Node]bool // alias targets already searched by pairs
	// charts and chartSkips are the GitOps chart sources (gitops.go).
	charts     []Field
	chartSkips []chartSkip
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

func (w *walker) field(n *yaml.Node, extra ...string) Field {
	pos := n
	n = resolve(n)
	return Field{Node: n, Path: w.pathString(extra...), Kind: w.obj.Kind, Namespace: w.obj.Namespace, Name: w.obj.Name, Value: n.Value, pos: pos}
}

func (w *walker) add(n *yaml.Node, extra ...string) {
	w.out = append(w.out, w.field(n, extra...))
}

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

// object adds the references of the object in n. A mapping with duplicate
// keys is walked through every value of each key (see eachValue); one in
// which apiVersion or kind comes again holds objects run together without
// "---" (files joined with cat), and each is walked as an object of its own.
func (w *walker) object(n *yaml.Node) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return
	}
	if objs := runTogether(n); objs != nil {
		for _, o := range objs {
			w.object(o)
		}
		return
	}
	kind := scalar(get(n, "kind"))
	if kind == "" || kind == crdKind {
		return
	}
	if strings.HasSuffix(kind, "List") {
		isList := false
		eachValue(n, "items", func(v *yaml.Node) {
			items := resolve(v)
			if items.Kind != yaml.SequenceNode {
				return
			}
			isList = true
			for i, it := range items.Content {
				w.push("items", index(i))
				w.object(it)
				w.pop(2)
			}
		})
		if isList {
			return
		}
	}
	parent, parentPlaceholder, parentCR := w.obj, w.placeholder, w.cr
	w.obj = Field{Kind: kind, Name: scalar(get(resolve(get(n, "metadata")), "name")), Namespace: scalar(get(resolve(get(n, "metadata")), "namespace"))}
	defer func() { w.obj, w.placeholder, w.cr = parent, parentPlaceholder, parentCR }()
	apiVersion := scalar(get(n, "apiVersion"))
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	w.placeholder = placeholders(group, kind)

	gk := groupKind{group, kind}
	p, builtin := podSpecPaths[kind]
	w.cr = !builtin
	if builtin {
		w.push(p...)
		eachAt(n, p, func(spec *yaml.Node) { w.podSpec(spec, false) })
		w.pop(len(p))
	} else {
		w.search(n)
		if w.guess && !builtinGroup(group) && !w.f.known(gk) {
			w.guessObject(n)
		}
	}
	for _, p := range w.f.extra[gk] {
		w.configured(n, p)
	}
	for _, c := range w.f.composites[gk] {
		w.at(n, c.path, func(m *yaml.Node) { w.composite(n, m, c) })
	}
	for _, r := range w.f.registries[gk] {
		w.registry(n, r)
	}
	if !w.f.noCharts {
		for _, c := range w.f.charts[gk] {
			w.at(n, c.path, func(m *yaml.Node) { w.chartSource(m, c) })
		}
	}
	for i := range w.f.operators[gk] {
		if o := &w.f.operators[gk][i]; !anySet(n, o.unless) {
			w.notes = append(w.notes, note{Field: w.field(n), op: &o.OperatorKind})
		}
	}
	if w.embedded {
		if kind == "ConfigMap" && group == "" {
			w.configMap(n)
		}
		w.pairs(n, false)
	}
}

// runTogether splits a mapping that holds several objects run together
// (apiVersion or kind written again) into one mapping per object: a new
// object starts where apiVersion or kind comes again. An object without its
// own apiVersion, kind or metadata takes those of the object before it, so
// that a key merely duplicated in one object is still walked. The mappings
// share m's nodes. It returns nil when m is one object.
func runTogether(m *yaml.Node) []*yaml.Node {
	var starts []int
	seenAPI, seenKind := false, false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode || k.Value != "apiVersion" && k.Value != "kind" {
			continue
		}
		seen := &seenKind
		if k.Value == "apiVersion" {
			seen = &seenAPI
		}
		if *seen {
			// The object starts at the run of apiVersion and kind keys
			// just before this one.
			start := i
			if j := i - 2; j >= 0 && (m.Content[j].Value == "apiVersion" || m.Content[j].Value == "kind") && m.Content[j].Value != k.Value {
				start = j
			}
			starts = append(starts, start)
			seenAPI, seenKind = false, false
			for j := start; j <= i; j += 2 {
				if m.Content[j].Value == "apiVersion" {
					seenAPI = true
				} else {
					seenKind = true
				}
			}
			continue
		}
		*seen = true
	}
	if len(starts) == 0 {
		return nil
	}
	bounds := append(append([]int{0}, starts...), len(m.Content))
	out := make([]*yaml.Node, 0, len(starts)+1)
	var prev *yaml.Node
	for i := 0; i+1 < len(bounds); i++ {
		o := &yaml.Node{Kind: yaml.MappingNode, Tag: m.Tag, Line: m.Line, Column: m.Column}
		o.Content = append(o.Content, m.Content[bounds[i]:bounds[i+1]]...)
		if prev != nil {
			for _, key := range []string{"apiVersion", "kind", "metadata"} {
				if get(o, key) == nil {
					for j := 0; j+1 < len(prev.Content); j += 2 {
						if prev.Content[j].Value == key {
							o.Content = append(o.Content, prev.Content[j], prev.Content[j+1])
						}
					}
				}
			}
		}
		out = append(out, o)
		prev = o
	}
	return out
}

// podSpec adds the images of a PodSpec (or of a map holding a container list
// in a custom resource: cr).
func (w *walker) podSpec(spec *yaml.Node, cr bool) {
	if spec.Kind != yaml.MappingNode {
		return
	}
	for _, key := range containerListKeys {
		eachValue(spec, key, func(l *yaml.Node) {
			list := resolve(l)
			if list == nil || list.Kind != yaml.SequenceNode {
				return
			}
			for i, c := range list.Content {
				eachValue(resolve(c), "image", func(img *yaml.Node) {
					w.addImage(img, cr, key, index(i), "image")
				})
				if w.embedded {
					w.push(key, index(i))
					w.container(resolve(c))
					w.pop(2)
				}
			}
		})
	}
	eachValue(spec, "volumes", func(v *yaml.Node) {
		vols := resolve(v)
		if vols == nil || vols.Kind != yaml.SequenceNode {
			return
		}
		for i, v := range vols.Content {
			eachAt(resolve(v), []string{"image"}, func(img *yaml.Node) {
				eachValue(img, "reference", func(ref *yaml.Node) {
					w.add(ref, "volumes", index(i), "image", "reference")
				})
			})
		}
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

// at calls fn with each map at path p below n, with w.path set to it.
func (w *walker) at(n *yaml.Node, p rewrite.FieldPath, fn func(m *yaml.Node)) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	if len(p) == 0 {
		fn(n)
		return
	}
	w.push(p[0].Key)
	defer w.pop(1)
	eachValue(n, p[0].Key, func(v *yaml.Node) {
		if !p[0].Each {
			w.at(v, p[1:], fn)
			return
		}
		list := resolve(v)
		if list.Kind != yaml.SequenceNode {
			return
		}
		for i, it := range list.Content {
			w.push(index(i))
			w.at(it, p[1:], fn)
			w.pop(1)
		}
	})
}

// composite adds the composed reference of c in map m of the object obj.
func (w *walker) composite(obj, m *yaml.Node, c composite) {
	if c.Unless != "" && scalar(get(m, c.Unless)) != "" {
		return
	}
	raw := lookupRaw(m, c.repo)
	if isEmpty(resolve(raw)) {
		return // the kind's default
	}
	f := w.field(raw, pathSegments(c.repo)...)
	if !isString(f.Node) {
		w.out = append(w.out, f) // an error: not a string
		return
	}
	if !strings.HasPrefix(f.Node.Value, c.Scheme) {
		return // not an image (a Git or HTTP source, say)
	}
	f.At = len(c.Scheme)
	f.Value = f.Node.Value[f.At:]
	id, why := compositeID(obj, m, c)
	if c.registry != nil {
		// registry/repository: the registry part is rewritten.
		if reg := lookupRaw(m, c.registry); !isEmpty(resolve(reg)) {
			rf := w.field(reg, pathSegments(c.registry)...)
			if !isString(rf.Node) {
				w.out = append(w.out, rf)
				return
			}
			rf.Rest = "/" + f.Value
			rf.Ref = strings.TrimSuffix(rf.Value, "/") + rf.Rest + id
			rf.Incomplete = why
			w.out = append(w.out, rf)
			return
		}
	}
	if id != "" {
		f.Ref = f.Value + id
	}
	f.Incomplete = why
	w.out = append(w.out, f)
}

// compositeID is "@digest" or ":tag" from the first non-empty digest or tag
// field of c in m (then of its object tag fields in obj), or "". For a kind
// whose operator picks the tag (OperatorTag), why says why there is none.
func compositeID(obj, m *yaml.Node, c composite) (id, why string) {
	for _, p := range c.digest {
		if d := scalar(lookupPath(m, p)); d != "" {
			if !strings.HasPrefix(d, c.DigestPrefix) {
				d = c.DigestPrefix + d
			}
			return "@" + d, ""
		}
	}
	for _, p := range c.tag {
		t := scalar(lookupPath(m, p))
		if t == "" {
			continue
		}
		for _, not := range c.NotTags {
			if t == not {
				return "", fmt.Sprintf("%s is %s: the operator picks the tag", pathString(p), bounded.Quote(t))
			}
		}
		if c.algorithm != nil {
			if alg := scalar(lookupPath(m, c.algorithm)); alg != "" {
				return "@" + alg + ":" + t, ""
			}
		}
		return ":" + t, ""
	}
	for _, p := range c.objectTag {
		if t := scalar(lookupPath(resolve(obj), p)); t != "" {
			return ":" + t, ""
		}
	}
	if c.OperatorTag {
		var names []string
		for _, p := range append(c.digest[:len(c.digest):len(c.digest)], c.tag...) {
			names = append(names, pathString(p))
		}
		if len(names) == 0 {
			return "", "it has no tag field: the operator picks the tag"
		}
		return "", fmt.Sprintf("no %s: the operator picks the tag", strings.Join(names, " or "))
	}
	return "", ""
}

// registry adds the registry setting r of the object n, present or, for
// an entry that adds it, absent.
func (w *walker) registry(n *yaml.Node, r registryEntry) {
	leaf := r.path[len(r.path)-1].Key
	w.atPartial(n, r.path[:len(r.path)-1], func(m *yaml.Node, missing []string) {
		if m.Kind != yaml.MappingNode { // "spec:" null
			if r.Add {
				f := w.field(m)
				f.Registry, f.Default = true, true
				w.out = append(w.out, f)
			}
			return
		}
		if missing != nil {
			if r.Add {
				f := w.field(m)
				f.Path = w.pathString(append(missing, leaf)...)
				f.Registry, f.Default, f.Add, f.Slash = true, true, append(missing, leaf), r.TrailingSlash
				w.out = append(w.out, f)
			}
			return
		}
		v := get(m, leaf)
		if v == nil {
			if r.Add {
				f := w.field(m)
				f.Path = w.pathString(leaf)
				f.Registry, f.Default, f.Add, f.Slash = true, true, []string{leaf}, r.TrailingSlash
				w.out = append(w.out, f)
			}
			return
		}
		f := w.field(v, leaf)
		f.Registry = true
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

// anySet reports whether any of the paths holds a non-empty value in n.
func anySet(n *yaml.Node, paths []rewrite.FieldPath) bool {
	for _, p := range paths {
		if !isEmpty(lookupPath(resolve(n), p)) {
			return true
		}
	}
	return false
}

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

// container scans the args, command and env values of a container (a map
// with an image) for embedded references.
func (w *walker) container(c *yaml.Node) {
	if c == nil || c.Kind != yaml.MappingNode {
		return
	}
	for _, key := range []string{"command", "args"} {
		eachValue(c, key, func(l *yaml.Node) {
			list := resolve(l)
			if list.Kind != yaml.SequenceNode {
				return
			}
			ctx := false
			for i, raw := range list.Content {
				it := resolve(raw)
				if !isString(it) {
					ctx = false
					continue
				}
				w.scanArg(raw, ctx, key, index(i))
				// "--engine-image" "longhornio/longhorn-engine:v1.7.2": the
				// flag says image for the next argument.
				name, ok := flagName(it.Value)
				ctx = ok && hasImageWord(name)
			}
		})
	}
	eachValue(c, "env", func(l *yaml.Node) {
		env := resolve(l)
		if env.Kind != yaml.SequenceNode {
			return
		}
		for i, e := range env.Content {
			e = resolve(e)
			named := hasImageWord(scalar(get(e, "name")))
			eachValue(e, "value", func(raw *yaml.Node) {
				if isString(resolve(raw)) {
					w.scanNamed(raw, named, named, "env", index(i), "value")
				}
			})
		}
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
		f.Value, f.At, f.Embedded = t.value, t.at, true
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
		f.Value, f.At, f.Embedded = t.value, t.at, true
		f.Named = named && t.whole
		w.emb = appendField(w.emb, f)
	}
}

// dedup drops references found twice at the same place (a configured path
// that repeats a built-in one). An anchored value used at several paths
// stays a field at each of them.
func dedup(fields []Field) []Field {
	if len(fields) < 2 {
		return fields
	}
	type key struct {
		node *yaml.Node
		path string
		at   int
	}
	seen := make(map[key]bool, len(fields))
	out := fields[:0]
	for _, f := range fields {
		if k := (key{f.Node, f.Path, f.At}); !seen[k] {
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

func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

// get returns the value of key in mapping m, following merge keys ("<<").
// A duplicated key yields its first value: where images may lie, use
// eachValue. Each mapping is searched once,
// so merges of a mapping into itself, or fan-outs of merges, end quickly.
func get(m *yaml.Node, key string) *yaml.Node {
	return getMerged(m, key, nil)
}

func getMerged(m *yaml.Node, key string, seen map[*yaml.Node]bool) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode || seen[m] {
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
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	found := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Value == key && k.Kind == yaml.ScalarNode {
			found = true
			fn(m.Content[i+1])
		}
	}
	if !found {
		if v := get(m, key); v != nil {
			fn(v)
		}
	}
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
