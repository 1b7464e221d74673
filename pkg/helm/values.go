package helm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// Overlay is a values overlay that makes a chart render its images in the
// target registry: rendering the chart with the user's values followed by
// the overlay gives what rewriting the chart's rendering gives, document by
// document, hooks included. It is the result of [AirgapValues].
type Overlay struct {
	// Chart and Version name the chart.
	Chart, Version string
	// Keys are the values the overlay sets, sorted by path.
	Keys []OverlayKey
	// Unmoved are the image fields the overlay cannot move (images
	// hard-coded in a template, or built so that no value can produce the
	// target): a post-renderer must rewrite them.
	Unmoved []UnmovedImage
	// Warnings are Helm's warnings about the chart and the user's values,
	// from rendering the chart as given.
	Warnings []string
	// Candidates is how many values were probed, Alone how many of them
	// were probed in a render of their own, Renders how many times the
	// chart was rendered in all (see [AirgapValues] for the bound).
	Candidates, Alone, Renders int

	cfg  rewrite.Config
	tree map[string]interface{}
}

// OverlayKey is one value the overlay sets.
type OverlayKey struct {
	// Path is the key's path from the top of the values: strings for map
	// keys, ints for list items. A key inside a list makes the overlay
	// hold the whole list (Helm replaces lists, it does not merge them).
	Path []interface{}
	// Value is the value it sets; Was the value it had (empty when the key
	// was absent or empty).
	Value, Was string
	// Images are the images it relocates, sorted.
	Images []Move
	// Why says why a key that relocates no image is set: the switch of
	// a chart family that verifies its images (see families), set only
	// when the render with the relocated values fails that check.
	Why string

	raw interface{} // Value as set, when it is not a string (a switch)
}

// Move is an image that a value relocates: its reference as rendered and
// its target. For an operator's registry setting that is absent or empty
// (which rehost rewrite adds), From says which. With are the other keys
// the image needs set too (a registry and a repository), sorted.
type Move struct {
	From, To string
	With     []string
}

// String is "FROM -> TO", and ", with KEY, ..." when other keys move it
// too.
func (m Move) String() string {
	s := m.From + " -> " + m.To
	if len(m.With) > 0 {
		s += ", with " + strings.Join(m.With, ", ")
	}
	return s
}

// UnmovedImage is an image field that no value moves.
type UnmovedImage struct {
	// Image is the reference as rendered, Target where rehost rewrite
	// sends it.
	Image, Target string
	// Template is the template file that rendered it
	// ("mychart/templates/job.yaml"), and Line the line of that file that
	// writes the reference, when it is written there literally (0 when it
	// is built elsewhere, in a helper for instance).
	Template string
	Line     int
	// Kind, Namespace, Name and Field identify the image field.
	Kind, Namespace, Name, Field string
	// Reason says why no value moves it.
	Reason string
}

// Object is "Kind namespace/name", as far as known.
func (u UnmovedImage) Object() string {
	obj := u.Kind
	if u.Name != "" {
		obj += " "
		if u.Namespace != "" {
			obj += u.Namespace + "/"
		}
		obj += u.Name
	}
	return obj
}

// String is "TEMPLATE:LINE: OBJECT: FIELD: IMAGE (-> TARGET): REASON".
func (u UnmovedImage) String() string {
	where := u.Template
	if u.Line > 0 {
		where += ":" + strconv.Itoa(u.Line)
	}
	return fmt.Sprintf("%s: %s: %s: %s (-> %s): %s", where, u.Object(), u.Field, u.Image, u.Target, u.Reason)
}

// Complete reports whether the overlay moves every image.
func (o *Overlay) Complete() bool { return len(o.Unmoved) == 0 }

