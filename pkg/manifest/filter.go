package manifest

import (
	"errors"

	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Filter returns a kio.Filter that rewrites the image fields of the
// resources in place (same finder, same mapping, same errors as Rewrite)
// and adds their images to the Rewriter's image set. Embedded references
// are collected, and rewritten inside their strings with
// Config.RewriteEmbedded, as by Rewrite. It keeps every node's style,
// comments and annotations; it adds and removes no resources.
//
//	rw, _ := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
//	err := kio.Pipeline{Inputs: in, Filters: []kio.Filter{rw.Filter()}, Outputs: out}.Execute()
func (rw *Rewriter) Filter() kio.Filter {
	return kio.FilterFunc(func(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
		var errs []error
		for _, rn := range nodes {
			// Node positions are in the stream kyaml parsed: the file's own
			// only when no annotation names another file.
			file, inStream := "<input>", true
			if p, _, err := kioutil.GetFileAnnotations(rn); err == nil && p != "" {
				file, inStream = p, false
			}
			fields, emb := rw.finder.find(rn.YNode(), true)
			ms, res := rw.mapAll(fields, emb, func(f Field) rewrite.Location {
				loc := rewrite.Location{File: file, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Field: f.Path}
				if inStream {
					loc.Line, loc.Column = f.place().Line, f.place().Column
				}
				return loc
			})
			res.warns = append(res.warns, duplicateWarnings(rn.YNode(), fields, emb, file, func(n *yaml.Node) int {
				if inStream {
					return n.Line
				}
				return 0
			})...)
			if len(res.errs) == 0 {
				edits, warns, errs := planEdits(rn.YNode(), ms)
				res.warns, res.errs = append(res.warns, warns...), append(res.errs, errs...)
				if len(errs) == 0 {
					applyEdits(edits)
				}
			}
			rw.finish(ms, &res)
			errs = append(errs, rw.record(res)...)
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		return nodes, nil
	})
}

// applyEdits sets the new values on the edited nodes; an edited alias
// becomes a scalar in the style of the node it named.
func applyEdits(edits []edit) {
	for n, v := range expectedValues(edits) {
		if n.Kind == yaml.AliasNode {
			like := n.Alias
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: like.Style &^ (yaml.LiteralStyle | yaml.FoldedStyle), Line: n.Line, Column: n.Column}
		}
		n.Value = v
	}
}
