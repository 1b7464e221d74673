package airgap

import (
	"bytes"
	"fmt"

	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
)

// DefaultMaxRenders is the most times a search renders a chart.
const DefaultMaxRenders = 200

// The render budget (see the package doc): ProbeSlack renders for probe
// groups that teach nothing, maxChecks check renders.
const (
	ProbeSlack = 4
	maxChecks  = 4
)

// Chart is the chart a search works on and the values it renders with.
type Chart struct {
	// Source is the chart as loaded; the search does not modify it.
	Source *chart.Chart
	// Files are the user's values files, merged; Sets the --set values,
	// which Helm applies after every file (and so after the overlay).
	Files, Sets map[string]interface{}
	// Render renders a copy of Source with the values given, whole.
	Render func(values map[string]interface{}) (*rendered.Chart, error)
	// Resolve processes the dependencies of a copy of Source for the
	// values given (aliases, enabled subcharts, imported values) and
	// returns it with the values it renders with, coalesced.
	Resolve func(values map[string]interface{}) (*chart.Chart, map[string]interface{}, error)
}

// Search is the search for one chart's overlay: the chart rendered as
// given, its image fields and their targets, and the renders made so far.
// [Search.Solve] runs the search; the chart's other methods serve
// rehost relocate, which checks a relocated chart against the overlay.
// A Search is not safe for concurrent use.
type Search struct {
	chart  Chart
	cfg    rewrite.Config
	finder *manifest.Finder
	mapper *rewrite.Mapper

	resolved *chart.Chart           // dependencies processed: aliases, enabled subcharts
	merged   map[string]interface{} // the values the chart renders with
	base     *rendered.Chart        // the chart rendered as given
	// rewritten are the documents of base as rehost rewrite writes them.
	rewritten []string
	// fields are the image fields of base, in document order; docFields
	// the indexes in fields of each document's.
	fields    []imageField
	docFields [][]int
	// maskedBase are base's documents parsed, image fields blanked; each
	// parsed when first compared.
	maskedBase []*yaml.Node
	// volatileDocs are the documents that render differently at every
	// render; nil until asked (see volatile).
	volatileDocs map[int]bool

	renders int
	// MaxRenders is the ceiling on renders: DefaultMaxRenders unless
	// set lower (tests) before Solve.
	MaxRenders int
}

// imageField is an image field of the base rendering: a field rehost
// rewrite may change.
type imageField struct {
	doc                  int // its document in the base rendering
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

// moves reports whether rehost rewrite changes the field.
func (f imageField) moves() bool { return f.value != f.want }

// New renders the chart as given and finds its image fields and their
// targets under cfg.
func New(ch Chart, cfg rewrite.Config) (*Search, error) {
	if ch.Files == nil {
		ch.Files = map[string]interface{}{}
	}
	finder, err := manifest.NewFinder(cfg.ImageFields)
	if err != nil {
		return nil, err
	}
	mapper, err := rewrite.NewMapper(cfg)
	if err != nil {
		return nil, err
	}
	s := &Search{chart: ch, cfg: cfg, finder: finder, mapper: mapper, MaxRenders: DefaultMaxRenders}
	if s.base, err = s.Render(nil); err != nil {
		return nil, err
	}
	rw, err := manifest.New(cfg)
	if err != nil {
		return nil, err
	}
	if s.resolved, s.merged, err = ch.Resolve(s.values(nil)); err != nil {
		return nil, err
	}
	// A ConfigMap value may be an image that another template's container
	// receives through $(VAR): both the rewrite and the comparisons must
	// know it before the first template.
	streams := make([][]byte, len(s.base.Manifests))
	for i, m := range s.base.Manifests {
		streams[i] = []byte(m.Content)
		if err := rw.ScanEnvImages(bytes.NewReader(streams[i])); err != nil {
			return nil, err
		}
	}
	s.finder = s.finder.WithEnvImages(streams...)
	s.docFields = make([][]int, len(s.base.Manifests))
	s.maskedBase = make([]*yaml.Node, len(s.base.Manifests))
	for i, m := range s.base.Manifests {
		out, err := rw.RewriteBytes([]byte(m.Content), m.Name)
		if err != nil {
			return nil, err
		}
		s.rewritten = append(s.rewritten, string(out))
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

// Warnings are Helm's warnings from the render as given.
func (s *Search) Warnings() []string { return s.base.Warnings }

// AddWarnings puts warnings (the loader's) before Helm's.
func (s *Search) AddWarnings(w []string) { s.base.Warnings = append(w, s.base.Warnings...) }

// Render renders the chart with the user's values files, the overlay,
// then the user's --set values, and counts the render.
func (s *Search) Render(overlay map[string]interface{}) (*rendered.Chart, error) {
	s.renders++
	return s.chart.Render(s.values(overlay))
}

// values are the values the chart renders with: the user's files, the
// overlay, then the user's --set values.
func (s *Search) values(overlay map[string]interface{}) map[string]interface{} {
	return valuetree.Merge(valuetree.Merge(valuetree.CopyMap(s.chart.Files), overlay), s.chart.Sets)
}

// find returns the fields of an object that rehost rewrite may change:
// image fields, composed references and registry settings, and the
// embedded references it rewrites (the named ones, such as
// --*-image=REF arguments and *_IMAGE env values, unless NoNamedEmbedded;
// all of them with RewriteEmbedded); the images guessed by key name in
// custom resources unless NoGuessImages.
func (s *Search) find(n *yaml.Node) []manifest.Field {
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
func (s *Search) findFields(doc string) ([]imageField, error) {
	n, err := parseDoc(doc)
	if err != nil || n == nil {
		return nil, err
	}
	var out []imageField
	for _, f := range s.find(n) {
		fd := imageField{path: f.Path, kind: f.Kind, namespace: f.Namespace, obj: f.Name, value: nodeValue(f), token: f.Value, at: f.At, registry: f.Type == manifest.TypeRegistry}
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

// Setting is a key to set: Value, or Raw when it is not a string (a
// family's switch).
type Setting struct {
	Path  []interface{}
	Value string
	Raw   interface{}
}

// value is what the setting sets.
func (c Setting) value() interface{} {
	if c.Raw != nil {
		return c.Raw
	}
	return c.Value
}

// Overlay builds the values overlay that makes the settings: nested maps
// down to each key, and a copy of the merged list with the setting where
// a key is inside a list (Helm replaces lists).
func (s *Search) Overlay(settings []Setting) map[string]interface{} {
	root := map[string]interface{}{}
	for _, c := range settings {
		var cur interface{} = root
		var src interface{} = s.merged
		copied := false // inside a copied list: every step exists
		for i, seg := range c.Path {
			last := i == len(c.Path)-1
			switch seg := seg.(type) {
			case string:
				m, _ := valuetree.AsMap(cur)
				if last {
					m[seg] = c.value()
					break
				}
				next, _ := valuetree.Lookup(src, []interface{}{seg})
				src = next
				if copied {
					cur = m[seg]
					break
				}
				if l, ok := next.([]interface{}); ok {
					if _, ok := m[seg].([]interface{}); !ok {
						m[seg] = valuetree.Copy(l)
					}
					cur, copied = m[seg], true
					break
				}
				sub, ok := valuetree.AsMap(m[seg])
				if !ok {
					sub = map[string]interface{}{}
					m[seg] = sub
				}
				cur = sub
			case int:
				l := cur.([]interface{})
				if last {
					l[seg] = c.value()
					break
				}
				cur = l[seg]
				src, _ = valuetree.Lookup(src, []interface{}{seg})
			}
		}
	}
	return root
}
