package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestFilterAnnotationLocations: the kio filter names the file of kyaml's
// path annotation, with the line when the document is the stream's first
// at column 1 and no index annotation says otherwise (the stream is then
// taken for the file), and "<input>" with the line when no annotation
// names a file.
func TestFilterAnnotationLocations(t *testing.T) {
	bad := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n%sspec:\n  containers:\n  - name: c\n    image: Bad\n"
	for _, tt := range []struct {
		annotations string
		want        string
	}{
		{"", "<input>:9: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {internal.config.kubernetes.io/path: apps/web.yaml}\n", "apps/web.yaml:10: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {config.kubernetes.io/path: apps/web.yaml}\n", "apps/web.yaml:10: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {config.kubernetes.io/path: apps/web.yaml, config.kubernetes.io/index: '1'}\n", "apps/web.yaml: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
		{"  annotations: {config.kubernetes.io/path: \"\"}\n", "<input>:10: Pod ns/p: spec.containers[0].image: invalid image reference \"Bad\""},
	} {
		in := strings.Replace(bad, "%s", tt.annotations, 1)
		rw := mustNew(t, rewrite.Config{})
		err := kio.Pipeline{
			Inputs:  []kio.Reader{&kio.ByteReader{Reader: strings.NewReader(in), OmitReaderAnnotations: true}},
			Filters: []kio.Filter{rw.Filter()},
			Outputs: []kio.Writer{&kio.ByteWriter{Writer: &strings.Builder{}}},
		}.Execute()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("annotations %q: err = %v, want prefix %q", tt.annotations, err, tt.want)
		}
	}
}

// TestManyImageFields: more configured fields than built-in ones, each
// found, and the built-in fields still found beside them.
func TestManyImageFields(t *testing.T) {
	var cfg rewrite.Config
	var in strings.Builder
	for i := 0; i < 100; i++ {
		kind := "Widget" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		cfg.ImageFields = append(cfg.ImageFields, rewrite.ImageField{Group: "example.com", Kind: kind, Path: "spec.engine"})
		in.WriteString("apiVersion: example.com/v1\nkind: " + kind + "\nmetadata: {name: w}\nspec: {engine: quay.io/a/b:1}\n---\n")
	}
	in.WriteString("apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p}\nspec: {image: quay.io/prometheus/prometheus:v2}\n")
	rw := mustNew(t, cfg)
	if _, err := rw.RewriteBytes([]byte(in.String()), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	if n := countOccurrences(rw.Images()); n != 101 {
		t.Errorf("%d image occurrences, want 101", n)
	}
}

// TestFilterUntaggedQuotedImage: a node built by a program (no tag, quoted
// style, as kyaml's setters make them) is a string image.
func TestFilterUntaggedQuotedImage(t *testing.T) {
	rn, err := yaml.Parse("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n")
	if err != nil {
		t.Fatal(err)
	}
	img, err := rn.Pipe(yaml.Lookup("spec", "containers", "[name=c]", "image"))
	if err != nil || img == nil {
		t.Fatal(err)
	}
	*img.YNode() = yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: "nginx:1.25"}
	rw := mustNew(t, rewrite.Config{})
	if _, err := rw.Filter().Filter([]*yaml.RNode{rn}); err != nil {
		t.Fatal(err)
	}
	if got := img.YNode().Value; got != "sea.hub:5000/library/nginx:1.25" {
		t.Errorf("image = %q, want it rewritten", got)
	}
}
