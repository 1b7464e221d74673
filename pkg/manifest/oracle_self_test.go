package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestRefModel pins the reference model against docs/mapping.md's mapping
// table, so the fuzz oracle's expectation does not drift.
func TestRefModel(t *testing.T) {
	m, _ := newRefModel(rewrite.Config{})
	nest, _ := newRefModel(rewrite.Config{Registry: "Harbor.local:8443/mirror", PathStyle: rewrite.PathStyleNest})
	for _, tt := range []struct {
		style          string
		m              refModel
		in, want, qual string
	}{
		{"strip", m, "nginx", "sea.hub:5000/library/nginx", "docker.io/library/nginx:latest"},
		{"strip", m, "nginx:1.25", "sea.hub:5000/library/nginx:1.25", "docker.io/library/nginx:1.25"},
		{"strip", m, "bitnami/redis:7.2", "sea.hub:5000/bitnami/redis:7.2", "docker.io/bitnami/redis:7.2"},
		{"strip", m, "index.docker.io/library/nginx:1.25", "sea.hub:5000/library/nginx:1.25", "docker.io/library/nginx:1.25"},
		{"strip", m, "registry.example.com:8443/x/y/z:2.0@" + digest, "sea.hub:5000/x/y/z:2.0@" + digest, "registry.example.com:8443/x/y/z:2.0@" + digest},
		{"strip", m, "quay.io/a/b@" + digest, "sea.hub:5000/a/b@" + digest, "quay.io/a/b@" + digest},
		{"strip", m, "localhost:5000/foo/bar:1", "sea.hub:5000/foo/bar:1", "localhost:5000/foo/bar:1"},
		{"strip", m, "localhost/foo", "sea.hub:5000/foo", "localhost/foo:latest"},
		{"strip", m, "sea.hub:5000/library/nginx:1.25", "sea.hub:5000/library/nginx:1.25", "sea.hub:5000/library/nginx:1.25"},
		{"nest", nest, "quay.io/team/app:1", "harbor.local:8443/mirror/quay.io/team/app:1", "quay.io/team/app:1"},
		{"nest", nest, "nginx", "harbor.local:8443/mirror/docker.io/library/nginx", "docker.io/library/nginx:latest"},
		{"nest", nest, "registry.example.com:8443/x:1", "harbor.local:8443/mirror/registry.example.com_8443/x:1", "registry.example.com:8443/x:1"},
		{"nest", nest, "harbor.local:8443/x:1", "harbor.local:8443/x:1", "harbor.local:8443/x:1"},
	} {
		t.Run(tt.style+" "+tt.in, func(t *testing.T) {
			if got := tt.m.target(tt.in); got != tt.want {
				t.Errorf("target(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := tt.m.qualified(tt.in); got != tt.qual {
				t.Errorf("qualified(%q) = %q, want %q", tt.in, got, tt.qual)
			}
		})
	}
}

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestOracleCatchesCorruption: the fuzz oracle fails on outputs that
// change a value outside an image field, map an image wrongly or change
// the structure, and passes the right output; so it can fail.
func TestOracleCatchesCorruption(t *testing.T) {
	m, _ := newRefModel(rewrite.Config{})
	in := "apiVersion: v1\nkind: Pod\nmetadata: {name: &name nginx, labels: {app: web}}\nspec:\n  containers:\n  - name: c\n    image: *name\n  - name: d\n    image: &i quay.io/a/b:1\n    env: [{name: X, value: *i}]\n"
	images := []rewrite.Image{
		{Source: "docker.io/library/nginx:latest", Target: "sea.hub:5000/library/nginx:latest", Action: rewrite.Rewritten,
			Occurrences: []rewrite.Location{{File: "in.yaml", Line: 3, Column: 17, Field: "spec.containers[0].image", Value: "nginx"}}},
		{Source: "quay.io/a/b:1", Target: "sea.hub:5000/a/b:1", Action: rewrite.Rewritten,
			Occurrences: []rewrite.Location{{File: "in.yaml", Line: 9, Column: 12, Field: "spec.containers[1].image", Value: "quay.io/a/b:1"}}},
	}
	good := "apiVersion: v1\nkind: Pod\nmetadata: {name: &name nginx, labels: {app: web}}\nspec:\n  containers:\n  - name: c\n    image: sea.hub:5000/library/nginx\n  - name: d\n    image: sea.hub:5000/a/b:1\n    env: [{name: X, value: quay.io/a/b:1}]\n"
	for _, tt := range []struct {
		name, out string
		images    []rewrite.Image
		want      string // "" for no error
	}{
		{"right output", good, images, ""},
		{"anchor rewritten (issue #11)", strings.Replace(strings.Replace(good, "&name nginx", "&name sea.hub:5000/library/nginx", 1), "sea.hub:5000/library/nginx\n", "*name\n", 1), images, "non-image value metadata.name changed"},
		{"anchored image rewritten with its alias in env", strings.Replace(strings.Replace(good, "image: sea.hub:5000/a/b:1", "image: &i sea.hub:5000/a/b:1", 1), "value: quay.io/a/b:1", "value: *i", 1), images, "non-image value spec.containers[1].env[0].value changed"},
		{"label changed", strings.Replace(good, "app: web", "app: webs", 1), images, "non-image value metadata.labels.app changed"},
		{"key changed", strings.Replace(good, "labels: {app:", "labels: {ap:", 1), images, "structure changed"},
		{"wrong mapping", strings.Replace(good, "sea.hub:5000/library/nginx", "sea.hub:5000/nginx", 1), images, "image value spec.containers[0].image is not the model's target"},
		{"wrong listed target", good, []rewrite.Image{images[0], {Source: "quay.io/a/b:1", Target: "sea.hub:5000/b:1", Action: rewrite.Rewritten, Occurrences: images[1].Occurrences}}, "listed target sea.hub:5000/b:1"},
		{"image not rewritten", strings.Replace(good, "image: sea.hub:5000/a/b:1", "image: &i quay.io/a/b:1", 1), images, "image value spec.containers[1].image is not the model's target"},
		{"type changed", strings.Replace(good, "name: d", "name: 1", 1), images, "!!str in"},
		{"document added", good + "---\nkind: X\n", images, "1 documents in, 2 out"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			if !assertValuesPreserved(&r, m, []byte(in), []byte(tt.out), tt.images, "in.yaml") {
				t.Fatalf("%s: the oracle checked nothing", tt.name)
			}
			got := strings.Join(r.errs, "\n")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("%s: oracle reported %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestOracleRegistryParts: the oracle expects the registry part of a split
// reference to become the target's repository name without the repository
// (docker.io beside repository a: sea.hub:5000/library), and fails on any
// other value there.
func TestOracleRegistryParts(t *testing.T) {
	m, _ := newRefModel(rewrite.Config{})
	in := "apiVersion: example.com/v1\nkind: W\nspec:\n  image: {registry: docker.io, repository: a, tag: '1'}\n"
	images := []rewrite.Image{{Source: "docker.io/library/a:1", Target: "sea.hub:5000/library/a:1", Action: rewrite.Rewritten,
		Occurrences: []rewrite.Location{{File: "in.yaml", Line: 4, Column: 22, Field: "spec.image.registry", Value: "docker.io"}}}}
	good := strings.Replace(in, "docker.io", "sea.hub:5000/library", 1)
	for _, tt := range []struct{ name, out, want string }{
		{"right output", good, ""},
		{"whole target in the registry part", strings.Replace(in, "docker.io", "sea.hub:5000/library/docker.io", 1), "image value spec.image.registry is not the model's target"},
		{"repository changed", strings.Replace(good, "repository: a", "repository: b", 1), "non-image value spec.image.repository changed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			if !assertValuesPreserved(&r, m, []byte(in), []byte(tt.out), images, "in.yaml") {
				t.Fatalf("%s: the oracle checked nothing", tt.name)
			}
			got := strings.Join(r.errs, "\n")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("%s: oracle reported %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
