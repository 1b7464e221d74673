package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// TestAnchors: no value outside an image field changes, whatever anchors
// and aliases connect it to one.
func TestAnchors(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\n"
	tests := []struct {
		name, in, want string
		wantErr        string // the error, when the rewrite must fail
	}{{
		name: "alias of the name",
		in:   pod + "metadata: {name: &name nginx}\nspec:\n  containers:\n  - name: web\n    image: *name\n",
		want: pod + "metadata: {name: &name nginx}\nspec:\n  containers:\n  - name: web\n    image: sea.hub:5000/library/nginx\n",
	}, {
		name: "alias of a label, quoted",
		in:   pod + "metadata:\n  name: web\n  labels: {app: &app 'nginx:1.25'}\nspec:\n  containers: [{name: web, image: *app}]\n",
		want: pod + "metadata:\n  name: web\n  labels: {app: &app 'nginx:1.25'}\nspec:\n  containers: [{name: web, image: 'sea.hub:5000/library/nginx:1.25'}]\n",
	}, {
		name: "alias of an env value",
		in:   pod + "metadata: {name: web}\nspec:\n  containers:\n  - name: web\n    env:\n    - {name: IMG, value: &img \"redis:7\"}\n    image: *img\n",
		want: pod + "metadata: {name: web}\nspec:\n  containers:\n  - name: web\n    env:\n    - {name: IMG, value: &img \"redis:7\"}\n    image: \"sea.hub:5000/library/redis:7\"\n",
	}, {
		name: "anchored image aliased in env",
		in:   pod + "metadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: &img nginx\n    env: [{name: X, value: *img}]\n",
		want: pod + "metadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: &img sea.hub:5000/library/nginx\n    env: [{name: X, value: nginx}]\n",
	}, {
		name: "anchored image aliased by another image field, in order",
		in:   pod + "metadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: &img nginx}\n  initContainers: [{name: init, image: *img}]\n",
		want: pod + "metadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: &img sea.hub:5000/library/nginx}\n  initContainers: [{name: init, image: *img}]\n",
	}, {
		name: "anchored image aliased by an image field and a non-image field",
		in:   pod + "metadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: &img 'nginx'}\n  - {name: side, image: *img, args: [*img]}\n",
		want: pod + "metadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: &img 'sea.hub:5000/library/nginx'}\n  - {name: side, image: *img, args: ['nginx']}\n",
	}, {
		name: "container reused by alias: every path is an image field",
		in:   pod + "metadata: {name: web}\nspec:\n  containers:\n  - &c {name: web, image: nginx}\n  initContainers: [*c]\n",
		want: pod + "metadata: {name: web}\nspec:\n  containers:\n  - &c {name: web, image: sea.hub:5000/library/nginx}\n  initContainers: [*c]\n",
	}, {
		name: "label aliased by two image fields",
		in:   pod + "metadata: {name: web, labels: {app: &app nginx}}\nspec:\n  containers: [{name: a, image: *app}, {name: b, image: *app}]\n",
		want: pod + "metadata: {name: web, labels: {app: &app nginx}}\nspec:\n  containers: [{name: a, image: sea.hub:5000/library/nginx}, {name: b, image: sea.hub:5000/library/nginx}]\n",
	}, {
		name: "alias of a block scalar is written double-quoted",
		in:   pod + "metadata:\n  name: web\n  annotations:\n    img: &img |-\n      nginx\nspec:\n  containers: [{name: a, image: *img}]\n",
		want: pod + "metadata:\n  name: web\n  annotations:\n    img: &img |-\n      nginx\nspec:\n  containers: [{name: a, image: \"sea.hub:5000/library/nginx\"}]\n",
	}, {
		name:    "container merged from a template that is not a container",
		in:      pod + "metadata: {name: web}\ntemplates:\n  base: &base {image: nginx}\nspec:\n  containers:\n  - <<: *base\n    name: web\n",
		wantErr: "shared through a YAML anchor",
	}, {
		name: "container merged from another container",
		in:   pod + "metadata: {name: web}\nspec:\n  containers:\n  - &base {name: web, image: nginx}\n  - <<: *base\n    name: side\n",
		want: pod + "metadata: {name: web}\nspec:\n  containers:\n  - &base {name: web, image: sea.hub:5000/library/nginx}\n  - <<: *base\n    name: side\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(rewrite.Config{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				var e *Error
				if !errors.As(err, &e) || e.Location.Line == 0 || e.Location.Field == "" {
					t.Errorf("error %v does not name its line and field", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			assertImagePathsOnly(t, tt.in, string(got))

			// The kio filter gives the same meaning.
			rw2, _ := New(rewrite.Config{})
			var out bytes.Buffer
			err = rewriteNodes(rw2, tt.in, &out)
			if err != nil {
				t.Fatal(err)
			}
			assertSameMeaning(t, tt.want, out.String())
		})
	}
}

// TestAnchorLocation: an image field written as an alias is located at the
// alias, not at the anchor.
func TestAnchorLocation(t *testing.T) {
	in := "apiVersion: v1\nkind: Pod\nmetadata: {name: &name nginx}\nspec:\n  containers:\n  - name: web\n    image: *name\n"
	rw, _ := New(rewrite.Config{})
	if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	occ := rw.Images()[0].Occurrences[0]
	if occ.Line != 7 || occ.Column != 12 {
		t.Errorf("occurrence at %d:%d, want 7:12 (the alias)", occ.Line, occ.Column)
	}
}

// resolvedScalars maps every path of a document, aliases and merge keys
// resolved, to its scalar value.
func resolvedScalars(t *testing.T, doc string) map[string]string {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("parse: %v\n%s", err, doc)
	}
	out := map[string]string{}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(p+"."+k, c)
			}
		case []any:
			for i, c := range x {
				walk(p+index(i), c)
			}
		default:
			out[p] = yamlString(x)
		}
	}
	walk("", v)
	return out
}

func yamlString(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// assertImagePathsOnly checks that every resolved value of got equals
// that of in, except at image paths (ending in ".image").
func assertImagePathsOnly(t *testing.T, in, got string) {
	t.Helper()
	a, b := resolvedScalars(t, in), resolvedScalars(t, got)
	if len(a) != len(b) {
		t.Errorf("%d values before, %d after", len(a), len(b))
	}
	for p, v := range a {
		if strings.HasSuffix(p, ".image") {
			continue
		}
		if b[p] != v {
			t.Errorf("%s changed: %q -> %q", p, v, b[p])
		}
	}
}

// assertSameMeaning checks that two documents resolve to the same values.
func assertSameMeaning(t *testing.T, want, got string) {
	t.Helper()
	a, b := resolvedScalars(t, want), resolvedScalars(t, got)
	for p, v := range a {
		if b[p] != v {
			t.Errorf("%s: got %q, want %q\n%s", p, b[p], v, got)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d values, want %d", len(b), len(a))
	}
}

// TestAnchorsElsewhere: aliases elsewhere in a document change nothing for
// the fields they do not touch: an operator's registry setting and an
// image field are rewritten as without them.
func TestAnchorsElsewhere(t *testing.T) {
	in := "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata:\n  name: &n default\n  labels: {name: *n}\nspec:\n  registry: quay.io/\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: &p web, labels: {app: *p}}\nspec:\n  containers: [{name: web, image: nginx:1.25}]\n"
	want := strings.Replace(strings.Replace(in, "registry: quay.io/", "registry: sea.hub:5000/", 1), "image: nginx:1.25", "image: sea.hub:5000/library/nginx:1.25", 1)
	rw, err := New(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
