package airgap

import (
	"fmt"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"go.yaml.in/yaml/v3"
)

func (s *Search) masked(doc string) (*yaml.Node, []manifest.Field, error) {
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

func (s *Search) baseMasked(i int) (*yaml.Node, error) {
	if s.maskedBase[i] == nil {
		n, _, err := s.masked(s.base.Manifests[i].Content)
		if err != nil {
			return nil, err
		}
		if n == nil {
			n = &yaml.Node{}
		}
		s.maskedBase[i] = n
	}
	return s.maskedBase[i], nil
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
func (s *Search) compare(r *rendered.Chart, set []Setting) (map[int]string, map[int]bool, error) {
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
func (s *Search) compareDoc(i int, m rendered.Manifest, set []Setting) (changed map[int]string, doc bool, beyond, err error) {
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
func (s *Search) maskedText(doc string) string {
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
func (s *Search) volatile(i int) bool {
	if s.volatileDocs == nil {
		s.volatileDocs = map[int]bool{}
		if r, err := s.Render(nil); err == nil && len(r.Manifests) == len(s.base.Manifests) {
			for j, m := range r.Manifests {
				if m.Content != s.base.Manifests[j].Content {
					s.volatileDocs[j] = true
				}
			}
		}
	}
	return s.volatileDocs[i]
}

// Volatile reports whether document i of the base rendering renders
// differently at every render (see volatile).
func (s *Search) Volatile(i int) bool { return s.volatile(i) }

// SameImageFields reports whether two renderings of a document have the
// same image fields.
func (s *Search) SameImageFields(a, b string) bool {
	fa, err := s.findFields(a)
	if err != nil {
		return false
	}
	fb, err := s.findFields(b)
	if err != nil || len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].path != fb[i].path || fa[i].value != fb[i].value {
			return false
		}
	}
	return true
}
