package manifest

import (
	"fmt"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// splitReferences finds the references split across fields
// (BuiltinCompositeFields): a repository with its tag or digest, or a
// registry, beside it.
type splitReferences struct {
	composites map[groupKind][]composite
}

func (d splitReferences) detect(w *walker, o object) {
	for _, c := range d.composites[o.gk] {
		w.at(o.node, c.path, func(m *yaml.Node) { w.composite(o.node, m, c) })
	}
}

// composite is a parsed CompositeField.

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
	f.Type = TypeSplit
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
			rf.Type = TypeSplit
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
