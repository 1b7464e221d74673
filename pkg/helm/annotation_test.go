package helm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/cli/values"
)

// TestAnnotationKeys: the images of the three annotation keys real charts
// use join the list, for the chart and for the subcharts its values
// enable, each located at its key.
func TestAnnotationKeys(t *testing.T) {
	parent := []string{
		"docker.io/bitnami/kubectl:1.33.1-debian-12-r0",
		"docker.io/bitnami/os-shell:12-debian-12-r45",
		"docker.io/bitnami/redis-exporter:1.72.0-debian-12-r0",
		"docker.io/bitnami/redis:8.0.2-debian-12-r3", // the template's
		"quay.io/example/operand:1.0",
	}
	tests := []struct {
		name string
		set  []string
		want []string
	}{
		{"subchart disabled", nil, parent},
		{"subchart enabled", []string{"extra.enabled=true"}, append(slices.Clone(parent), "docker.io/bitnami/redis-sentinel:8.0.2-debian-12-r2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sources(t, "annotations", Options{Values: values.Options{Values: tt.set}})
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}

	rw, _ := manifest.New(defaultConfig)
	if err := Images(rw, chartPath("annotations"), Options{Values: values.Options{Values: []string{"extra.enabled=true"}}}); err != nil {
		t.Fatal(err)
	}
	fields := map[string][]string{}
	for _, img := range rw.Images() {
		for _, o := range img.Occurrences {
			if o.Origin == rendered.OriginAnnotation {
				fields[img.Source] = append(fields[img.Source], o.File+" "+o.Field)
			}
		}
	}
	want := map[string][]string{
		"quay.io/example/operand:1.0":                          {"annotations/Chart.yaml annotations[helm.sh/images][0].image"},
		"docker.io/bitnami/os-shell:12-debian-12-r45":          {"annotations/Chart.yaml annotations[images][1].image"},
		"docker.io/bitnami/redis-exporter:1.72.0-debian-12-r0": {"annotations/Chart.yaml annotations[artifacthub.io/images][0].image"},
		"docker.io/bitnami/redis-sentinel:8.0.2-debian-12-r2": {
			"annotations/charts/extra/Chart.yaml annotations[images][0].image",
			"annotations/charts/extra/Chart.yaml annotations[artifacthub.io/images][0].image",
		},
	}
	for src, w := range want {
		if !slices.Equal(fields[src], w) {
			t.Errorf("%s declared at %q, want %q", src, fields[src], w)
		}
	}
}

// TestMalformedAnnotations: a malformed image annotation, of any of the
// three keys, is an error naming the chart's Chart.yaml and the key.
func TestMalformedAnnotations(t *testing.T) {
	for _, key := range rendered.ImageAnnotationKeys() {
		for name, value := range map[string]string{
			"not a list": `"{image: [}"`,
			"no image":   `"- name: x"`,
		} {
			t.Run(key+" "+name, func(t *testing.T) {
				dir := t.TempDir()
				chart := "apiVersion: v2\nname: bad\nversion: 1.0.0\nannotations:\n  " + key + ": " + value + "\n"
				if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(chart), 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := Render(dir, Options{})
				if err == nil || !strings.Contains(err.Error(), "bad/Chart.yaml: annotation "+key+": ") {
					t.Errorf("err = %v, want an error naming bad/Chart.yaml and the annotation %s", err, key)
				}
			})
		}
	}
}
