package helm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// replaceAll applies old, new pairs to s, each exactly once.
func replaceAll(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if strings.Count(s, pairs[i]) < 1 {
			t.Fatalf("%q not found in:\n%s", pairs[i], s)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRelocate: the values files of the parent and of the subchart change
// only in the lines of the keys set; the relocated chart, packaged or as a
// directory, renders as the rewritten chart; the image annotations name
// the targets.
func TestRelocate(t *testing.T) {
	cfg := rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{"docker.io/library/busybox"}}
	for _, output := range []string{"airgap", "airgap.tgz"} {
		t.Run(output, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), output)
			r, err := Relocate(chartPath("airgap"), out, Options{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			wantEdited := []string{"airgap/Chart.yaml", "airgap/charts/worker/Chart.yaml", "airgap/charts/worker/values.yaml", "airgap/values.yaml"}
			if !reflect.DeepEqual(r.Edited, wantEdited) {
				t.Errorf("edited %q", r.Edited)
			}
			ch, err := loader.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			values := func(name string) string {
				var c = ch
				if name != "" {
					for _, d := range ch.Dependencies() {
						if d.Name() == name {
							c = d
						}
					}
				}
				for _, f := range c.Raw {
					if f.Name == "values.yaml" {
						return string(f.Data)
					}
				}
				t.Fatalf("no values.yaml in %s", name)
				return ""
			}
			parent := readFile(t, filepath.Join(chartPath("airgap"), "values.yaml"))
			wantParent := replaceAll(t, parent,
				`imageRegistry: ""`, `imageRegistry: "sea.hub:5000"`,
				`registry: ""`, `registry: "sea.hub:5000"`,
				"image: nginx:1.25   # the web server", "image: sea.hub:5000/library/nginx:1.25   # the web server",
				"repository: ghcr.io/acme/api", "repository: sea.hub:5000/acme/api",
				"hub: docker.io/istio", "hub: sea.hub:5000/istio",
				"registry: gcr.io", "registry: sea.hub:5000",
				"repository: quay.io/acme/migrate", "repository: sea.hub:5000/acme/migrate",
				"image: fluent/fluent-bit:3.0", "image: sea.hub:5000/fluent/fluent-bit:3.0")
			if got := values(""); got != wantParent {
				t.Errorf("parent values.yaml:\n%s\nwant:\n%s", got, wantParent)
			}
			sub := readFile(t, filepath.Join(chartPath("airgap"), "charts", "worker", "values.yaml"))
			wantSub := replaceAll(t, sub, "repository: alpine/git", "repository: sea.hub:5000/alpine/git")
			if got := values("worker"); got != wantSub {
				t.Errorf("subchart values.yaml:\n%s\nwant:\n%s", got, wantSub)
			}
			if got := ch.Metadata.Annotations["helm.sh/images"]; got != "- name: web\n  image: sea.hub:5000/library/nginx:1.25\n- name: operand\n  image: sea.hub:5000/acme/operand:3.1\n" {
				t.Errorf("helm.sh/images:\n%s", got)
			}
			diffDocs(t, renderedDocs(t, out, Options{}), rewrittenDocs(t, chartPath("airgap"), Options{}, cfg))
			// Relocating is idempotent: the relocated chart needs no values.
			again, err := AirgapValues(out, Options{}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Keys) != 0 || !again.Complete() {
				t.Errorf("the relocated chart needs keys %+v, leaves %+v", again.Keys, again.Unmoved)
			}
		})
	}
}

