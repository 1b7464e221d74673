package helm

import (
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
	// were probed in a render of their own (empty or absent values, and
	// those the batch probe could not attribute), Renders how many times
	// the chart was rendered: 1 (as given) + 1 (the batch probe; 3 when it
	// fails to render and is split into registry keys and the others) + Alone +
	// the checks (1 unless a check fails) + 1 when some probe changes a
	// document beyond its image fields (the chart rendered again as given,
	// to tell documents that change at every render, such as generated
	// certificates).
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
}

// Move is an image that a value relocates: its reference as rendered and
// its target. For an operator's registry setting that is absent or empty
// (which rehost rewrite adds), From says which.
type Move struct {
	From, To string
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
// post-renderer. It renders the chart in process: once as given, once per
// candidate value (a string of the merged values found in a rendered image
// reference, or an empty or absent registry key) with a marker in its place
// to learn which image fields it drives and how, then solves for the fewest
// keys (a shared registry key before per-image keys; excluded images never
// move) and checks the solution by rendering with it and comparing each
// document with the chart's rewritten rendering. The images no value moves
// are in Overlay.Unmoved; that is not an error.
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

// field is an image field of the base rendering.
type field struct {
	doc                  int
	path                 string
	kind, namespace, obj string
	// value is the whole string that holds the reference, want the same
	// string rewritten; token is the reference in it (an embedded
	// reference is part of an argument or env value).
	value, want, token string
}

func (f field) moves() bool { return f.value != f.want }

// candidate is a value probed for the image fields it drives.
type candidate struct {
	path   []interface{}
	was    string
	absent bool

	// Learnt by the probe:
	drives  map[int]string // field index -> value rendered with the marker
	docs    map[int]bool   // documents the probe changed
	reason  string         // why the key cannot be used; "" if it can
	value   string         // the value that moves its fields
	covers  []int          // the fields it moves
	chosen  bool
	dropped bool
}

type session struct {
	src    *chart.Chart
	user   map[string]interface{} // from values files, before the overlay
	sets   map[string]interface{} // from --set flags, after it
	opts   Options
	cfg    rewrite.Config
	finder *manifest.Finder

	processed *chart.Chart           // dependencies processed: aliases, enabled subcharts
	merged    map[string]interface{} // the values the chart renders with
	base      *rendered.Chart
	baseDocs  []*yaml.Node // parsed lazily, image fields blanked
	want      []string
	fields    []field
	docFields [][]int
	renders   int
	alone     int

	volatileDocs map[int]bool // nil until asked (see volatile)
}

// probeMarker stands for a candidate in the values its probe rendered
// (candidate.drives).
const probeMarker = "\x00probe\x00"

// markerValue is the value a candidate is probed with: a token unique to
// the probe (i, or -1 alone) in front of its value, so that the image
// keeps its shape (a whole reference keeps its tag, and an embedded
// reference is still found), or a host name in place of an empty value.
func markerValue(c *candidate, i int) string {
	tok := "rehostprobe"
	if i >= 0 {
		tok += strconv.Itoa(i)
	}
	tok += "x"
	if c.was == "" {
		return tok + ".invalid"
	}
	return tok + c.was
}

func newSession(ch *chart.Chart, user, sets map[string]interface{}, opts Options, cfg rewrite.Config) (*session, error) {
	if user == nil {
		user = map[string]interface{}{}
	}
	finder, err := manifest.NewFinder(cfg.ImageFields)
	if err != nil {
		return nil, err
	}
	s := &session{src: ch, user: user, sets: sets, opts: opts, cfg: cfg, finder: finder}
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
		out = append(out, field{path: f.Path, kind: f.Kind, namespace: f.Namespace, obj: f.Name, value: nodeValue(f), token: f.Value})
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
			if f.Registry {
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
// otherwise.
func (s *session) compare(r *rendered.Chart) (map[int]string, map[int]bool, error) {
	if len(r.Manifests) != len(s.base.Manifests) {
		return nil, nil, fmt.Errorf("it renders %d documents instead of %d", len(r.Manifests), len(s.base.Manifests))
	}
	changed := map[int]string{}
	docs := map[int]bool{}
	for i, m := range r.Manifests {
		bm := s.base.Manifests[i]
		if m.Name != bm.Name {
			return nil, nil, fmt.Errorf("it renders %s in place of %s", m.Name, bm.Name)
		}
		if m.Content == bm.Content {
			continue
		}
		n, fs, err := s.masked(m.Content)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		b, err := s.baseMasked(i)
		if err != nil {
			return nil, nil, err
		}
		if n == nil {
			n = &yaml.Node{}
		}
		if len(fs) != len(s.docFields[i]) {
			return nil, nil, fmt.Errorf("it changes the image fields of %s", m.Name)
		}
		if !sameNode(n, b) {
			if !s.volatile(i) {
				return nil, nil, fmt.Errorf("it changes %s beyond image fields", m.Name)
			}
		} else {
			docs[i] = true
		}
		for j, f := range fs {
			k := s.docFields[i][j]
			if s.fields[k].path != f.Path {
				return nil, nil, fmt.Errorf("it changes the image fields of %s", m.Name)
			}
			if f.Value != s.fields[k].value {
				changed[k] = f.Value
				docs[i] = true
			}
		}
	}
	return changed, docs, nil
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

// valuesRef finds the registry-like keys the templates read, so that a
// registry key a chart reads but does not declare is probed too.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)

// candidates lists the values to probe: the string leaves of the merged
// values that occur, starting a path component, in the repository part of
// an image that moves; and the empty or absent keys named like a registry.
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
	var out []*candidate
	seen := map[string]bool{}
	add := func(c *candidate) {
		k := PathString(c.path)
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	var walk func(v interface{}, path []interface{})
	walk = func(v interface{}, path []interface{}) {
		if m, ok := asMap(v); ok {
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
		switch v := v.(type) {
		case []interface{}:
			for i, e := range v {
				walk(e, append(path[:len(path):len(path)], i))
			}
		case string:
			last, _ := path[len(path)-1].(string)
			if v == "" {
				if registryKey.MatchString(last) {
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
	}
	walk(s.merged, nil)
	// Registry keys the templates read that the values do not hold.
	var refs func(c *chart.Chart, prefix []interface{})
	refs = func(c *chart.Chart, prefix []interface{}) {
		for _, t := range c.Templates {
			for _, m := range valuesRef.FindAllStringSubmatch(string(t.Data), -1) {
				segs := strings.Split(strings.TrimPrefix(m[1], "."), ".")
				if !registryKey.MatchString(segs[len(segs)-1]) {
					continue
				}
				var p []interface{}
				if segs[0] != "global" {
					p = append(p, prefix...)
				}
				for _, sg := range segs {
					p = append(p, sg)
				}
				if _, present := lookup(s.merged, p); !present {
					add(&candidate{path: p, absent: true})
				}
			}
		}
		for _, d := range c.Dependencies() {
			refs(d, append(prefix[:len(prefix):len(prefix)], d.Name()))
		}
	}
	refs(s.processed, nil)
	return out
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

// change is a value to set.
type change struct {
	path  []interface{}
	value string
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
					m[seg] = c.value
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
					l[seg] = c.value
					break
				}
				cur = l[seg]
				src, _ = lookup(src, []interface{}{seg})
			}
		}
	}
	return root
}

// probeAll learns which image fields each candidate drives and how. The
// candidates with a non-empty value are probed together, in one render,
// each replaced by a marker of its own: emptiness decides a template's
// branches, and none changes. A field is attributed to the markers it
// holds, each with the others put back to their values; what cannot be
// attributed so (a field rebuilt otherwise than by substitution, a
// document changed beyond its image fields, a failed render) is probed
// again one candidate at a time. Empty and absent candidates, which switch
// branches, are probed one at a time. Renders: 1 for the batch, plus 1 per
// empty or absent candidate, plus 1 per candidate probed again.
func (s *session) probeAll(cands []*candidate) {
	var batch, single []*candidate
	for _, c := range cands {
		if c.absent || c.was == "" {
			single = append(single, c)
		} else {
			batch = append(batch, c)
		}
	}
	single = append(s.probeShared(batch, true), single...)
	s.alone = len(single)
	for _, c := range single {
		s.probe(c)
	}
}

// probeShared probes the candidates together and returns those to probe
// alone. When the shared render fails (a chart that rejects a repository
// it does not know, as Bitnami's do), and split is set, the registry keys
// and the others are probed apart, so that registries still share one
// render.
func (s *session) probeShared(batch []*candidate, split bool) []*candidate {
	if len(batch) < 2 {
		return batch
	}
	again, failed := s.probeBatch(batch)
	if !failed || !split {
		return again
	}
	var regs, others []*candidate
	for _, c := range batch {
		last, _ := c.path[len(c.path)-1].(string)
		if registryKey.MatchString(last) {
			regs = append(regs, c)
		} else {
			others = append(others, c)
		}
	}
	if len(regs) == 0 || len(others) == 0 {
		return again
	}
	return append(s.probeShared(regs, false), s.probeShared(others, false)...)
}

// probeBatch probes the candidates together and returns those to probe
// again alone, and whether the shared render failed as a whole.
func (s *session) probeBatch(batch []*candidate) ([]*candidate, bool) {
	changes := make([]change, len(batch))
	for i, c := range batch {
		changes[i] = change{c.path, markerValue(c, i)}
	}
	r, err := s.render(s.overlayFor(changes))
	if err != nil || len(r.Manifests) != len(s.base.Manifests) {
		return batch, true
	}
	again := map[int]bool{}
	marker := func(i int) string { return markerValue(batch[i], i) }
	present := func(text string) []int {
		var out []int
		for i := range batch {
			if strings.Contains(text, marker(i)) {
				out = append(out, i)
			}
		}
		return out
	}
	// suspects are the candidates whose value occurs in text, or all.
	suspects := func(text string) []int {
		var out []int
		for i, c := range batch {
			if strings.Contains(text, c.was) {
				out = append(out, i)
			}
		}
		if len(out) == 0 {
			for i := range batch {
				out = append(out, i)
			}
		}
		return out
	}
	changed := map[int]string{}
	for i, m := range r.Manifests {
		bm := s.base.Manifests[i]
		if m.Name != bm.Name {
			return batch, true
		}
		if m.Content == bm.Content {
			continue
		}
		one := &rendered.Chart{Manifests: append([]rendered.Manifest(nil), s.base.Manifests...)}
		one.Manifests[i] = m
		fields, _, err := s.compare(one)
		if err != nil {
			ps := present(m.Content)
			if len(ps) == 0 {
				ps = suspects(bm.Content)
			}
			for _, p := range ps {
				again[p] = true
			}
			continue
		}
		for k, v := range fields {
			changed[k] = v
		}
	}
	for _, k := range sortedKeys(changed) {
		v := changed[k]
		ps := present(v)
		if len(ps) == 0 {
			// Changed, but by no marker (a value transformed on its
			// way): probe alone the candidates found in it.
			for _, p := range suspects(s.fields[k].value) {
				again[p] = true
			}
			continue
		}
		back := v
		for _, p := range ps {
			back = strings.ReplaceAll(back, marker(p), batch[p].was)
		}
		if back != s.fields[k].value {
			for _, p := range ps {
				again[p] = true
			}
			continue
		}
		for _, p := range ps {
			c := batch[p]
			own := v
			for _, o := range ps {
				if o != p {
					own = strings.ReplaceAll(own, marker(o), batch[o].was)
				}
			}
			if c.drives == nil {
				c.drives, c.docs = map[int]string{}, map[int]bool{}
			}
			c.drives[k] = strings.ReplaceAll(own, marker(p), probeMarker)
			c.docs[s.fields[k].doc] = true
		}
	}
	var out []*candidate
	for i, c := range batch {
		if again[i] {
			c.drives, c.docs = nil, nil
			out = append(out, c)
			continue
		}
		s.learn(c)
	}
	return out, false
}

// probe renders the chart with the candidate replaced by a marker, learns
// which image fields it drives, and solves for the value that moves them.
func (s *session) probe(c *candidate) {
	mv := markerValue(c, -1)
	r, err := s.render(s.overlayFor([]change{{c.path, mv}}))
	if err != nil {
		c.reason = "rendering with it changed fails: " + err.Error()
		return
	}
	changed, docs, err := s.compare(r)
	if err != nil {
		c.reason = err.Error()
		return
	}
	for k, v := range changed {
		changed[k] = strings.ReplaceAll(v, mv, probeMarker)
	}
	c.drives, c.docs = changed, docs
	s.learn(c)
}

// learn solves for the value of c that moves the image fields it drives
// (c.drives, rendered with probeMarker in its place).
func (s *session) learn(c *candidate) {
	changed := c.drives
	if len(changed) == 0 {
		c.reason = "it drives no image"
		return
	}
	value, ok := "", false
	for _, k := range sortedKeys(changed) {
		f := s.fields[k]
		parts := strings.Split(changed[k], probeMarker)
		if len(parts) == 1 {
			c.reason = fmt.Sprintf("it changes %s in a way other than by substitution", f.value)
			return
		}
		if !c.absent && c.was != "" && strings.Join(parts, c.was) != f.value {
			c.reason = fmt.Sprintf("%s is not built from it by substitution", f.value)
			return
		}
		x, solved := solve(parts, f.want)
		if !solved {
			c.reason = fmt.Sprintf("no value of it gives %s", f.want)
			return
		}
		if ok && x != value {
			c.reason = fmt.Sprintf("its images need different values (%q, %q)", value, x)
			return
		}
		value, ok = x, true
		if f.moves() {
			c.covers = append(c.covers, k)
		}
	}
	if value == "" || (value == c.was && !c.absent) {
		c.reason = "it needs no change"
		c.covers = nil
		return
	}
	c.value = value
}

// solve finds x such that parts joined with x is want.
func solve(parts []string, want string) (string, bool) {
	n := len(parts) - 1
	fixed := 0
	for _, p := range parts {
		fixed += len(p)
	}
	if len(want) < fixed || (len(want)-fixed)%n != 0 {
		return "", false
	}
	l := (len(want) - fixed) / n
	if !strings.HasPrefix(want, parts[0]) {
		return "", false
	}
	x := want[len(parts[0]) : len(parts[0])+l]
	if strings.Join(parts, x) != want {
		return "", false
	}
	return x, true
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func (s *session) solve() (*Overlay, error) {
	cands := s.candidates()
	s.probeAll(cands)
	var chosen []*candidate
	var bad map[int]string // field -> why the check failed
	// A failed check drops the chosen keys that touched what came out
	// wrong and solves again: at least one key goes each time, so the
	// checks end.
	for {
		chosen = greedy(cands)
		if len(chosen) == 0 {
			break
		}
		var changes []change
		for _, c := range chosen {
			changes = append(changes, change{c.path, c.value})
		}
		r, err := s.render(s.overlayFor(changes))
		blame, failed := s.check(r, err, chosen)
		if len(blame) == 0 {
			break
		}
		if bad == nil {
			bad = map[int]string{}
		}
		for _, c := range blame {
			c.dropped = true
			for k := range c.drives {
				bad[k] = "setting " + PathString(c.path) + " along with the other keys does not give the target (" + strings.Join(failed, "; ") + ")"
			}
		}
		for _, c := range cands {
			c.chosen = false
		}
	}
	return s.overlay(cands, chosen, bad), nil
}

// greedy chooses keys: at each step the usable key that moves the most
// image fields not yet moved, touching none already touched (a shared
// registry key before per-image keys), then the shortest value, then the
// path, so that the result is stable.
func greedy(cands []*candidate) []*candidate {
	moved := map[int]bool{}
	touched := map[int]bool{}
	var chosen []*candidate
	for {
		var best *candidate
		bestGain := 0
		for _, c := range cands {
			if c.reason != "" || c.chosen || c.dropped || len(c.covers) == 0 {
				continue
			}
			clash := false
			for k := range c.drives {
				if touched[k] {
					clash = true
					break
				}
			}
			if clash {
				continue
			}
			gain := 0
			for _, k := range c.covers {
				if !moved[k] {
					gain++
				}
			}
			if gain == 0 {
				continue
			}
			if best == nil || gain > bestGain ||
				gain == bestGain && (len(c.value) < len(best.value) ||
					len(c.value) == len(best.value) && PathString(c.path) < PathString(best.path)) {
				best, bestGain = c, gain
			}
		}
		if best == nil {
			break
		}
		best.chosen = true
		chosen = append(chosen, best)
		for k := range best.drives {
			touched[k] = true
		}
		for _, k := range best.covers {
			moved[k] = true
		}
	}
	return chosen
}

// check compares the rendering with the overlay to the rewritten base
// rendering, document by document; it returns the chosen keys to blame
// for what differs.
func (s *session) check(r *rendered.Chart, rerr error, chosen []*candidate) ([]*candidate, []string) {
	if rerr != nil {
		return chosen, []string{rerr.Error()}
	}
	if len(r.Manifests) != len(s.base.Manifests) {
		return chosen, []string{fmt.Sprintf("%d documents instead of %d", len(r.Manifests), len(s.base.Manifests))}
	}
	covered := map[int]bool{}
	for _, c := range chosen {
		for _, k := range c.covers {
			covered[k] = true
		}
	}
	blamed := map[*candidate]bool{}
	var failed []string
	for i, m := range r.Manifests {
		// A document with no moved field must render as before;
		// one with moved fields must render as rewritten, except for
		// the fields no key moves.
		if m.Name == s.base.Manifests[i].Name && s.docOK(i, m.Content, covered) {
			continue
		}
		failed = append(failed, m.Name)
		any := false
		for _, c := range chosen {
			if c.docs[i] {
				blamed[c] = true
				any = true
			}
		}
		if !any {
			for _, c := range chosen {
				blamed[c] = true
			}
		}
	}
	var out []*candidate
	for _, c := range chosen {
		if blamed[c] {
			out = append(out, c)
		}
	}
	return out, failed
}

// docOK reports whether document i, rendered with the overlay as got,
// is what the overlay must give: the rewritten document, except that the
// image fields no chosen key moves keep their values. Equal bytes pass at
// once; otherwise the documents must be equal as YAML.
func (s *session) docOK(i int, got string, covered map[int]bool) bool {
	all := true
	for _, k := range s.docFields[i] {
		if s.fields[k].moves() && !covered[k] {
			all = false
		}
	}
	if all && got == s.want[i] {
		return true
	}
	n, fs, err := s.masked(got)
	if err != nil {
		return false
	}
	if n == nil {
		n = &yaml.Node{}
	}
	b, err := s.baseMasked(i)
	if err != nil || len(fs) != len(s.docFields[i]) || !sameNode(n, b) && !s.volatile(i) {
		return false
	}
	for j, f := range fs {
		k := s.docFields[i][j]
		want := s.fields[k].value
		if covered[k] || !s.fields[k].moves() {
			want = s.fields[k].want
		}
		if f.Path != s.fields[k].path || f.Value != want {
			return false
		}
	}
	return true
}

// overlay builds the result from the chosen keys.
func (s *session) overlay(cands, chosen []*candidate, bad map[int]string) *Overlay {
	o := &Overlay{Chart: s.src.Name(), Warnings: s.base.Warnings, Candidates: len(cands), Alone: s.alone, Renders: s.renders, cfg: s.cfg}
	if s.src.Metadata != nil {
		o.Version = s.src.Metadata.Version
	}
	covered := map[int]bool{}
	for _, c := range chosen {
		k := OverlayKey{Path: c.path, Value: c.value, Was: c.was}
		seen := map[Move]bool{}
		for _, f := range c.covers {
			covered[f] = true
			m := Move{s.fields[f].value, s.fields[f].want}
			if m.From == "" { // an operator's registry setting, absent or empty
				m.From = fmt.Sprintf("%s %s: %s unset", s.fields[f].kind, s.fields[f].obj, s.fields[f].path)
			}
			if !seen[m] {
				seen[m] = true
				k.Images = append(k.Images, m)
			}
		}
		sort.Slice(k.Images, func(i, j int) bool { return k.Images[i].From < k.Images[j].From })
		o.Keys = append(o.Keys, k)
	}
	sort.Slice(o.Keys, func(i, j int) bool { return PathString(o.Keys[i].Path) < PathString(o.Keys[j].Path) })
	var changes []change
	for _, k := range o.Keys {
		changes = append(changes, change{k.Path, k.Value})
	}
	o.tree = s.overlayFor(changes)
	templates := map[string]string{}
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, t := range c.Templates {
			templates[c.ChartFullPath()+"/"+t.Name] = string(t.Data)
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(s.processed)
	for k, f := range s.fields {
		if !f.moves() || covered[k] {
			continue
		}
		img := f.value
		if img == "" {
			img = `""`
		}
		u := UnmovedImage{Image: img, Target: f.want, Template: s.base.Manifests[f.doc].Name,
			Kind: f.kind, Namespace: f.namespace, Name: f.obj, Field: f.path}
		u.Line = literalLine(templates[u.Template], f.value)
		switch {
		case bad[k] != "":
			u.Reason = bad[k]
		default:
			u.Reason = s.whyUnmoved(cands, k, u.Line > 0)
		}
		o.Unmoved = append(o.Unmoved, u)
	}
	return o
}

func (s *session) whyUnmoved(cands []*candidate, k int, literal bool) string {
	var reasons []string
	for _, c := range cands {
		_, drives := c.drives[k]
		if c.reason != "" && (drives || c.drives == nil && c.was != "" && occursInName(s.fields[k].value, c.was)) {
			reasons = append(reasons, PathString(c.path)+": "+c.reason)
		}
	}
	if len(reasons) > 0 {
		return "the values that drive it cannot move it (" + strings.Join(reasons, "; ") + ")"
	}
	if literal {
		return "hard-coded in the template: no value drives it"
	}
	return "no value drives it (built in the templates)"
}

// literalLine is the 1-based line of the template that holds ref (or its
// repository part) literally, or 0.
func literalLine(tpl, ref string) int {
	for _, s := range []string{ref, ref[:nameEnd(ref)]} {
		if s == "" {
			continue
		}
		if i := strings.Index(tpl, s); i >= 0 {
			return strings.Count(tpl[:i], "\n") + 1
		}
	}
	return 0
}
