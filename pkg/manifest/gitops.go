package manifest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// This file is the table of GitOps chart sources: the fields where Flux and
// Argo CD objects name the repository their controllers pull a Helm chart
// from. In an air gap the controllers pull it from the target registry,
// where rehost mirror pushes chart NAME at VERSION to
// <registry>/<chartsPath>/NAME:VERSION; each source is rewritten to point
// there (rewrite.Mapper.MapChart), in the form its kind reads.

// HelmChartMediaType is the media type of the layer that holds a Helm
// chart in an OCI registry.
const HelmChartMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// ChartField is a chart source of a GitOps kind: a map (Path) holding the
// URL of a chart repository or of one chart (URL).
type ChartField struct {
	Group string
	Kinds []string
	// Path is the dot-separated path of the map holding the source; "[]"
	// after a segment means every item of that list.
	Path string
	// URL is the key of the source's URL in the map.
	URL string
	// Form says what the URL names and how its target is written.
	Form rewrite.ChartForm
	// If are conditions the map must meet to be a chart source: dot paths
	// relative to it, each with the value it must hold ("" for any
	// non-empty value).
	If map[string]string
	// Type is the key, in the map, of a field that must say "oci" once the
	// URL is rewritten (Flux HelmRepository spec.type): set in place of
	// "default" (or an empty value), added when absent.
	Type string
	// Chart and Version are dot paths, relative to the map, of the chart's
	// name and version (the first non-empty of Version), for the listing.
	Chart   string
	Version []string
	// Caveats are fields that, when set, do not carry over to the rewritten
	// source: reported when it is rewritten.
	Caveats []ChartCaveat
	// Artifacts says that a map at Path that does not meet If but whose URL
	// is an oci:// URL is an OCI artifact rehost does not rewrite: reported
	// (an Argo CD source without chart: a chart or plain manifests).
	Artifacts bool
}

// ChartCaveat is a field of a chart source that, when set to a value other
// than Except, does not carry over to the rewritten source.
type ChartCaveat struct {
	Path   string
	Except []string
	Why    string
}

