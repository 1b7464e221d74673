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
// and adds their images to the Rewriter's image set. It keeps every node's
// style, comments and annotations; it adds and removes no resources.
//
//	rw, _ := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
//	err := kio.Pipeline{Inputs: in, Filters: []kio.Filter{rw.Filter()}, Outputs: out}.Execute()
func (rw *Rewriter) Filter() kio.Filter {
	return kio.FilterFunc(func(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
		var errs []error
		for _, rn := range nodes {
			file := "<input>"
			if p, _, err := kioutil.GetFileAnnotations(rn); err == nil && p != "" {
				file = p
			}
			fields := rw.finder.Find(rn.YNode())
			res, edits := rw.mapFields(fields, func(f Field) rewrite.Location {
				return rewrite.Location{File: file, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Field: f.Path}
			})
			errs = append(errs, res.errs...)
			for _, o := range res.occ {
				if err := rw.set.Add(o); err != nil {
					errs = append(errs, err)
				}
			}
			for _, w := range res.warns {
				rw.warn(w)
			}
			for _, e := range edits {
				e.node.Value = e.value
			}
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		return nodes, nil
	})
}
