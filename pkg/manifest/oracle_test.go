package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// This file is the fuzz targets' oracle. It does not use the code under
// test to compute what to expect: refModel is a small reference model of
// the mapping, written from docs/mapping.md's table, and
// assertValuesPreserved parses input and output with yaml.v3 on its own,
// resolves aliases and merge keys, and compares every scalar.

// refModel maps an image reference as docs/mapping.md says rehost does, for a
// target registry with an optional prefix, in strip or nest style, without
// exclusions.
type refModel struct {
	host, prefix string
	nest         bool
}

// newRefModel is the model of cfg's mapping; ok is false for configs the
// model does not cover (exclusions).
func newRefModel(cfg rewrite.Config) (refModel, bool) {
	if len(cfg.Exclude) > 0 {
		return refModel{}, false
	}
	reg := cfg.Registry
	if reg == "" {
		reg = "sea.hub:5000"
	}
	host, prefix, _ := strings.Cut(reg, "/")
	return refModel{host: modelHost(host), prefix: prefix, nest: cfg.PathStyle == rewrite.PathStyleNest}, true
}

// modelHost lower-cases a registry host; Docker Hub is "docker.io".
func modelHost(h string) string {
	h = strings.ToLower(h)
	if h == "index.docker.io" {
		return "docker.io"
	}
	return h
}

// split splits a reference as written into registry host, repository path
// and suffix (":tag", "@digest", ":tag@digest" or "").
func (refModel) split(ref string) (host, path, suffix string) {
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest {
		suffix = "@" + digest
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, suffix = name[:i], name[i:]+suffix
	}
	first, rest, hasSlash := strings.Cut(name, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		host, path = modelHost(first), rest
	} else {
		host, path = "docker.io", name
	}
	if host == "docker.io" && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	return host, path, suffix
}

// target is where ref goes: unchanged when already in the target registry.
func (m refModel) target(ref string) string {
	host, path, suffix := m.split(ref)
	if host == m.host {
		return ref
	}
	if m.nest {
		path = strings.ReplaceAll(host, ":", "_") + "/" + path
	}
	if m.prefix != "" {
		path = m.prefix + "/" + path
	}
	return m.host + "/" + path + suffix
}

// qualified is ref fully qualified, ":latest" made explicit.
func (m refModel) qualified(ref string) string {
	host, path, suffix := m.split(ref)
	if suffix == "" {
		suffix = ":latest"
	}
	return host + "/" + path + suffix
}

// oracleT is the part of *testing.T the oracle uses, so that a test can
// check that the oracle itself fails on a corrupted output.
type oracleT interface {
	Helper()
	Errorf(format string, args ...any)
}

// scalarAt is one scalar of a document, reached by a path: a value, or a
// mapping key (path ending in "#key").
type scalarAt struct {
	path string
	node *yaml.Node
}

// maxOracleScalars bounds the walk of one stream (aliases are expanded).
const maxOracleScalars = 200000

