package corpus_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/rehost/rehost/internal/benchdata/corpus"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

func generate(t *testing.T, size, seed int64) ([]byte, corpus.Stats) {
	t.Helper()
	var b bytes.Buffer
	st, err := corpus.Generate(&b, size, seed)
	if err != nil {
		t.Fatal(err)
	}
	if int64(b.Len()) != st.Bytes {
		t.Fatalf("Stats.Bytes = %d, wrote %d", st.Bytes, b.Len())
	}
	return b.Bytes(), st
}

// TestComposition checks the shares of bytes against the targets measured
// on real charts.
func TestComposition(t *testing.T) {
	for _, size := range []int64{4e6, 15e6} {
		_, st := generate(t, size, 1)
		if st.Bytes < size || st.Bytes > size+size/50 {
			t.Errorf("size %d: wrote %d bytes", size, st.Bytes)
		}
		var sum int64
		for c, want := range corpus.Composition {
			got := float64(st.Categories[c]) / float64(st.Bytes)
			sum += st.Categories[c]
			// 1.5 points for the big shares, a third of the target for small ones.
			if tol := math.Min(0.015, want/3); math.Abs(got-want) > tol {
				t.Errorf("size %d: %s is %.2f%% of the bytes, want %.2f%% ± %.2f", size, c, 100*got, 100*want, 100*tol)
			}
		}
		if sum != st.Bytes {
			t.Errorf("size %d: categories sum to %d bytes of %d", size, sum, st.Bytes)
		}
		if got := float64(st.WithoutImage) / float64(st.Bytes); math.Abs(got-corpus.WithoutImage) > 0.02 {
			t.Errorf("size %d: %.1f%% of the bytes are in documents without \"image\", want %.0f%% ± 2", size, 100*got, 100*corpus.WithoutImage)
		}
		for _, k := range []string{"Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "CustomResourceDefinition", "ConfigMap", "Service", "ClusterRole", "Rollout"} {
			if st.Kinds[k] == 0 {
				t.Errorf("size %d: no %s", size, k)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := generate(t, 2e6, 7)
	b, _ := generate(t, 2e6, 7)
	c, _ := generate(t, 2e6, 8)
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Error("the same seed gave different streams")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same stream")
	}
}

// TestDocumentsParse decodes every document with yaml.v3 and checks what
// kustomize needs: a kind, a name, and unique resource ids.
func TestDocumentsParse(t *testing.T) {
	data, st := generate(t, 4e6, 3)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	ids := map[string]bool{}
	n := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("document %d: %v", n+1, err)
		}
		n++
		var m struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
		}
		if err := doc.Decode(&m); err != nil {
			t.Fatalf("document %d: %v", n, err)
		}
		if m.Kind == "" || m.Metadata.Name == "" {
			t.Errorf("document %d: kind %q name %q", n, m.Kind, m.Metadata.Name)
		}
		id := m.APIVersion + "/" + m.Kind + "/" + m.Metadata.Namespace + "/" + m.Metadata.Name
		if ids[id] {
			t.Errorf("document %d: duplicate resource %s", n, id)
		}
		ids[id] = true
	}
	if n != st.Documents {
		t.Errorf("decoded %d documents, Stats.Documents = %d", n, st.Documents)
	}
	// The YAML 1.1 enum values and regex patterns of real CRDs are there.
	for _, s := range []string{" - =\n", `\.`, "\"\\\"Ready\\\"", "image: \"", "image: '", "@sha256:", ":8443/"} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("the stream has no %q", s)
		}
	}
}

// TestImages checks that Stats.Images, which the kustomization is built
// from, holds exactly the images rehost finds.
func TestImages(t *testing.T) {
	data, st := generate(t, 4e6, 5)
	rw, err := manifest.New(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Rewrite(nil, bytes.NewReader(data), "stream.yaml"); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for ref := range st.Images {
		r, err := rewrite.ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		want[r.Qualified()] = true
	}
	got := rw.Sources()
	for _, s := range got {
		if !want[s] {
			t.Errorf("rehost found %s, the generator did not record it", s)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rehost found %d images, the generator recorded %d", len(got), len(want))
	}
	shapes := map[string]bool{}
	for ref := range st.Images {
		r, _ := rewrite.ParseRef(ref)
		shapes[map[[2]bool]string{{false, false}: "none", {true, false}: "tag", {false, true}: "digest", {true, true}: "tag@digest"}[[2]bool{r.Tag != "", r.Digest != ""}]] = true
	}
	if len(shapes) != 4 {
		t.Errorf("image shapes %v, want no tag, tag, digest and tag@digest", shapes)
	}
}

func TestKustomization(t *testing.T) {
	m, err := rewrite.NewMapper(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{
		"nginx:1.25":              "nginx",
		"nginx@sha256:" + hex64:   "nginx",
		"registry.k8s.io/pause":   "registry.k8s.io/pause",
		"sea.hub:5000/team/app:1": "sea.hub:5000/team/app",
		"registry.example.com:8443/x/y/z:2.0@sha256:" + hex64: "registry.example.com:8443/x/y/z",
	}
	got, err := corpus.Kustomization([]string{"stream.yaml"}, images, m)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- stream.yaml
images:
- name: nginx
  newName: sea.hub:5000/library/nginx
- name: registry.example.com:8443/x/y/z
  newName: sea.hub:5000/x/y/z
- name: registry.k8s.io/pause
  newName: sea.hub:5000/pause
`
	if s := string(got); !strings.HasSuffix(s, want) {
		t.Errorf("got\n%s\nwant it to end with\n%s", s, want)
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
