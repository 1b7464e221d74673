package manifest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// FieldType says what a Field holds; the other fields of Field that only
// some types use say which.
type FieldType uint8

const (
	// TypeImage is an image field: Value is the whole reference, the
	// node's value (At 0), unless the field was met through a guess.
	TypeImage FieldType = iota
	// TypeSplit is a reference split across fields (CompositeField, or a
	// guessed repository key): Value is its repository (or, with Rest, its
	// registry) part, Ref the reference composed, Incomplete why it cannot
	// be.
	TypeSplit
	// TypeRegistry is a registry setting (RegistryField): Value is a
	// registry host with an optional path; Default, Add and Slash say
	// whether and how rehost sets it.
	TypeRegistry
	// TypeEmbedded is a reference found inside a string value (container
	// args and command, env values, ConfigMap data, annotations): Value
	// and At give the token, Named whether its name says image.
	TypeEmbedded
	// TypeChart is the URL of a GitOps chart source (gitops.go).
	TypeChart
)

// Field is an image reference found in an object: an image field, the
// repository field of a composed reference, a registry setting, a
// reference embedded in a string value, or a chart source (Type).
type Field struct {
	// Type says what the field holds.
	Type FieldType
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
	// Default marks a registry setting that is absent, empty or names the
	// operator's default ("UseDefault"), of an entry that adds it. When
	// the field is absent, Node is the map to add it to and Add the keys
	// to add below it, the field's last; otherwise Node is the value to
	// replace.
	Default bool
	Add     []string
	// Slash says an added registry setting ends in "/".
	Slash bool

	// chart is the chart source of a TypeChart field (gitops.go).
	chart *chartSpec

	// pos is the node at the field's place in the document: Node itself,
	// or the alias ("*name") through which the field names Node.
	pos *yaml.Node
}

// whole reports whether the field's reference is its node's whole value,
// which a rewrite replaces in the node's style.
func (f Field) whole() bool {
	return f.Type != TypeEmbedded && f.Ref == "" && f.Add == nil && f.At == 0 && f.Value == f.Node.Value
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
	// list is the detectors (detector.go), built from the tables above.
	list []detector
	// envRefs are the ConfigMap keys passed as images that Find and
	// FindEmbedded know of (WithEnvImages).
	envRefs *envRefSet
}

type composite struct {
	CompositeField
	path                      rewrite.FieldPath
	repo, registry, algorithm rewrite.FieldPath
	digest, tag, objectTag    []rewrite.FieldPath
}

type registryEntry struct {
	RegistryField
	path rewrite.FieldPath
}

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
		f.list = b.list
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
	f.list = f.detectors()
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
	f.list = f.detectors()
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

// Find returns the image fields of the object in node (a document or a
// mapping), in document order of discovery, the guessed ones (Guessed set)
// after the others. Objects without a kind, and CustomResourceDefinitions,
// have none.
func (f *Finder) Find(node *yaml.Node) []Field {
	return f.findAll(node, false, true, f.envRefs).fields
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
	return f.findAll(node, true, false, f.envRefs).emb
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

// findAll finds the references of a document: the walker hands each object
// to the detectors (with guess, guessedFields takes part; with embedded,
// embeddedReferences), then the document's admission placeholders are
// held back (admission). refs are the run's ConfigMap keys passed as images
// (envimages.go), nil for none.
func (f *Finder) findAll(node *yaml.Node, embedded, guess bool, refs *envRefSet) found {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	w := walker{f: f, embedded: embedded, guess: guess, envRefs: refs, guessing: guessState{left: maxGuessNodes, mergeWalks: map[*yaml.Node]int{}}}
	w.object(node)
	// Guessed fields go after the others: where a node is both, dedup
	// keeps the known field.
	fields := make([]Field, 0, len(w.out)+len(w.guessing.fields))
	fields = append(append(fields, w.out...), w.guessing.fields...)
	charts := dedup(w.chart.sources)
	fields, held := admission(node, dedup(withoutChartURLs(fields, charts)))
	return found{fields: fields, emb: dedup(w.emb), notes: append(w.notes, held...), skipped: w.guessing.skipped, charts: charts, chartSkips: w.chart.skips}
}

type walker struct {
	f        *Finder
	embedded bool
	// guess: find images by key name in custom resources of unknown
	// kinds (guessedFields), remembering guessing.
	guess    bool
	guessing guessState
	// envRefs are the run's ConfigMap keys passed as images (envImages).
	envRefs *envRefSet
	path    []string // segments: keys, and "[i]" for list items
	obj     Field    // Kind, Namespace, Name of the current object
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
	// chart is what chartSources found.
	chart chartState
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

// object hands the object in n to every detector of the Finder's list
// (detector.go), with the admission placeholders of its kind set
// (admission.go); the items of a List are objects of their own. A mapping
// with duplicate keys is walked through every value of each key (see
// eachValue); one in which apiVersion or kind comes again holds objects run
// together without "---" (files joined with cat), and each is walked as an
// object of its own.
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

	_, builtin := podSpecPaths[kind]
	w.cr = !builtin
	o := object{node: n, gk: groupKind{group, kind}, builtin: builtin}
	for _, d := range w.f.list {
		d.detect(w, o)
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
