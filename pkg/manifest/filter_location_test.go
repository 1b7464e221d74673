package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
			rw, err := New(rewrite.Config{})
			if err != nil {
				t.Fatal(err)
			}
			err = kio.Pipeline{Inputs: []kio.Reader{tt.reader}, Filters: []kio.Filter{rw.Filter()}}.Execute()
			var e *Error
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
