package helm

import (
	"bytes"
	"errors"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/cli/values"
)

// TestTemplateLines: errors and occurrences name the template file and the
// line of the value in that template's output, for every document of a
// multi-document template, however Helm sorts them.
func TestTemplateLines(t *testing.T) {
	c := mustRender(t, "multidoc", Options{Values: values.Options{Values: []string{"image=nginx:1.25"}}})
	rw, err := manifest.New(defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(nil, rw); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, img := range rw.Images() {
		for _, o := range img.Occurrences {
			if o.File != "multidoc/templates/app.yaml" {
				t.Errorf("%s: file %q", img.Source, o.File)
			}
			got[img.Source] = o.Line
		}
	}
	// The template's output: its "{{- if }}" line joins the comment above.
	want := map[string]int{"registry.k8s.io/pause:3.9": 12, "docker.io/library/nginx:1.25": 27}
	for src, line := range want {
		if got[src] != line {
			t.Errorf("%s at line %d, want %d (all: %v)", src, got[src], line, got)
		}
	}

	// The invalid image of the chart's default values, in the third
	// document: the error names its line.
	c = mustRender(t, "multidoc", Options{})
	rw, _ = manifest.New(defaultConfig)
	err = c.Rewrite(nil, rw)
	var e *manifest.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *manifest.Error", err)
	}
	if e.Location.File != "multidoc/templates/app.yaml" || e.Location.Line != 27 || e.Location.Field != "spec.containers[0].image" {
		t.Errorf("error at %s, want multidoc/templates/app.yaml:27: ...: spec.containers[0].image", e.Location)
	}
	var inv *rewrite.InvalidReferenceError
	if !errors.As(err, &inv) || inv.Value != "Nginx:1.25" {
		t.Errorf("error %v does not wrap the invalid reference", err)
	}
}

// TestHelmWarnings: Helm's warnings, which it prints with the global
// logger (three times for one chart), reach the Rewriter's warning
// function once each, prefixed with the chart; nothing reaches the logger's
// output, and the logger is as it was after the render.
func TestHelmWarnings(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	log.SetFlags(log.Lshortfile)
	log.SetPrefix("app: ")
	defer func() {
		log.SetOutput(os.Stderr)
		log.SetFlags(log.LstdFlags)
		log.SetPrefix("")
	}()

	var warns []string
	rw, err := manifest.New(defaultConfig, manifest.WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	err = Images(rw, chartPath("warnings"), Options{Values: values.Options{Values: []string{"resources.limits=big"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "warnings: ") || !strings.Contains(warns[0], "resources") {
		t.Errorf("warnings = %q, want one about resources, prefixed with the chart", warns)
	}
	if logged.Len() > 0 {
		t.Errorf("Helm wrote to the global logger: %q", logged.String())
	}
	if log.Writer() != &logged || log.Flags() != log.Lshortfile || log.Prefix() != "app: " {
		t.Errorf("the global logger was left changed")
	}
	log.Print("after")
	if logged.String() == "" {
		t.Errorf("the global logger no longer writes to its output")
	}
}