// assertValuesPreserved parses in and out with yaml.v3 and compares every
// scalar, aliases and merge keys resolved, path by path:
//   - the structure (kinds, keys, lengths, tags) is the same;
//   - a scalar at the path of a rewritten image occurrence becomes the
//     input value with each occurrence's reference replaced by the model's
//     target (whole fields, the repository of composed fields, embedded
//     references), and every listed target is the model's;
//   - every other scalar keeps its value, whatever anchor it shares with
//     an image field.
//
// It checks nothing when the input does not parse as a whole (the fast
// path lets documents through unparsed) or its aliases expand beyond
// maxOracleScalars; it reports whether it checked.
func assertValuesPreserved(t oracleT, m refModel, in, out []byte, images []rewrite.Image, file string) bool {
	t.Helper()
	inDocs, err := decodeAll(in)
	if err != nil {
		return false
	}
	outDocs, err := decodeAll(out)
	if err != nil {
		t.Errorf("the input parses, the output does not: %v", err)
		return true
	}
	if len(inDocs) != len(outDocs) {
		t.Errorf("%d documents in, %d out", len(inDocs), len(outDocs))
		return true
	}

	// The registry parts of split references become the registry part of
	// the target (see registryParts).
	parts := registryParts(in, images, file)
	ref := func(l rewrite.Location) string {
		if repo, ok := parts[l]; ok {
			return strings.TrimSuffix(l.Value, "/") + "/" + repo
		}
		return l.Value
	}
	target := func(l rewrite.Location) string {
		if repo, ok := parts[l]; ok {
			return registryTarget(m.target, l.Value, repo)
		}
		return m.target(l.Value)
	}

	// The rewritten occurrences, by document (found by line) and path.
	starts := make([]int, len(inDocs))
	for i, d := range inDocs {
		starts[i] = docStart(d)
	}
	occs := make([]map[string][]rewrite.Location, len(inDocs))
	for _, img := range images {
		if img.Action != rewrite.Rewritten {
			continue
		}
		for _, l := range img.Occurrences {
			if l.File != file {
				continue
			}
			// The listed target is the model's; a composed field's
			// occurrence is its repository alone (its tag or digest is in
			// another field): then only the repository is compared.
			q := m.qualified(m.target(ref(l)))
			if _, _, suffix := m.split(ref(l)); suffix == "" {
				h1, p1, _ := m.split(q)
				h2, p2, _ := m.split(img.Target)
				if h1 == h2 && p1 == p2 {
					q = img.Target
				}
			}
			if q != img.Target {
				t.Errorf("%s at line %d: listed target %s, the model says %s", l.Value, l.Line, img.Target, q)
			}
			d := sort.Search(len(starts), func(i int) bool { return starts[i] > l.Line }) - 1
			if d < 0 {
				t.Errorf("occurrence at line %d before the first document", l.Line)
				continue
			}
			if occs[d] == nil {
				occs[d] = map[string][]rewrite.Location{}
			}
			occs[d][l.Field] = append(occs[d][l.Field], l)
		}
	}

	budget := maxOracleScalars
	for d := range inDocs {
		a, okA := walkScalars(inDocs[d], &budget)
		b, okB := walkScalars(outDocs[d], &budget)
		if !okA || !okB {
			return false
		}
		if len(a) != len(b) {
			t.Errorf("document %d: %d scalars in, %d out", d+1, len(a), len(b))
			continue
		}
		if hasDuplicatePaths(a) {
			// A key written twice in a map: one path, several values,
			// which this oracle cannot tell apart (the duplicate-key
			// tests check those documents).
			continue
		}
		seen := map[string]bool{}
		for i := range a {
			x, y := a[i], b[i]
			if x.path != y.path {
				t.Errorf("document %d: structure changed: %s in, %s out", d+1, x.path, y.path)
				break
			}
			if x.node.Kind != y.node.Kind || x.node.ShortTag() != y.node.ShortTag() {
				t.Errorf("document %d: %s: %v %s in, %v %s out", d+1, x.path, x.node.Kind, x.node.ShortTag(), y.node.Kind, y.node.ShortTag())
				continue
			}
			if x.node.Kind != yaml.ScalarNode {
				continue
			}
			want := x.node.Value
			if locs := atNode(occs[d][x.path], x.node); len(locs) > 0 {
				if w, ok := replaceOccurrences(target, x.node.Value, locs); ok {
					want = w
					seen[x.path] = true
				}
			}
			if y.node.Value != want {
				if want == x.node.Value {
					t.Errorf("document %d: non-image value %s changed:\n in: %q\nout: %q", d+1, x.path, x.node.Value, y.node.Value)
				} else {
					t.Errorf("document %d: image value %s is not the model's target:\n in: %q\nout: %q\nwant %q", d+1, x.path, x.node.Value, y.node.Value, want)
				}
			}
		}
		for p := range occs[d] {
			if !seen[p] {
				t.Errorf("document %d: rewritten occurrence at %s (%q) not found in the input", d+1, p, occs[d][p][0].Value)
			}
		}
	}
	return true
}

// hasDuplicatePaths reports whether two scalars of a walk share a path.
func hasDuplicatePaths(ss []scalarAt) bool {
	seen := map[string]bool{}
	for _, x := range ss {
		if x.node.Kind == yaml.ScalarNode {
			if seen[x.path] {
				return true
			}
			seen[x.path] = true
		}
	}
	return false
}

