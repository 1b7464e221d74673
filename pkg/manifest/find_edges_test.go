package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestCustomResourceContainerLists: in a custom resource, a map holding a
// container list is searched further (a sibling key may hold another
// container list), and only the containers, initContainers and
// ephemeralContainers keys hold container lists. The image keys of other
// lists are found by name only (guessed), and the container lists' are not
// guessed.
func TestCustomResourceContainerLists(t *testing.T) {
	in := `apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: s}
spec:
  containers:
  - name: a
    image: quay.io/a/a:1
  initContainers:
  - name: b
    image: quay.io/a/b:1
  volumes: [{name: v, image: {reference: quay.io/a/v:1}}]
  nested:
    ephemeralContainers:
    - name: c
      image: quay.io/a/c:1
  tasks:
  - name: t
    image: quay.io/a/t:1
  steps: [{name: s, image: quay.io/a/s:1}]
`
	for _, tc := range []struct {
		name    string
		noGuess bool
		want    string
	}{
		{"noGuessImages", true, "spec.containers[0].image spec.initContainers[0].image spec.nested.ephemeralContainers[0].image spec.volumes[0].image.reference"},
		{"guessed", false, "spec.containers[0].image spec.initContainers[0].image spec.nested.ephemeralContainers[0].image spec.steps[0].image(guessed) spec.tasks[0].image(guessed) spec.volumes[0].image.reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{NoGuessImages: tc.noGuess})
			if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, img := range rw.Images() {
				for _, l := range img.Occurrences {
					if l.Guessed {
						l.Field += "(guessed)"
					}
					got = append(got, l.Field)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("noGuessImages %v: fields %q, want %q", tc.noGuess, strings.Join(got, " "), tc.want)
			}
		})
	}
}

// TestEnvValueScanned: a container's env values are scanned for embedded
// references whatever the variable's name.
func TestEnvValueScanned(t *testing.T) {
	in := "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    env: [{name: PROXY, value: quay.io/a/b:1}]\n"
	rw := mustNew(t, rewrite.Config{}, ListEmbedded())
	if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	if emb := rw.Embedded(); len(emb) != 1 || emb[0].Source != "quay.io/a/b:1" || emb[0].Occurrences[0].Field != "spec.containers[0].env[0].value" {
		t.Errorf("embedded %+v, want quay.io/a/b:1 in spec.containers[0].env[0].value", emb)
	}
}

// TestCompositeDefault: a composed field left empty or null is the kind's
// default, neither an image nor an error.
func TestCompositeDefault(t *testing.T) {
	for _, tt := range []struct{ name, v string }{{"double-quoted empty", `""`}, {"single-quoted empty", "''"}, {"null", "null"}, {"tilde", "~"}} {
		v := tt.v
		t.Run(tt.name, func(t *testing.T) {
			in := "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p}\nspec:\n  baseImage: " + v + "\n  version: v2.54.1\n"
			rw := mustNew(t, rewrite.Config{})
			out, err := rw.RewriteBytes([]byte(in), "in.yaml")
			if err != nil || string(out) != in || len(rw.Images()) != 0 {
				t.Errorf("baseImage: %s: err %v, images %+v, output changed %v", v, err, rw.Images(), string(out) != in)
			}
		})
	}
}

// TestConfiguredListNotAList: a configured list field ("[]") holding
// something else than a list is no image and no error.
func TestConfiguredListNotAList(t *testing.T) {
	for _, tt := range []struct{ name, v string }{{"map", "{image: quay.io/a/b:1}"}, {"scalar", "quay.io/a/b:1"}, {"null", "null"}} {
		v := tt.v
		t.Run("relatedImages/"+tt.name, func(t *testing.T) {
			in := "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: c}\nspec:\n  relatedImages: " + v + "\n"
			rw := mustNew(t, rewrite.Config{})
			if out, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil || string(out) != in || len(rw.Images()) != 0 {
				t.Errorf("relatedImages: %s: err %v, images %+v", v, err, rw.Images())
			}
		})
	}
	in := "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: c}\nspec:\n  relatedImages: [{name: a, image: quay.io/a/b:1}]\n"
	rw := mustNew(t, rewrite.Config{})
	if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil || len(rw.Images()) != 1 {
		t.Errorf("relatedImages list: err %v, images %+v", err, rw.Images())
	}

	// A configured list of images, "spec.images[]".
	cfg := rewrite.Config{ImageFields: []rewrite.ImageField{{Group: "example.com", Kind: "Bundle", Path: "spec.images[]"}}}
	for _, tt := range []struct {
		name, v string
		want    int
	}{{"list", "[quay.io/a/b:1, quay.io/a/c:1]", 2}, {"map", "{a: quay.io/a/b:1}", 0}, {"scalar", "quay.io/a/b:1", 0}} {
		v, want := tt.v, tt.want
		t.Run("images/"+tt.name, func(t *testing.T) {
			in := "apiVersion: example.com/v1\nkind: Bundle\nmetadata: {name: b}\nspec:\n  images: " + v + "\n"
			rw := mustNew(t, cfg)
			if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil || countOccurrences(rw.Images()) != want {
				t.Errorf("images: %s: err %v, images %+v, want %d", v, err, rw.Images(), want)
			}
		})
	}
}
