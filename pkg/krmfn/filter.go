package krmfn

import (
	"errors"

	"github.com/rehost/rehost/pkg/manifest"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Filter returns a kio.Filter that rewrites the image fields of the
// resources in place with rw (same finder, same mapping, same errors as
// rw.Rewrite) and adds their images to rw's image set: rw.RewriteNode for
// each RNode, with the file and line that kyaml's annotations give. It
// keeps every node's style, comments and annotations; it adds and removes
// no resources.
//
//	rw, _ := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
//	err := kio.Pipeline{Inputs: in, Filters: []kio.Filter{krmfn.Filter(rw)}, Outputs: out}.Execute()
func Filter(rw *manifest.Rewriter) kio.Filter {
	return kio.FilterFunc(func(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
		// A ConfigMap may hold an image that a later resource's container
		// receives through $(VAR): learn those before the first rewrite.
		for _, rn := range nodes {
			rw.ScanEnvImagesNode(rn.YNode())
		}
		var errs []error
		for _, rn := range nodes {
			file, lines := location(rn)
			if err := rw.RewriteNode(rn.YNode(), file, lines); err != nil {
				errs = append(errs, err)
			}
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
// (positions in the list); then errors name the file without a line.
// Without a path annotation the positions are those of the stream kyaml
// read, "<input>".
func location(rn *yaml.RNode) (file string, lines bool) {
	p, index, err := kioutil.GetFileAnnotations(rn)
	if err != nil || p == "" {
		return "<input>", true
	}
	return p, (index == "" || index == "0") && rn.YNode().Column == 1
}