// TestPlaceKey: a key goes to the values file that gives it its value.
func TestPlaceKey(t *testing.T) {
	ch, err := Load(chartPath("airgap"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  []interface{}
		chart string
		rest  string
	}{
		{[]interface{}{"jobs", "git", "image", "repository"}, "airgap/charts/worker", "git.image.repository"}, // the subchart's own, by alias
		{[]interface{}{"jobs", "schedule"}, "airgap", "jobs.schedule"},                                        // the parent sets it
		{[]interface{}{"jobs", "image", "registry"}, "airgap/charts/worker", "image.registry"},                //
		{[]interface{}{"global", "imageRegistry"}, "airgap", "global.imageRegistry"},                          // globals stay in the parent
		{[]interface{}{"worker", "image", "registry"}, "airgap", "worker.image.registry"},                     // by name, but it is aliased
		{[]interface{}{"sidecars", 0, "image"}, "airgap", "sidecars[0].image"},
	}
	for _, tt := range tests {
		c, rest := placeKey(ch, tt.path)
		if c.ChartFullPath() != tt.chart || PathString(rest) != tt.rest {
			t.Errorf("placeKey(%s) = %s, %s; want %s, %s", PathString(tt.path), c.ChartFullPath(), PathString(rest), tt.chart, tt.rest)
		}
	}
}

// TestRelocateAddsKeys: registry keys the values do not declare are added,
// with a comment, at the end of their map (or of the file); the other
// lines stay; artifacthub.io/images entries keep their other fields.
func TestRelocateAddsKeys(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := Relocate(chartPath("airgap-absent"), out, Options{}, defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Overlay.Complete() {
		t.Fatalf("unmoved: %v", r.Overlay.Unmoved)
	}
	want := `# No registry key anywhere: the templates default them.
global:   # set by parents
  # rehost: docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25
  imageRegistry: sea.hub:5000
podAnnotations: {}
image:
  tag: "1.25"   # nginx's tag

agent:
  tag: "1"
  # rehost: quay.io/acme/agent:1 -> sea.hub:5000/acme/agent:1
  registry: sea.hub:5000
`
	if got := readFile(t, filepath.Join(out, "values.yaml")); got != want {
		t.Errorf("values.yaml:\n%s\nwant:\n%s", got, want)
	}
	ch, err := loader.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	wantAnn := "- name: nginx\n  image: sea.hub:5000/library/nginx:1.25\n  whitelisted: true\n- name: agent\n  image: sea.hub:5000/acme/agent:1\n"
	if got := ch.Metadata.Annotations["artifacthub.io/images"]; got != wantAnn {
		t.Errorf("artifacthub.io/images:\n%s\nwant:\n%s", got, wantAnn)
	}
	diffDocs(t, renderedDocs(t, out, Options{}), rewrittenDocs(t, chartPath("airgap-absent"), Options{}, defaultConfig))
}

// TestRelocateVolatile: a chart with documents that differ at every render
// relocates (the check compares those by their image fields).
func TestRelocateVolatile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.tgz")
	if _, err := Relocate(chartPath("airgap-random"), out, Options{}, defaultConfig); err != nil {
		t.Fatal(err)
	}
	c, err := Render(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Manifests[1].Content, "image: \"sea.hub:5000/bitnami/redis:7.2.5\"") {
		t.Errorf("relocated:\n%s", c.Manifests[1].Content)
	}
}

// TestRelocateOutput: a non-empty output directory is refused, an empty
// one replaced; nothing is left beside the output.
func TestRelocateOutput(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Relocate(chartPath("airgap-absent"), out, Options{}, defaultConfig); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("err = %v", err)
	}
	if err := os.Remove(filepath.Join(out, "keep")); err != nil {
		t.Fatal(err)
	}
	if _, err := Relocate(chartPath("airgap-absent"), out, Options{}, defaultConfig); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "Chart.yaml")); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("left beside the output: %v", entries)
	}
	// A file where a directory must go.
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Relocate(chartPath("airgap-absent"), file, Options{}, defaultConfig); err == nil {
		t.Error("no error for a file as the output directory")
	}
}

// TestRelocateRepeatedKey: a values file with a repeated key, whose last
// value Helm reads, is refused before any edit with the lines of both,
// and nothing is written; the overlay, which Helm merges over what it
// reads, still moves the image.
func TestRelocateRepeatedKey(t *testing.T) {
	chart := writeChart(t, map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: dup\nversion: 1.0.0\n",
		"values.yaml":        "image:\n  registry: docker.io\n  repository: library/nginx\nimage:\n  registry: quay.io\n  repository: acme/web\n",
		"templates/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: {{ .Values.image.registry }}/{{ .Values.image.repository }}:1\n",
	})
	out := filepath.Join(t.TempDir(), "out.tgz")
	_, err := Relocate(chart, out, Options{}, defaultConfig)
	if err == nil || !strings.Contains(err.Error(), `values.yaml: image.registry: line 4: mapping key "image" already defined at line 1: Helm reads the last value`) {
		t.Fatalf("got %v, want the repeated key named with its lines", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
	o, err := AirgapValues(chart, Options{}, defaultConfig)
	if err != nil || !o.Complete() || len(o.Keys) != 1 || o.Keys[0].Value != "sea.hub:5000" {
		t.Fatalf("overlay %+v, %v; want image.registry: sea.hub:5000", o, err)
	}
}
