package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

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
