package manifest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// rewriteNodes is what a kyaml pipeline does with the Rewriter (package
// krmfn's kio filter): parse each document of in as a yaml.Node, call
// RewriteNode on it, and write the nodes back, two-space indented with
// compact sequences as kyaml writes them. Errors of every document are
// joined.
func rewriteNodes(rw *Rewriter, in string, out io.Writer) error {
	dec := yaml.NewDecoder(strings.NewReader(in))
	var docs []*yaml.Node
	var errs []error
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(doc.Content) == 0 {
			continue
		}
		if err := rw.RewriteNode(&doc, "<input>", true); err != nil {
			errs = append(errs, err)
		}
		docs = append(docs, &doc)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	enc := yaml.NewEncoder(out)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return enc.Close()
}

// TestRewriteNode: a node parsed by the caller is rewritten in place, its
// images listed at the lines of the stream it came from, a DocumentNode or
// its mapping alike; errors name the file given.
func TestRewriteNode(t *testing.T) {
	in := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25 # pinned\n"
	for _, tt := range []struct {
		name   string
		unwrap bool
	}{{"document", false}, {"mapping", true}} {
		unwrap := tt.unwrap
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
				t.Fatal(err)
			}
			node := &doc
			if unwrap {
				node = doc.Content[0]
			}
			rw := mustNew(t, rewrite.Config{})
			if err := rw.RewriteNode(node, "app.yaml", true); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			enc := yaml.NewEncoder(&out)
			enc.SetIndent(2)
			enc.CompactSeqIndent()
			if err := enc.Encode(&doc); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "image: sea.hub:5000/library/nginx:1.25 # pinned\n") {
				t.Errorf("unwrap %v: not rewritten in place:\n%s", unwrap, out.String())
			}
			occ := rw.Images()[0].Occurrences[0]
			if occ.File != "app.yaml" || occ.Line != 7 || occ.Column != 12 {
				t.Errorf("unwrap %v: occurrence at %s:%d:%d, want app.yaml:7:12", unwrap, occ.File, occ.Line, occ.Column)
			}
		})
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Replace(in, "nginx:1.25", "Bad", 1)), &doc); err != nil {
		t.Fatal(err)
	}
	err := mustNew(t, rewrite.Config{}).RewriteNode(&doc, "app.yaml", false)
	if err == nil || !strings.HasPrefix(err.Error(), `app.yaml: Pod p: spec.containers[0].image: invalid image reference "Bad"`) {
		t.Errorf("err = %v, want it to name app.yaml without a line", err)
	}
}
