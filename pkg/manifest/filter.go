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
					loc.Line, loc.Column = f.Node.Line, f.Node.Column
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
				applyEdits(ms)
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

// applyEdits sets the new values on the edited nodes.
func applyEdits(ms []mapped) {
	var edits []edit
	for _, m := range ms {
		if m.edit != nil && m.edit.value != "" {
			edits = append(edits, *m.edit)
		}
	}
	for n, v := range expectedValues(edits) {
		n.Value = v
	}
}
