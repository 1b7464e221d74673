package policy

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output (review the diff by eye)")

// TestGolden pins the policies for a few mappings; test/policy and
// test/e2e prove what they do.
func TestGolden(t *testing.T) {
	cfg := rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{"quay.io", "docker.io/bitnami"}}
	for _, tt := range []struct {
		file string
		cfg  rewrite.Config
		o    Options
	}{
		{"admission-v1.yaml", cfg, Options{Validate: true, NamespaceSelector: DefaultNamespaceSelector}},
		{"admission-v1alpha1-deny-nest.yaml", rewrite.Config{Registry: "harbor.local:8443/mirror", PathStyle: rewrite.PathStyleNest}, Options{APIVersion: V1alpha1, Deny: true, NamespaceSelector: "team=a,!legacy"}},
		{"kyverno.yaml", cfg, Options{Format: Kyverno, Validate: true, NamespaceSelector: DefaultNamespaceSelector}},
	} {
		var b bytes.Buffer
		if err := Write(&b, tt.cfg, tt.o); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join("testdata", tt.file)
		if *update {
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs from the output (go test ./pkg/policy -update, then review the diff)", p)
		}
		// Every document is YAML that decodes.
		dec := yaml.NewDecoder(bytes.NewReader(b.Bytes()))
		n := 0
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				break
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: no documents", tt.file)
		}
	}
}

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in   string
		want []Requirement
		err  string
	}{
		{in: ""},
		{in: DefaultNamespaceSelector, want: []Requirement{{"kubernetes.io/metadata.name", "NotIn", []string{"kube-system"}}}},
		{in: "a=b, c==d,e!=f", want: []Requirement{{"a", "In", []string{"b"}}, {"c", "In", []string{"d"}}, {"e", "NotIn", []string{"f"}}}},
		{in: "x in (a, b),!y,z", want: []Requirement{{"x", "In", []string{"a", "b"}}, {"y", "DoesNotExist", nil}, {"z", "Exists", nil}}},
		{in: "a in (b", err: "invalid label key"},
		{in: "a,,b", err: "empty term"},
		{in: "a=b c", err: "invalid label value"},
		{in: "-a=b", err: "invalid label key"},
	}
	for _, tt := range tests {
		got, err := ParseSelector(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestUnsupported: what the requested policy cannot express is an error
// naming it, and nothing is written.
func TestUnsupported(t *testing.T) {
	pin, err := rewrite.ParseRef("sea.hub:5000/library/nginx:1.25@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	pins := rewrite.Pins{"docker.io/library/nginx:1.25": pin}
	tests := []struct {
		cfg     rewrite.Config
		o       Options
		feature string
	}{
		{o: Options{Format: "opa"}, feature: "format"},
		{o: Options{APIVersion: "v1"}, feature: "api-version"},
		{o: Options{Format: Kyverno, APIVersion: V1}, feature: "api-version"},
		{o: Options{Format: Kyverno, Pins: pins}, feature: "pins"},
		{cfg: rewrite.Config{Registry: "other.io"}, o: Options{Pins: pins}, feature: "pins"},
		{o: Options{Name: "Bad_Name"}, feature: "name"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		err := Write(&b, tt.cfg, tt.o)
		var ue *UnsupportedError
		if !errors.As(err, &ue) || ue.Feature != tt.feature {
			t.Errorf("%+v: error %v, want one naming %s", tt.o, err, tt.feature)
		}
		// The library's terms: the CLI adds its flags (cmd/rehost policy.go).
		if err != nil && strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: error %q names a flag", tt.o, err)
		}
		if ue != nil && (ue.Format == Kyverno) != (tt.o.Format == Kyverno) {
			t.Errorf("%+v: Format %q, want the format that refused it", tt.o, ue.Format)
		}
		if b.Len() > 0 {
			t.Errorf("%+v: wrote %d bytes", tt.o, b.Len())
		}
	}
	// A pin for an excluded image never applies: no error, no entry.
	docs, err := Documents(rewrite.Config{Exclude: []string{"docker.io/library/nginx"}, Registry: "other.io"}, Options{Pins: pins})
	if err != nil || len(docs) != 2 {
		t.Errorf("excluded pin: %d documents, %v", len(docs), err)
	}
	// Invalid configs are the config's errors.
	if err := Write(&bytes.Buffer{}, rewrite.Config{PathStyle: "flat"}, Options{}); err == nil || !strings.Contains(err.Error(), "pathStyle") {
		t.Errorf("bad config: %v", err)
	}
}

// TestRenderOnly: the header names the config settings left to render
// time.
func TestRenderOnly(t *testing.T) {
	cfg := rewrite.Config{RewriteEmbedded: true, ImageFields: []rewrite.ImageField{{Kind: "Runner", Path: "spec.image"}}, SkipInvalid: true}
	var b bytes.Buffer
	if err := Write(&b, cfg, Options{Format: Kyverno}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# Config settings that apply at render time only", "#   imageFields", "#   rewriteEmbedded", "#   skipInvalid"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("header lacks %q", s)
		}
	}
	if got := len(RenderOnly(rewrite.Config{})); got != 0 {
		t.Errorf("default config: %d render-only settings", got)
	}
}

// TestQuote: a literal that would need escaping is a bug that must not
// reach a policy.
func TestQuote(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("quote accepted a quote")
		}
	}()
	quote("a'b")
}