// BuiltinChartFields returns the built-in GitOps chart sources.
func BuiltinChartFields() []ChartField {
	const flux = "source.toolkit.fluxcd.io"
	provider := func(p string) ChartCaveat {
		return ChartCaveat{Path: p, Except: []string{"generic"}, Why: "its cloud login is for the source registry; the target registry takes static credentials (provider generic, with secretRef)"}
	}
	digest := func(p string) ChartCaveat {
		return ChartCaveat{Path: p, Why: "it pins the source chart's digest, which a relocated chart does not have: remove it, or pin the digest of the chart in the target registry"}
	}
	verify := func(p string) ChartCaveat {
		return ChartCaveat{Path: p, Why: "it verifies the source chart's signature, which a relocated chart does not carry: sign the chart in the target registry, or remove it"}
	}
	out := []ChartField{
		// Flux HelmRepository
		// (https://fluxcd.io/flux/components/source/helmrepositories/):
		// spec.url is an https:// index or, with spec.type oci, an oci://
		// repository from which a HelmChart (or a HelmRelease's
		// spec.chart.spec) pulls chart NAME at VERSION as URL/NAME:VERSION.
		// HelmCharts and HelmReleases name the repository and the chart, so
		// they stay as written.
		{Group: flux, Kinds: []string{"HelmRepository"}, Path: "spec", URL: "url", Form: rewrite.ChartRepoOCI, Type: "type", Caveats: []ChartCaveat{provider("provider")}},
		// Flux OCIRepository of a chart
		// (https://fluxcd.io/flux/components/helm/helmreleases/#chart-reference):
		// a HelmRelease's spec.chartRef names it, and its layerSelector
		// picks the chart's layer. Other OCIRepositories are OCI artifacts,
		// mapped as images (BuiltinCompositeFields).
		{Group: flux, Kinds: []string{"OCIRepository"}, Path: "spec", URL: "url", Form: rewrite.ChartOCI, If: map[string]string{"layerSelector.mediaType": HelmChartMediaType},
			Version: []string{"ref.semver", "ref.tag"}, Caveats: []ChartCaveat{digest("ref.digest"), verify("verify"), provider("provider")}},
		// A HelmRelease whose chart template makes an OCIRepository
		// (spec.chart.kind OCIRepository, spec.chart.spec.url).
		{Group: "helm.toolkit.fluxcd.io", Kinds: []string{"HelmRelease"}, Path: "spec.chart", URL: "spec.url", Form: rewrite.ChartOCI, If: map[string]string{"kind": "OCIRepository"},
			Version: []string{"spec.ref.semver", "spec.ref.tag"}, Caveats: []ChartCaveat{digest("spec.ref.digest"), verify("spec.verify"), provider("spec.provider")}},
	}
	// Argo CD Application and ApplicationSet sources with a chart
	// (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/): Argo CD
	// reads a repoURL without a scheme as an OCI Helm repository
	// (util/helm IsHelmOciRepo) and pulls oci://REPOURL/CHART:VERSION;
	// sources without a chart (Git, or OCI artifacts) are not chart
	// repositories.
	for _, p := range []string{"spec.source", "spec.sources[]"} {
		for kind, prefix := range map[string]string{"Application": "", "ApplicationSet": "spec.template."} {
			out = append(out, ChartField{Group: "argoproj.io", Kinds: []string{kind}, Path: prefix + p, URL: "repoURL", Form: rewrite.ChartRepoHost,
				If: map[string]string{"chart": ""}, Chart: "chart", Version: []string{"targetRevision"}, Artifacts: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kinds[0] < out[j].Kinds[0] })
	return out
}

// chartEntry is a parsed ChartField.
type chartEntry struct {
	ChartField
	path, url, chart rewrite.FieldPath
	cond             []chartCond
	version          []rewrite.FieldPath
	caveats          []chartCaveat
}

type chartCond struct {
	path  rewrite.FieldPath
	value string
}

type chartCaveat struct {
	ChartCaveat
	path rewrite.FieldPath
}

func parseChartField(c ChartField) (chartEntry, error) {
	e := chartEntry{ChartField: c}
	var err error
	if e.path, err = rewrite.ParseFieldPath(c.Path); err != nil {
		return e, err
	}
	if e.url, err = rewrite.ParseFieldPath(c.URL); err != nil {
		return e, err
	}
	if c.Chart != "" {
		if e.chart, err = rewrite.ParseFieldPath(c.Chart); err != nil {
			return e, err
		}
	}
	if strings.ContainsAny(c.Type, ".[]") {
		return e, fmt.Errorf("chart source %s: type %q must be a key of the map", c.Path, c.Type)
	}
	keys := make([]string, 0, len(c.If))
	for k := range c.If {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, err := rewrite.ParseFieldPath(k)
		if err != nil {
			return e, err
		}
		e.cond = append(e.cond, chartCond{p, c.If[k]})
	}
	for _, v := range c.Version {
		p, err := rewrite.ParseFieldPath(v)
		if err != nil {
			return e, err
		}
		e.version = append(e.version, p)
	}
	for _, cv := range c.Caveats {
		p, err := rewrite.ParseFieldPath(cv.Path)
		if err != nil {
			return e, err
		}
		e.caveats = append(e.caveats, chartCaveat{cv, p})
	}
	return e, nil
}

func (f *Finder) addChartField(c ChartField) error {
	e, err := parseChartField(c)
	if err != nil {
		return err
	}
	for _, k := range c.Kinds {
		gk := groupKind{c.Group, k}
		f.charts[gk] = append(f.charts[gk], e)
		f.addKindWord(k) // an https:// URL holds nothing the fast path sees
	}
	return nil
}

// chartSpec is what the rewriter needs to know about a chart source
// besides its URL field.
type chartSpec struct {
	form rewrite.ChartForm
	// typ is the field that must say "oci", nil when the kind has none:
	// its value, or (Add set) the map to add it to.
	typ            *Field
	chart, version string
	// caveats are the caveats of the fields set.
	caveats []string
}

// chartSkip is a chart source rehost leaves as written, and why.
type chartSkip struct {
	Field
	why string
}

// chartSource adds the chart sources of entry c in map m, if m is one: a
// URL key written more than once gives a source per value, each rewritten
// (a decoder keeps one of them, which one depends on the decoder), and
// the duplicate key is reported as duplicate image keys are (dupkeys.go).
func (w *walker) chartSource(m *yaml.Node, c chartEntry) {
	var urls []*yaml.Node
	eachRaw(m, c.url, func(raw *yaml.Node) {
		if !isEmpty(resolve(raw)) {
			urls = append(urls, raw)
		}
	})
	if len(urls) == 0 {
		return
	}
	for _, cond := range c.cond {
		v := scalar(lookupPath(m, cond.path))
		if v == "" || cond.value != "" && v != cond.value {
			for _, raw := range urls {
				if u := resolve(raw); c.Artifacts && isString(u) && strings.HasPrefix(u.Value, "oci://") {
					key := pathString(cond.path)
					w.chart.skips = append(w.chart.skips, chartSkip{w.field(raw, pathSegments(c.url)...), fmt.Sprintf("an OCI source without %s is an artifact rehost does not map (a Helm chart read with path, or plain manifests); copy it to the target registry and point the source there, or name the chart with %s and its repository", key, key)})
				}
			}
			return
		}
	}
	spec := chartSpec{form: c.Form}
	if c.chart != nil {
		spec.chart = scalar(lookupPath(m, c.chart))
	}
	for _, p := range c.version {
		if v := scalar(lookupPath(m, p)); v != "" {
			spec.version = v
			break
		}
	}
	for _, cv := range c.caveats {
		v := lookupPath(m, cv.path)
		if isEmpty(v) {
			continue
		}
		ok := false
		for _, e := range cv.Except {
			ok = ok || scalar(v) == e
		}
		if !ok {
			spec.caveats = append(spec.caveats, fmt.Sprintf("%s is set: %s", pathString(cv.path), cv.Why))
		}
	}
	for i, raw := range urls {
		f := w.field(raw, pathSegments(c.url)...)
		sp := spec
		if c.Type != "" && i == 0 {
			// The map's type is set (or added) once, with its first URL.
			var tf Field
			if v := get(m, c.Type); v != nil {
				tf = w.field(v, c.Type)
			} else {
				tf = w.field(m)
				tf.Path, tf.Add = w.pathString(c.Type), []string{c.Type}
			}
			sp.typ = &tf
		}
		f.Type, f.chart = TypeChart, &sp
		w.chart.sources = append(w.chart.sources, f)
	}
}

// eachRaw calls fn with every value at path p below map m, through every
// value of a duplicated key, the last one not resolved (an alias stays an
// alias, for the place of a field).
func eachRaw(m *yaml.Node, p rewrite.FieldPath, fn func(raw *yaml.Node)) {
	m = resolve(m)
	if len(p) == 0 || p[0].Each || m == nil || m.Kind != yaml.MappingNode {
		return
	}
	eachValue(m, p[0].Key, func(v *yaml.Node) {
		if len(p) == 1 {
			fn(v)
			return
		}
		eachRaw(v, p[1:], fn)
	})
}

// withoutChartURLs drops the image fields whose node is the URL of a chart
// source: a Flux OCIRepository of a chart is a chart, not an image.
func withoutChartURLs(fields, charts []Field) []Field {
	if len(charts) == 0 {
		return fields
	}
	urls := map[*yaml.Node]bool{}
	for _, c := range charts {
		urls[c.Node] = true
	}
	out := fields[:0]
	for _, f := range fields {
		if !urls[f.Node] {
			out = append(out, f)
		}
	}
	return out
}

// ChartSource is a chart source met in GitOps objects, with its mapping
// and every place it occurs (or the first one, with
// WithFirstOccurrences).
type ChartSource struct {
	// Source is the URL as written; Target the URL written in its place
	// (Source itself when Action is not rewritten).
	Source string         `json:"source"`
	Target string         `json:"target"`
	Action rewrite.Action `json:"action"`
	// Count is how many times the source occurs with this target.
	Count     int             `json:"count"`
	Locations []ChartLocation `json:"locations"`
}

// ChartLocation is one place a chart source occurs.
type ChartLocation struct {
	rewrite.Location
	// Chart and Version are the chart's name and version (or version
	// range) where the object names them (Argo CD sources, a Flux
	// OCIRepository's URL and tag).
	Chart   string `json:"chart,omitempty"`
	Version string `json:"version,omitempty"`
	// TypeAdded says spec.type: oci was added (a Flux HelmRepository
	// without a type); TypeWas is the value it replaced ("default").
	TypeAdded bool   `json:"typeAdded,omitempty"`
	TypeWas   string `json:"typeWas,omitempty"`
}

// chartOcc is one chart source found in a document.
type chartOcc struct {
	m   rewrite.ChartMapping
	loc ChartLocation
}

// chartSet groups chart sources by source and target.
type chartSet struct {
	firstOnly bool
	byKey     map[[2]string]*ChartSource
}

func (s *chartSet) add(o chartOcc) {
	if s.byKey == nil {
		s.byKey = map[[2]string]*ChartSource{}
	}
	k := [2]string{o.m.Source, o.m.Target}
	c := s.byKey[k]
	if c == nil {
		c = &ChartSource{Source: o.m.Source, Target: o.m.Target, Action: o.m.Action}
		s.byKey[k] = c
	}
	c.Count++
	if c.Count == 1 || !s.firstOnly {
		c.Locations = append(c.Locations, o.loc)
	}
}

func (s *chartSet) list() []ChartSource {
	out := make([]ChartSource, 0, len(s.byKey))
	for _, c := range s.byKey {
		cc := *c
		cc.Locations = append([]ChartLocation(nil), c.Locations...)
		out = append(out, cc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Target < out[j].Target
	})
	return out
}

// Charts returns the GitOps chart sources met so far (Flux HelmRepository
// and OCIRepository URLs, Argo CD sources with a chart), sorted by source:
// rewritten to the target registry's charts, excluded, or already there.
// Config.NoChartSources leaves them out.
func (rw *Rewriter) Charts() []ChartSource {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.charts.list()
}

// mapCharts maps the chart sources of a document into res; each one to
// rewrite becomes edits in ms: its URL and, for a kind whose type must say
// oci, its type. A source that cannot be mapped is an error (a warning
// with Config.SkipInvalid) and stays as written.
func (rw *Rewriter) mapCharts(cs []Field, skips []chartSkip, where func(Field) rewrite.Location, ms *[]mapped, res *result) {
	for _, s := range skips {
		loc := where(s.Field)
		loc.Value = s.Value
		res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("chart source %s left as written: %s", bounded.Word(s.Value), s.why)})
	}
	for _, f := range cs {
		loc := where(f)
		spec := f.chart
		failAt := func(loc rewrite.Location, err error) {
			err = &Error{Location: loc, Err: err}
			if rw.skipInvalid {
				res.warns = append(res.warns, err)
			} else {
				res.errs = append(res.errs, err)
			}
		}
		fail := func(err error) { failAt(loc, err) }
		if !isString(f.Node) {
			fail(fmt.Errorf("chart source is not a string: %s", describe(f.Node)))
			continue
		}
		loc.Value = f.Value
		if isTemplate(f.Value) {
			res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("chart source %s left as written: a template or a variable, which rehost cannot map; write the repository, or map it where the value is set", bounded.Word(f.Value))})
			continue
		}
		m, err := rw.mapper.MapChart(f.Value, spec.form)
		if err != nil {
			fail(err)
			continue
		}
		cl := ChartLocation{Location: loc, Chart: spec.chart, Version: spec.version}
		if m.Name != "" && cl.Chart == "" {
			cl.Chart = m.Name
		}
		var edits []mapped
		if m.Action == rewrite.Rewritten {
			occ := rewrite.Occurrence{Location: loc}
			edits = append(edits, mapped{field: &f, occ: occ, edit: &edit{node: f.Node, value: m.Target}, unlisted: true})
			if t := spec.typ; t != nil {
				switch {
				case t.Add != nil:
					cl.TypeAdded = true
					edits = append(edits, mapped{field: t, occ: occ, edit: &edit{node: t.Node, value: "oci", insert: t.Add}, unlisted: true})
				case isEmpty(t.Node) || isString(t.Node) && t.Node.Value == "default":
					cl.TypeWas = t.Node.Value
					if cl.TypeWas == "" {
						cl.TypeWas = "(empty)"
					}
					edits = append(edits, mapped{field: t, occ: occ, edit: &edit{node: t.Node, value: "oci"}, unlisted: true})
				case isString(t.Node) && t.Node.Value == "oci":
				default:
					tl := where(*t)
					tl.Value = scalar(t.Node)
					failAt(tl, fmt.Errorf("chart source %s not rewritten: %s %s, want default or oci", bounded.Word(f.Value), bounded.Cut(t.Path, bounded.MaxQuoted), describe(t.Node)))
					edits = nil
				}
			}
			if edits == nil {
				continue
			}
			for _, c := range spec.caveats {
				res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("chart source rewritten to %s, but %s", bounded.Word(m.Target), c)})
			}
		}
		*ms = append(*ms, edits...)
		res.charts = append(res.charts, chartOcc{m: m, loc: cl})
	}
}

// isTemplate reports whether a value holds a Go or Helm template action
// ("{{ .repoURL }}", an ApplicationSet's) or a shell or Flux variable
// ("${REGISTRY}", Flux post-build substitution).
func isTemplate(v string) bool {
	return strings.Contains(v, "{{") || strings.Contains(v, "${")
}

// chartState is what chartSources found in a document: the URLs of the
// chart sources (Field.chart set) and the sources left as written.
type chartState struct {
	sources []Field
	skips   []chartSkip
}

// chartSources finds the GitOps chart sources (BuiltinChartFields), unless
// Config.NoChartSources.
type chartSources struct {
	entries map[groupKind][]chartEntry
}

func (d chartSources) detect(w *walker, o object) {
	if w.f.noCharts {
		return
	}
	for _, c := range d.entries[o.gk] {
		w.at(o.node, c.path, func(m *yaml.Node) { w.chartSource(m, c) })
	}
}