// PathString formats a key path as "a.b[0].c"; keys holding dots or
// brackets are quoted.
func PathString(p []interface{}) string {
	var b strings.Builder
	for i, s := range p {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			if strings.ContainsAny(s, ".[]\"") || s == "" {
				b.WriteString(strconv.Quote(s))
			} else {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// AirgapValues finds the values overlay that makes the chart at path,
// rendered with opts, pull every image from where cfg maps it, without a
// post-renderer. It renders the chart in process: once as given, then with
// a marker in place of each candidate value to learn which image fields it
// drives and how, then solves for the fewest keys and checks the solution
// by rendering with it and comparing each document with the chart's
// rewritten rendering. The images no value moves are in Overlay.Unmoved;
// that is not an error.
//
// The candidates are the strings of the merged values found in the
// repository part of a rendered image, the empty or null keys named like a
// registry or a repository, the keys the templates read under such names
// that the values do not hold, and, for an operator's registry setting
// that rehost rewrite adds (tigera's Installation spec.registry), the key
// of that name in the values map that the template writes whole into the
// object (toYaml of installation).
//
// Probes are batched: the candidates with a value are probed together in
// one render, each with a marker of its own, and so are the empty or absent
// ones; a group whose render cannot be attributed is split in two, and the
// search goes on in halves while the renders it saved pay for it, one
// candidate a render otherwise. Candidates that behave alike (1,000 empty
// registry keys that drive nothing, or each its own image) cost one render;
// a few that fail cost a few renders each (about 2 log2 N). The solution
// is found by a deterministic greedy search over single keys and over
// combinations of keys that build one reference together (a registry and
// a repository, a shared registry and per-image repositories), a shared
// registry key before per-image keys, natural values (a registry key gets
// the target registry, a repository key "library/traefik") before fewer
// keys; excluded images never move. When the render with the relocated
// values fails the check of a chart family rehost knows (Bitnami's image
// verification), that family's documented switch is added, with a comment.
//
// Renders: at most N + 12 for N candidates, and never more than
// [MaxRenders]: 1 as given, at most N + 4 for the probes (+1 with a
// family's switch), 1 to tell documents that change at every render
// (generated certificates), at most 4 checks (+1 with a family's switch).
// Candidates left unprobed at the ceiling, and keys whose checks keep
// failing, are reported with the images they drive, never guessed.
//
// The overlay is meant to follow the user's values files and to come
// before the --set, --set-string, --set-file, --set-json and --set-literal
// values, which Helm applies after every file: `helm install -f user.yaml
// -f airgap-values.yaml --set k=v`. A --set value therefore wins over the
// overlay, and AirgapValues takes that into account.
func AirgapValues(path string, opts Options, cfg rewrite.Config) (*Overlay, error) {
	s, err := sessionFor(path, opts, cfg)
	if err != nil {
		return nil, err
	}
	return s.solve()
}

// splitValues merges the user's values files, and apart from them the
// --set values, which Helm applies after every file.
func splitValues(opts Options) (files, sets map[string]interface{}, err error) {
	fileOpts := values.Options{ValueFiles: opts.Values.ValueFiles}
	if files, err = fileOpts.MergeValues(getter.Providers{}); err != nil {
		return nil, nil, err
	}
	setOpts := opts.Values
	setOpts.ValueFiles = nil
	if sets, err = setOpts.MergeValues(getter.Providers{}); err != nil {
		return nil, nil, err
	}
	return files, sets, nil
}

// AirgapValuesChart is [AirgapValues] for a loaded chart and the user's
// values, as merged from values files (opts.Values is not used). The chart
// is not modified.
func AirgapValuesChart(ch *chart.Chart, vals map[string]interface{}, opts Options, cfg rewrite.Config) (*Overlay, error) {
	s, err := newSession(ch, vals, nil, opts, cfg)
	if err != nil {
		return nil, err
	}
	return s.solve()
}

// MaxRenders is the most times [AirgapValues] renders a chart.
const MaxRenders = 200

// Render budget (see AirgapValues): probeSlack renders for probe groups
// that teach nothing, maxChecks check renders.
const (
	probeSlack = 4
	maxChecks  = 4
)

// field is an image field of the base rendering.
type field struct {
	doc                  int
	path                 string
	kind, namespace, obj string
	// value is the whole string that holds the reference, want the same
	// string rewritten; token is the reference in it (an embedded
	// reference is part of an argument or env value), at its offset.
	value, want, token string
	at                 int
	// registry marks an operator's registry setting (a host, not a
	// reference); parent is, when the setting is absent, the map it
	// would go in, and add the keys it would add below that map.
	registry bool
	parent   map[string]interface{}
	add      []string
}

func (f field) moves() bool { return f.value != f.want }

// candidate is a value probed for the image fields it drives.
type candidate struct {
	path []interface{}
	was  string
	// absent: the key is absent or null; was is then "".
	absent bool

	// Learnt by the probe:
	drives map[int]string // field index -> value rendered with the marker
	docs   map[int]bool   // documents the probe changed
	holes  map[int]hole   // field index -> where the key is in it
	// bad says why the key cannot be used at all ("" if it can): its
	// render fails, it changes something besides image fields, ...
	bad string
	// value is the value that moves its images alone, covers the fields
	// it moves so; reason says why there is none.
	value  string
	covers []int
	reason string
	// dropped: a check failed with it.
	dropped bool
}

// hole is where a candidate is in the value of an image field it drives.
type hole struct {
	// parts is the field's value split where the key's value goes.
	parts []string
	// eff is the key's value as the field holds it: its value, or for an
	// empty or absent key what the template writes without it; known is
	// false when the field cannot be split so (a template that writes
	// more than the key when the key is set).
	eff   string
	known bool
}

// at returns the offsets of the key's occurrences in the field's value.
func (h hole) at() []int {
	var out []int
	pos := 0
	for i, p := range h.parts[:len(h.parts)-1] {
		if i > 0 {
			pos += len(h.eff)
		}
		pos += len(p)
		out = append(out, pos)
	}
	return out
}

type session struct {
	src    *chart.Chart
	user   map[string]interface{} // from values files, before the overlay
	sets   map[string]interface{} // from --set flags, after it
	opts   Options
	cfg    rewrite.Config
	finder *manifest.Finder
	mapper *rewrite.Mapper

	processed *chart.Chart           // dependencies processed: aliases, enabled subcharts
	merged    map[string]interface{} // the values the chart renders with
	base      *rendered.Chart
	baseDocs  []*yaml.Node // parsed lazily, image fields blanked
	want      []string
	fields    []field
	docFields [][]int
	renders   int
	alone     int
	// maxRenders is MaxRenders, lower in tests.
	maxRenders int
	// probeSwitches are the family switches the probes render with,
	// once a probe failed a family's check.
	probeSwitches []*family

	volatileDocs map[int]bool // nil until asked (see volatile)
}

func newSession(ch *chart.Chart, user, sets map[string]interface{}, opts Options, cfg rewrite.Config) (*session, error) {
	if user == nil {
		user = map[string]interface{}{}
	}
	finder, err := manifest.NewFinder(cfg.ImageFields)
	if err != nil {
		return nil, err
	}
	mapper, err := rewrite.NewMapper(cfg)
	if err != nil {
		return nil, err
	}
	s := &session{src: ch, user: user, sets: sets, opts: opts, cfg: cfg, finder: finder, mapper: mapper, maxRenders: MaxRenders}
	if s.base, err = s.render(nil); err != nil {
		return nil, err
	}
	rw, err := manifest.New(cfg)
	if err != nil {
		return nil, err
	}
	// Helm logs its warnings about values with the global logger: the
	// render as given reported them already (Overlay.Warnings).
	s.processed = cloneChart(ch)
	if _, err := captureLog(func() error {
		if err := chartutil.ProcessDependenciesWithMerge(s.processed, s.values(nil)); err != nil {
			return err
		}
		merged, err := chartutil.CoalesceValues(s.processed, s.values(nil))
		if err != nil {
			return err
		}
		s.merged = merged.AsMap()
		return nil
	}); err != nil {
		return nil, err
	}
	s.docFields = make([][]int, len(s.base.Manifests))
	s.baseDocs = make([]*yaml.Node, len(s.base.Manifests))
	for i, m := range s.base.Manifests {
		out, err := rw.RewriteBytes([]byte(m.Content), m.Name)
		if err != nil {
			return nil, err
		}
		s.want = append(s.want, string(out))
		got, err := s.findFields(m.Content)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		wanted, err := s.findFields(string(out))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if len(got) != len(wanted) {
			return nil, fmt.Errorf("%s: rewriting changed the image fields", m.Name)
		}
		for j, f := range got {
			f.doc = i
			f.want = wanted[j].value
			s.docFields[i] = append(s.docFields[i], len(s.fields))
			s.fields = append(s.fields, f)
		}
	}
	return s, nil
}

// render renders the chart with the user's values and the overlay.
func (s *session) render(overlay map[string]interface{}) (*rendered.Chart, error) {
	s.renders++
	opts := s.opts
	opts.skipLocate = true
	return RenderChart(cloneChart(s.src), s.values(overlay), opts)
}

// values are the values the chart renders with: the user's files, the
// overlay, then the user's --set values.
func (s *session) values(overlay map[string]interface{}) map[string]interface{} {
	return mergeValues(mergeValues(deepCopyMap(s.user), overlay), s.sets)
}

// find returns the fields of an object that rehost rewrite may change:
// image fields, composed references and registry settings, and the
// embedded references it rewrites (the named ones, such as
// --*-image=REF arguments and *_IMAGE env values, unless NoNamedEmbedded;
// all of them with RewriteEmbedded); the images guessed by key name in
// custom resources unless NoGuessImages.
func (s *session) find(n *yaml.Node) []manifest.Field {
	fs := s.finder.Find(n)
	if s.cfg.NoGuessImages {
		known := fs[:0]
		for _, f := range fs {
			if !f.Guessed {
				known = append(known, f)
			}
		}
		fs = known
	}
	if s.cfg.RewriteEmbedded || !s.cfg.NoNamedEmbedded {
		for _, f := range s.finder.FindEmbedded(n) {
			if s.cfg.RewriteEmbedded || f.Named {
				fs = append(fs, f)
			}
		}
	}
	return fs
}

// nodeValue is the value a field compares by: the whole string that holds
// the reference ("" for a registry setting that is absent, whose Node is
// the map it would go in).
func nodeValue(f manifest.Field) string {
	if f.Node.Kind != yaml.ScalarNode {
		return ""
	}
	return f.Node.Value
}

// findFields parses a document and returns the fields rehost rewrite may
// change (see find).
func (s *session) findFields(doc string) ([]field, error) {
	n, err := parseDoc(doc)
	if err != nil || n == nil {
		return nil, err
	}
	var out []field
	for _, f := range s.find(n) {
		fd := field{path: f.Path, kind: f.Kind, namespace: f.Namespace, obj: f.Name, value: nodeValue(f), token: f.Value, at: f.At, registry: f.Type == manifest.TypeRegistry}
		if f.Type == manifest.TypeRegistry && f.Add != nil && f.Node.Kind == yaml.MappingNode {
			var m map[string]interface{}
			if f.Node.Decode(&m) == nil {
				fd.parent, fd.add = m, f.Add
			}
		}
		if fd.value == "" || fd.at < 0 || fd.at+len(fd.token) > len(fd.value) || fd.value[fd.at:fd.at+len(fd.token)] != fd.token {
			fd.at, fd.token = 0, fd.value // not a reference written in place
		}
		out = append(out, fd)
	}
	return out, nil
}

func parseDoc(doc string) (*yaml.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		return nil, err
	}
	if n.Kind == 0 {
		return nil, nil
	}
	return &n, nil
}

// masked parses a document and blanks its image fields, so that two
// renderings compare equal when they differ only in image values.
func (s *session) masked(doc string) (*yaml.Node, []manifest.Field, error) {
	n, err := parseDoc(doc)
	if err != nil || n == nil {
		return n, nil, err
	}
	fs := s.find(n)
	vals := make([]manifest.Field, len(fs))
	for i, f := range fs {
		vals[i] = f
		vals[i].Value = nodeValue(f)
	}
	for _, f := range fs {
		if f.Node.Kind == yaml.ScalarNode {
			f.Node.Value = ""
			if f.Type == manifest.TypeRegistry {
				// An operator's registry setting may be absent from
				// the other rendering: sameNode skips it.
				f.Node.Tag = registryTag
			}
		}
	}
	return n, vals, nil
}

func (s *session) baseMasked(i int) (*yaml.Node, error) {
	if s.baseDocs[i] == nil {
		n, _, err := s.masked(s.base.Manifests[i].Content)
		if err != nil {
			return nil, err
		}
		if n == nil {
			n = &yaml.Node{}
		}
		s.baseDocs[i] = n
	}
	return s.baseDocs[i], nil
}

// sameNode compares two YAML trees, ignoring positions, styles and
// comments.
func sameNode(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind == yaml.AliasNode {
		return sameNode(a.Alias, b)
	}
	if b.Kind == yaml.AliasNode {
		return sameNode(a, b.Alias)
	}
	if a.Kind == yaml.MappingNode && b.Kind == yaml.MappingNode {
		ac, bc := withoutRegistry(a.Content), withoutRegistry(b.Content)
		if len(ac) != len(bc) {
			return false
		}
		for i := range ac {
			if !sameNode(ac[i], bc[i]) {
				return false
			}
		}
		return true
	}
	if a.Kind != b.Kind || a.Value != b.Value || a.ShortTag() != b.ShortTag() || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// registryTag marks the blanked registry settings of a masked document.
const registryTag = "!rehost-registry"

// withoutRegistry returns a mapping's content without the registry
// settings masked marks.
func withoutRegistry(content []*yaml.Node) []*yaml.Node {
	for i := 1; i < len(content); i += 2 {
		if content[i].Tag == registryTag {
			out := make([]*yaml.Node, 0, len(content))
			for j := 0; j+1 < len(content); j += 2 {
				if content[j+1].Tag != registryTag {
					out = append(out, content[j], content[j+1])
				}
			}
			return out
		}
	}
	return content
}

// compare compares a rendering with the base rendering: it returns the
// image fields whose values changed, with their new values, and the
// documents that changed, or an error saying how the rendering differs
// otherwise. set are the values the rendering set: their echoes in
// ConfigMaps are allowed (see echoOnly).
func (s *session) compare(r *rendered.Chart, set []change) (map[int]string, map[int]bool, error) {
	if len(r.Manifests) != len(s.base.Manifests) {
		return nil, nil, fmt.Errorf("it renders %d documents instead of %d", len(r.Manifests), len(s.base.Manifests))
	}
	changed := map[int]string{}
	docs := map[int]bool{}
	for i, m := range r.Manifests {
		fields, doc, beyond, err := s.compareDoc(i, m, set)
		if err == nil {
			err = beyond
		}
		if err != nil {
			return nil, nil, err
		}
		for k, v := range fields {
			changed[k] = v
		}
		if doc {
			docs[i] = true
		}
	}
	return changed, docs, nil
}

// compareDoc compares document i of a rendering with the base rendering's
// (see compare): the image fields that changed, and whether the document
// changed. beyond is the error for a document that changed beyond its
// image fields (the fields are still returned); err is for one whose
// image fields are not the base rendering's.
func (s *session) compareDoc(i int, m rendered.Manifest, set []change) (changed map[int]string, doc bool, beyond, err error) {
	bm := s.base.Manifests[i]
	if m.Name != bm.Name {
		return nil, false, nil, fmt.Errorf("it renders %s in place of %s", m.Name, bm.Name)
	}
	if m.Content == bm.Content {
		return nil, false, nil, nil
	}
	n, fs, err := s.masked(m.Content)
	if err != nil {
		return nil, false, nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	b, err := s.baseMasked(i)
	if err != nil {
		return nil, false, nil, err
	}
	if n == nil {
		n = &yaml.Node{}
	}
	if len(fs) != len(s.docFields[i]) {
		return nil, false, nil, fmt.Errorf("it changes the image fields of %s", m.Name)
	}
	switch {
	case sameNode(n, b), echoOnly(b, n, set):
		doc = true
	case !s.volatile(i):
		beyond = fmt.Errorf("it changes %s beyond image fields", m.Name)
	}
	changed = map[int]string{}
	for j, f := range fs {
		k := s.docFields[i][j]
		if s.fields[k].path != f.Path {
			return nil, false, nil, fmt.Errorf("it changes the image fields of %s", m.Name)
		}
		if f.Value != s.fields[k].value {
			changed[k] = f.Value
			doc = true
		}
	}
	return changed, doc, beyond, nil
}

// maskedText is a document with its image fields blanked, as text: where
// a probe's marker shows in it, the probed key changed more than images.
func (s *session) maskedText(doc string) string {
	n, _, err := s.masked(doc)
	if err != nil || n == nil {
		return doc
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return doc
	}
	return string(b)
}

// volatile reports whether document i renders differently at every
// render (a certificate from genCA, a password from randAlphaNum): such a
// document is compared by its image fields only. The chart is rendered once
// more, as given, the first time the question arises.
func (s *session) volatile(i int) bool {
	if s.volatileDocs == nil {
		s.volatileDocs = map[int]bool{}
		if r, err := s.render(nil); err == nil && len(r.Manifests) == len(s.base.Manifests) {
			for j, m := range r.Manifests {
				if m.Content != s.base.Manifests[j].Content {
					s.volatileDocs[j] = true
				}
			}
		}
	}
	return s.volatileDocs[i]
}

// nameEnd is where the repository part of a reference ends (its tag or
// digest separator), or len(ref).
func nameEnd(ref string) int {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return i
	}
	return len(ref)
}

// registryKey matches the names of keys that hold a registry host, which
// charts leave empty to mean "the default".
var registryKey = regexp.MustCompile(`(?i)(registry|^hub$)`)

// blankKey matches the names of the keys that are candidates when empty,
// null or absent: registries, and repositories (traefik's image.repository
// is null in its values, and its template defaults it to "traefik").
var blankKey = regexp.MustCompile(`(?i)(registry|^hub$|^repository$|^repo$)`)

// valuesRef finds the registry-like keys the templates read, so that a
// registry key a chart reads but does not declare is probed too.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)

// candidates lists the values to probe: the string leaves of the merged
// values that occur, starting a path component, in the repository part of
// an image that moves; the empty or null keys named like a registry or a
// repository, and those the templates read that the values do not hold;
// and the keys that put an operator's absent registry setting in the map
// the templates write whole into the object (see parentCandidates).
func (s *session) candidates() []*candidate {
	var moving []string
	for _, f := range s.fields {
		if f.moves() {
			moving = append(moving, f.value)
			if f.token != "" && f.token != f.value {
				moving = append(moving, f.token)
			}
		}
	}
	if len(moving) == 0 {
		return nil
	}
	subcharts := s.subchartPaths()
	var out []*candidate
	seen := map[string]bool{}
	add := func(c *candidate) {
		k := PathString(c.path)
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	s.walkValues(subcharts, func(path []interface{}, v interface{}) {
		last, _ := path[len(path)-1].(string)
		switch v := v.(type) {
		case nil:
			if blankKey.MatchString(last) {
				add(&candidate{path: path, absent: true})
			}
		case string:
			if v == "" {
				if blankKey.MatchString(last) {
					add(&candidate{path: path})
				}
				return
			}
			if strings.ContainsAny(v, " \t\r\n") {
				return // not part of a reference
			}
			for _, img := range moving {
				if occursInName(img, v) {
					add(&candidate{path: path, was: v})
					return
				}
			}
		}
	})
	// Registry and repository keys the templates read that the values do
	// not hold.
	var refs func(c *chart.Chart, prefix []interface{})
	refs = func(c *chart.Chart, prefix []interface{}) {
		for _, t := range c.Templates {
			for _, m := range valuesRef.FindAllStringSubmatch(string(t.Data), -1) {
				segs := strings.Split(strings.TrimPrefix(m[1], "."), ".")
				if !blankKey.MatchString(segs[len(segs)-1]) {
					continue
				}
				var p []interface{}
				if segs[0] != "global" {
					p = append(p, prefix...)
				}
				for _, sg := range segs {
					p = append(p, sg)
				}
				if v, present := lookup(s.merged, p); (!present || v == nil) && s.settable(p) {
					add(&candidate{path: p, absent: true})
				}
			}
		}
		for _, d := range c.Dependencies() {
			refs(d, append(prefix[:len(prefix):len(prefix)], d.Name()))
		}
	}
	refs(s.processed, nil)
	for _, c := range s.parentCandidates(subcharts) {
		add(c)
	}
	return out
}

// subchartPaths returns the value paths of the subcharts (chartKey).
func (s *session) subchartPaths() map[string]bool {
	subcharts := map[string]bool{}
	var walkCharts func(c *chart.Chart, prefix string)
	walkCharts = func(c *chart.Chart, prefix string) {
		for _, d := range c.Dependencies() {
			p := prefix + "\x00" + d.Name()
			subcharts[p] = true
			walkCharts(d, p)
		}
	}
	walkCharts(s.processed, "")
	return subcharts
}

// walkValues calls leaf for every leaf of the merged values (a scalar,
// null, or an empty map or list) and mapOf for every map, in key order,
// skipping the subcharts' copies of the globals.
func (s *session) walkValues(subcharts map[string]bool, leaf func(path []interface{}, v interface{}), mapOf ...func(path []interface{}, m map[string]interface{})) {
	var walk func(v interface{}, path []interface{})
	walk = func(v interface{}, path []interface{}) {
		if m, ok := asMap(v); ok {
			for _, f := range mapOf {
				f(path, m)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if k == "global" && len(path) > 0 && subcharts[chartKey(path)] {
					continue // a subchart's copy of the globals
				}
				walk(m[k], append(path[:len(path):len(path)], k))
			}
			return
		}
		if l, ok := v.([]interface{}); ok {
			for i, e := range l {
				walk(e, append(path[:len(path):len(path)], i))
			}
			return
		}
		if len(path) > 0 {
			leaf(path, v)
		}
	}
	walk(s.merged, nil)
}

// settable reports whether the overlay can set a key at path: every part
// of it that the values hold is a map (or a list, for an index).
func (s *session) settable(path []interface{}) bool {
	var cur interface{} = s.merged
	for _, seg := range path[:len(path)-1] {
		switch seg := seg.(type) {
		case string:
			m, ok := asMap(cur)
			if !ok {
				return false
			}
			next, ok := m[seg]
			if !ok || next == nil {
				return true
			}
			cur = next
		case int:
			l, ok := cur.([]interface{})
			if !ok || seg >= len(l) {
				return false
			}
			cur = l[seg]
		}
	}
	_, ok := asMap(cur)
	return ok || cur == nil
}

// parentCandidates finds, for each operator's registry setting that is
// absent from the base rendering and that rehost rewrite adds (tigera's
// Installation spec.registry), the maps of the values that the template
// writes whole into the map the setting goes in: tigera's chart renders
// "spec: {{ omit .Values.installation "enabled" | toYaml }}", and its
// values.yaml has no installation.registry. Such a map is recognised by
// its entries: at least one, and at least half of its own and of the
// rendered map's, are equal in both. The candidate is the setting's key in
// that map, absent.
func (s *session) parentCandidates(subcharts map[string]bool) []*candidate {
	var out []*candidate
	for _, f := range s.fields {
		if f.parent == nil || !f.moves() {
			continue
		}
		rendered := map[string]string{}
		for k, v := range f.parent {
			rendered[k] = canonical(v)
		}
		best := 0
		var paths [][]interface{}
		s.walkValues(subcharts, func([]interface{}, interface{}) {}, func(path []interface{}, m map[string]interface{}) {
			score := 0
			for k, v := range m {
				if r, ok := rendered[k]; ok && r == canonical(v) {
					score++
				}
			}
			if score == 0 || 2*score < len(m) || 2*score < len(rendered) || score < best {
				return
			}
			if score > best {
				best, paths = score, nil
			}
			paths = append(paths, append([]interface{}(nil), path...))
		})
		for _, p := range paths {
			for _, a := range f.add {
				p = append(p, a)
			}
			if v, present := lookup(s.merged, p); (!present || v == nil) && s.settable(p) {
				out = append(out, &candidate{path: p, absent: true})
			}
		}
	}
	return out
}

// canonical is a value as JSON, for comparing values decoded from YAML by
// different decoders (numbers as int or float64).
func canonical(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func chartKey(path []interface{}) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte(0)
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// occursInName reports whether v occurs in ref starting a path component
// and overlapping its repository part.
func occursInName(ref, v string) bool {
	end := nameEnd(ref)
	for i := 0; i < end; {
		j := strings.Index(ref[i:], v)
		if j < 0 {
			return false
		}
		j += i
		if j >= end {
			return false
		}
		if j == 0 || ref[j-1] == '/' {
			return true
		}
		i = j + 1
	}
	return false
}

// lookup returns the value at path in the values tree.
func lookup(v interface{}, path []interface{}) (interface{}, bool) {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := asMap(v)
			if !ok {
				return nil, false
			}
			if v, ok = m[p]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]interface{})
			if !ok || p >= len(l) {
				return nil, false
			}
			v = l[p]
		}
	}
	return v, true
}

// change is a value to set: value, or raw when it is not a string.
type change struct {
	path  []interface{}
	value string
	raw   interface{}
}

// setValue is the value the change sets.
func (c change) setValue() interface{} {
	if c.raw != nil {
		return c.raw
	}
	return c.value
}

// overlayFor builds the values overlay that sets the changes: nested maps
// down to each key, and a copy of the merged list with the change where a
// key is inside a list.
func (s *session) overlayFor(changes []change) map[string]interface{} {
	root := map[string]interface{}{}
	for _, c := range changes {
		var cur interface{} = root
		var src interface{} = s.merged
		copied := false // inside a copied list: every step exists
		for i, seg := range c.path {
			last := i == len(c.path)-1
			switch seg := seg.(type) {
			case string:
				m, _ := asMap(cur)
				if last {
					m[seg] = c.setValue()
					break
				}
				next, _ := lookup(src, []interface{}{seg})
				src = next
				if copied {
					cur = m[seg]
					break
				}
				if l, ok := next.([]interface{}); ok {
					if _, ok := m[seg].([]interface{}); !ok {
						m[seg] = deepCopyValue(l)
					}
					cur, copied = m[seg], true
					break
				}
				sub, ok := asMap(m[seg])
				if !ok {
					sub = map[string]interface{}{}
					m[seg] = sub
				}
				cur = sub
			case int:
				l := cur.([]interface{})
				if last {
					l[seg] = c.setValue()
					break
				}
				cur = l[seg]
				src, _ = lookup(src, []interface{}{seg})
			}
		}
	}
	return root
}