// atNode narrows the occurrences at one path to those of node n, where a
// path stands for several nodes (a key written twice in a map): the
// occurrences at n's position, or inside its value for references that
// are part of it. When none is (n reached through an alias, whose
// occurrence is at the alias), all of them are kept.
func atNode(locs []rewrite.Location, n *yaml.Node) []rewrite.Location {
	if len(locs) < 2 {
		return locs
	}
	var out []rewrite.Location
	last := n.Line + strings.Count(n.Value, "\n") + 1
	for _, l := range locs {
		if l.Line == n.Line && l.Column == n.Column || l.Value != n.Value && l.Line >= n.Line && l.Line <= last {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return locs
	}
	return out
}

// replaceOccurrences replaces, left to right, each occurrence's reference
// in s by its target; ok is false when one is not found.
func replaceOccurrences(target func(rewrite.Location) string, s string, locs []rewrite.Location) (string, bool) {
	locs = append([]rewrite.Location(nil), locs...)
	sort.SliceStable(locs, func(i, j int) bool {
		if locs[i].Line != locs[j].Line {
			return locs[i].Line < locs[j].Line
		}
		return locs[i].Column < locs[j].Column
	})
	var b strings.Builder
	rest := s
	for _, l := range locs {
		i := strings.Index(rest, l.Value)
		if i < 0 {
			return s, false
		}
		b.WriteString(rest[:i])
		b.WriteString(target(l))
		rest = rest[i+len(l.Value):]
	}
	b.WriteString(rest)
	return b.String(), true
}

func decodeAll(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// docStart is the first line of a document's content.
func docStart(d *yaml.Node) int {
	if len(d.Content) > 0 {
		return d.Content[0].Line
	}
	return d.Line
}

// walkScalars lists every node of a document under its path (keys joined
// with ".", indexes as "[i]", as Location.Field writes them), aliases
// resolved and merge keys ("<<") expanded: a mapping's own keys, then the
// merged keys it does not override, the first merged mapping winning. A
// mapping key is listed as "<path>.<key>#key". ok is false when the budget
// runs out.
func walkScalars(doc *yaml.Node, budget *int) (out []scalarAt, ok bool) {
	var walk func(n *yaml.Node, path string, active map[*yaml.Node]bool) bool
	join := func(path, seg string) string {
		if path == "" || strings.HasPrefix(seg, "[") {
			return path + seg
		}
		return path + "." + seg
	}
	walk = func(n *yaml.Node, path string, active map[*yaml.Node]bool) bool {
		if *budget--; *budget < 0 {
			return false
		}
		for n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if active[n] { // a node inside itself: stop, as the finder does
			return true
		}
		out = append(out, scalarAt{path, n})
		active[n] = true
		defer delete(active, n)
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if !walk(c, path, active) {
					return false
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if !walk(c, join(path, fmt.Sprintf("[%d]", i)), active) {
					return false
				}
			}
		case yaml.MappingNode:
			for _, kv := range effectivePairs(n, map[*yaml.Node]bool{}) {
				k := join(path, kv[0].Value)
				if !walk(kv[0], k+"#key", active) || !walk(kv[1], k, active) {
					return false
				}
			}
		}
		return true
	}
	ok = walk(doc, "", map[*yaml.Node]bool{})
	return out, ok
}

// effectivePairs is a mapping's key/value pairs with merge keys expanded.
func effectivePairs(m *yaml.Node, seen map[*yaml.Node]bool) [][2]*yaml.Node {
	if seen[m] {
		return nil
	}
	seen[m] = true
	var own, merges [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			v = resolveAlias(v)
			switch v.Kind {
			case yaml.MappingNode:
				merges = append(merges, effectivePairs(v, seen)...)
				continue
			case yaml.SequenceNode:
				for _, mm := range v.Content {
					if mm = resolveAlias(mm); mm.Kind == yaml.MappingNode {
						merges = append(merges, effectivePairs(mm, seen)...)
					}
				}
				continue
			}
		}
		own = append(own, [2]*yaml.Node{k, v})
	}
	have := map[string]bool{}
	for _, kv := range own {
		have[kv[0].Value] = true
	}
	for _, kv := range merges {
		if !have[kv[0].Value] {
			have[kv[0].Value] = true
			own = append(own, kv)
		}
	}
	return own
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// recorder is an oracleT that records the errors reported.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
