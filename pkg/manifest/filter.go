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
			file, inStream := location(rn)
			fd := rw.finder.findAll(rn.YNode(), true)
			where := func(f Field) rewrite.Location {
				loc := rewrite.Location{File: file, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Field: f.Path}
				if inStream {
					loc.Line, loc.Column = f.place().Line, f.place().Column
				}
				return loc
			}
			ms, res := rw.mapAll(fd.fields, fd.emb, where)
			res.notes = rw.notes(fd.notes, where)
			res.warns = append(res.warns, duplicateWarnings(rn.YNode(), fd.fields, fd.emb, file, func(n *yaml.Node) int {
				if inStream {
					return n.Line
				}
				return 0
			})...)
			if len(res.errs) == 0 {
				edits, warns, errs := planEdits(rn.YNode(), ms)
				res.warns, res.errs = append(res.warns, warns...), append(res.errs, errs...)
				if len(errs) == 0 {
					for _, m := range ms {
						if m.field.Default && m.edit != nil && m.edit.value != "" && m.edit.insert == nil {
							m.edit.node.Tag = "!!str" // an empty setting set
						}
					}
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

// location names the file of a resource from kyaml's path annotations
// (internal.config.kubernetes.io/path, config.kubernetes.io/path), and says
// whether its node positions are lines of that file. kyaml's readers parse
// each document of a file on its own, so positions are the document's:
// lines of the file for its first document (index annotation 0, as
// kio.LocalPackageReader sets it, or no index: a stream read as the file,
// as rehost-fn reads its files) read from the file itself (its root at
// column 1), not for later documents or for the items of a ResourceList
// (positions in the list); then errors name the file without a line. Without a path annotation the positions are
// those of the stream kyaml read, "<input>".
func location(rn *yaml.RNode) (file string, lines bool) {
	p, index, err := kioutil.GetFileAnnotations(rn)
	if err != nil || p == "" {
		return "<input>", true
	}
	return p, (index == "" || index == "0") && rn.YNode().Column == 1
}

// applyEdits sets the new values on the edited nodes and adds the fields
// to add; an edited alias becomes a scalar in the style of the node it
// named.
func applyEdits(edits []edit) {
	var values []edit
	for _, e := range edits {
		if e.insert != nil {
			addNodes(e)
			continue
		}
		values = append(values, e)
	}
	for n, v := range expectedValues(values) {
		if n.Kind == yaml.AliasNode {
			like := n.Alias
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: like.Style &^ (yaml.LiteralStyle | yaml.FoldedStyle), Line: n.Line, Column: n.Column}
		}
		n.Value = v
	}
}
