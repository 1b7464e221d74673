package krmfn

import (
	"errors"
	"os"
	"path/filepath"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestFilterLocations: behind kio.LocalPackageReader, errors of the kio
// filter name the file, and the line in it for the file's first document
// (kyaml parses each document on its own: later documents' positions are
// not the file's); for the items of a ResourceList, the file its path
// annotation names, without the line of the list.
func TestFilterLocations(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: NGINX\n"
	if err := os.WriteFile(filepath.Join(dir, "apps", "app.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apps", "first.yaml"), []byte(doc[strings.Index(doc, "---\n")+4:]), 0o644); err != nil {
		t.Fatal(err)
	}
	list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    annotations:\n      internal.config.kubernetes.io/path: apps/app.yaml\n      config.kubernetes.io/path: apps/app.yaml\n  spec:\n    containers:\n    - name: c\n      image: NGINX\n"
	tests := []struct {
		name   string
		reader kio.Reader
		want   rewrite.Location
	}{
		{"LocalPackageReader, first document", kio.LocalPackageReader{PackagePath: dir, MatchFilesGlob: []string{"first.yaml"}}, rewrite.Location{File: filepath.Join("apps", "first.yaml"), Line: 7, Column: 12}},
		{"LocalPackageReader, second document", kio.LocalPackageReader{PackagePath: dir, MatchFilesGlob: []string{"app.yaml"}}, rewrite.Location{File: filepath.Join("apps", "app.yaml")}},
		{"ResourceList", &kio.ByteReader{Reader: strings.NewReader(list)}, rewrite.Location{File: "apps/app.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := manifest.New(rewrite.Config{})
			if err != nil {
				t.Fatal(err)
			}
			err = kio.Pipeline{Inputs: []kio.Reader{tt.reader}, Filters: []kio.Filter{Filter(rw)}}.Execute()
			var e *manifest.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *manifest.Error", err)
			}
			got := e.Location
			if got.File != tt.want.File || got.Line != tt.want.Line || got.Column != tt.want.Column || got.Field != "spec.containers[0].image" || got.Name != "p" {
				t.Errorf("error at %+v, want %s:%d:%d, spec.containers[0].image of Pod p", got, tt.want.File, tt.want.Line, tt.want.Column)
			}
		})
	}
}

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
		rw, _ := manifest.New(rewrite.Config{})
		err := kio.Pipeline{
			Inputs:  []kio.Reader{&kio.ByteReader{Reader: strings.NewReader(in), OmitReaderAnnotations: true}},
			Filters: []kio.Filter{Filter(rw)},
			Outputs: []kio.Writer{&kio.ByteWriter{Writer: &strings.Builder{}}},
		}.Execute()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("annotations %q: err = %v, want prefix %q", tt.annotations, err, tt.want)
		}
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
	rw, _ := manifest.New(rewrite.Config{})
	if _, err := Filter(rw).Filter([]*yaml.RNode{rn}); err != nil {
		t.Fatal(err)
	}
	if got := img.YNode().Value; got != "sea.hub:5000/library/nginx:1.25" {
		t.Errorf("image = %q, want it rewritten", got)
	}
}

// TestFilterEnvImages: the config-reloader image that Bitnami
// kube-prometheus passes to the operator through its ConfigMap
// ($(PROMETHEUS_CONFIG_RELOADER) from configMapKeyRef), the ConfigMap first
// as Helm renders it, is rewritten by the kio filter as by rehost rewrite.
func TestFilterEnvImages(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kp-operator, namespace: monitoring}\ndata:\n  prometheus-config-reloader: bitnami/prometheus-operator:0.85.0\n---\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: kp-operator, namespace: monitoring}\nspec:\n  template:\n    spec:\n      containers:\n      - name: operator\n        image: quay.io/example/operator:1\n" +
		"        args: [\"--prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER)\"]\n        env:\n        - name: PROMETHEUS_CONFIG_RELOADER\n          valueFrom: {configMapKeyRef: {name: kp-operator, key: prometheus-config-reloader}}\n"
	rw, err := manifest.New(rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := (kio.Pipeline{Inputs: []kio.Reader{&kio.ByteReader{Reader: strings.NewReader(in)}}, Filters: []kio.Filter{Filter(rw)}, Outputs: []kio.Writer{kio.ByteWriter{Writer: &out}}}).Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "prometheus-config-reloader: sea.hub:5000/bitnami/prometheus-operator:0.85.0\n") {
		t.Errorf("the ConfigMap is not rewritten:\n%s", out.String())
	}
	listed := false
	for _, im := range rw.Images() {
		listed = listed || im.Source == "docker.io/bitnami/prometheus-operator:0.85.0"
	}
	if !listed {
		t.Errorf("images %+v", rw.Images())
	}
}
