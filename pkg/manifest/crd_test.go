package manifest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// crdJSON is a CustomResourceDefinition written as JSON: its quoted "kind"
// key makes the fast path give up on it, so it is parsed. Its schema
// defaults hold a container list (what the finder searches in any other
// kind) and its annotations and descriptions hold embedded references.
const crdJSON = `{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {
    "name": "widgets.example.com",
    "annotations": {"example.com/default-image": "--image=quay.io/example/operand:1.0", "image": "quay.io/example/agent:2.0"}
  },
  "spec": {
    "group": "example.com",
    "names": {"kind": "Widget", "plural": "widgets"},
    "scope": "Namespaced",
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "image": {"type": "string", "default": "nginx:1.25", "description": "defaults to image: docker.io/library/nginx:1.25"},
        "containers": {"type": "array", "default": [{"name": "a", "image": "busybox:1.36"}], "items": {"type": "object"}},
        "spec": {"type": "object", "default": {"containers": [{"name": "b", "image": "quay.io/example/b:1"}], "image": "quay.io/example/c:1"}}
      }}}
    }]
  }
}
`

// crdYAML is the same CRD in block YAML.
const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    example.com/default-image: --image=quay.io/example/operand:1.0
    image: quay.io/example/agent:2.0
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          image: {type: string, default: "nginx:1.25", description: "defaults to image: docker.io/library/nginx:1.25"}
          containers: {type: array, default: [{name: a, image: "busybox:1.36"}], items: {type: object}}
          spec: {type: object, default: {containers: [{name: b, image: "quay.io/example/b:1"}], image: "quay.io/example/c:1"}}
`

// widget is the custom resource of the CRD above, with a container list
// the finder does search: the stream has something to rewrite.
const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25\n"

// TestCRDNeverSearched: whatever route a CustomResourceDefinition takes
// (skipped by the fast path, parsed because its kind key is quoted, parsed
// with the fast path off, an item of a List, through the kio filter), the
// finder never looks inside it: its bytes come out as they went in, and
// none of its schema defaults or annotations is listed, as an image or as
// an embedded reference.
func TestCRDNeverSearched(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(crdYAML, "\n"), "\n", "\n  ") + "\n"
	for _, tt := range []struct{ name, crd string }{
		{"json", crdJSON},
		{"yaml", crdYAML},
		{"json in a List", "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [" + crdJSON + "]}\n"},
		{"yaml in a List", list},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.crd + "---\n" + widget
			want := tt.crd + "---\n" + strings.Replace(widget, "image: nginx:1.25", "image: sea.hub:5000/library/nginx:1.25", 1)
			for _, fullParse := range []bool{false, true} {
				for _, cfg := range []rewrite.Config{{}, {RewriteEmbedded: true}} {
					rw := mustNew(t, cfg)
					rw.fullParse = fullParse
					out, err := rw.RewriteBytes([]byte(in), "in.yaml")
					if err != nil {
						t.Fatalf("%s (fullParse=%v, %+v): %v", tt.name, fullParse, cfg, err)
					}
					if string(out) != want {
						t.Errorf("%s (fullParse=%v, %+v): the CRD changed:\n%s", tt.name, fullParse, cfg, out)
					}
					checkOnlyWidget(t, tt.name, rw)

					// Images mode lists the same, without writing.
					rw = mustNew(t, cfg)
					rw.fullParse = fullParse
					if err := rw.Rewrite(nil, strings.NewReader(in), "in.yaml"); err != nil {
						t.Fatal(err)
					}
					checkOnlyWidget(t, tt.name+" (images mode)", rw)
				}
			}
		})
	}

	// The kio filter, on the JSON CRD and the YAML one.
	for _, tt := range []struct{ name, crd string }{{"kio filter/json", crdJSON}, {"kio filter/yaml", crdYAML}} {
		t.Run(tt.name, func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{RewriteEmbedded: true})
			var out bytes.Buffer
			err := rewriteNodes(rw, tt.crd+"---\n"+widget, &out)
			if err != nil {
				t.Fatal(err)
			}
			checkOnlyWidget(t, "kio filter", rw)
			for _, v := range []string{"quay.io/example/operand:1.0", "quay.io/example/agent:2.0", "busybox:1.36", "quay.io/example/b:1", "quay.io/example/c:1", "docker.io/library/nginx:1.25", `"nginx:1.25"`} {
				if !strings.Contains(out.String(), v) {
					t.Errorf("kio filter: %s was rewritten in the CRD:\n%s", v, out.String())
				}
			}
		})
	}
}

// checkOnlyWidget asserts that the only image found is the Widget's.
func checkOnlyWidget(t *testing.T, name string, rw *Rewriter) {
	t.Helper()
	imgs := rw.Images()
	if len(imgs) != 1 || imgs[0].Source != "docker.io/library/nginx:1.25" || len(imgs[0].Occurrences) != 1 || imgs[0].Occurrences[0].Kind != "Widget" {
		t.Errorf("%s: images %+v, want only the Widget's nginx:1.25", name, imgs)
	}
	if emb := rw.Embedded(); len(emb) != 0 {
		t.Errorf("%s: embedded references found in the CRD: %+v", name, emb)
	}
}

// TestQuotedKindGuard: a Pod whose kind key is quoted and whose annotation
// holds, in a multi-line string, a line "kind: CustomResourceDefinition"
// at column 0 is a Pod: the fast path must not take that line for the
// document's kind and skip it.
func TestQuotedKindGuard(t *testing.T) {
	for _, tt := range []struct{ name, q string }{{"double-quoted", `"kind"`}, {"single-quoted", `'kind'`}} {
		q := tt.q
		t.Run(tt.name, func(t *testing.T) {
			in := "apiVersion: v1\n" + q + ": Pod\nmetadata:\n  name: p\nnote: \"first line\nkind: CustomResourceDefinition\nlast line\"\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25\n"
			want := strings.Replace(in, "image: nginx:1.25", "image: sea.hub:5000/library/nginx:1.25", 1)
			for _, fullParse := range []bool{false, true} {
				rw := mustNew(t, rewrite.Config{})
				rw.fullParse = fullParse
				out, err := rw.RewriteBytes([]byte(in), "in.yaml")
				if err != nil {
					t.Fatalf("%s (fullParse=%v): %v", q, fullParse, err)
				}
				if string(out) != want {
					t.Errorf("%s (fullParse=%v): the Pod was not rewritten:\n%s", q, fullParse, out)
				}
				if imgs := rw.Images(); len(imgs) != 1 || imgs[0].Occurrences[0].Kind != "Pod" {
					t.Errorf("%s (fullParse=%v): images %+v, want the Pod's", q, fullParse, imgs)
				}
			}
		})
	}
}
