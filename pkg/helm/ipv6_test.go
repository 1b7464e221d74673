package helm

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// Issue 29, item 1: an IPv6 target registry through rehost values and
// rehost relocate. A chart that quotes its images moves them all, and the
// values written read back as the registry; one that writes them unquoted
// cannot be moved by values (its rendering would not be YAML), and the
// report says why.

var ipv6Config = rewrite.Config{Registry: "[fd00::5]:5000"}

// TestAirgapValuesIPv6: the overlay of a chart that quotes its images
// renders what rehost rewrite gives, and parses back.
func TestAirgapValuesIPv6(t *testing.T) {
	for _, name := range []string{"airgap-absent", "airgap-random"} {
		t.Run(name, func(t *testing.T) {
			o, err := AirgapValues(chartPath(name), Options{}, ipv6Config)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Complete() || len(o.Keys) == 0 {
				t.Fatalf("keys %v, unmoved %v", o.Keys, o.Unmoved)
			}
			b, err := o.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			var tree map[string]interface{}
			if err := yaml.Unmarshal(b, &tree); err != nil {
				t.Fatalf("the overlay does not parse: %v\n%s", err, b)
			}
			for _, k := range o.Keys {
				if v, ok := lookup(tree, k.Path); !ok || v != k.Value || !strings.HasPrefix(k.Value, "[fd00::5]:5000") {
					t.Errorf("%s reads back as %v, want %s", PathString(k.Path), v, k.Value)
				}
			}
			if name == "airgap-random" {
				return // its documents differ at every render
			}
			diffDocs(t, renderedDocs(t, chartPath(name), withOverlay(t, Options{}, o)), rewrittenDocs(t, chartPath(name), Options{}, ipv6Config))
		})
	}
}

// TestAirgapValuesIPv6Unquoted: a chart whose templates write the images
// unquoted renders YAML that does not parse with an IPv6 registry; the
// images are reported as not moved, saying why.
func TestAirgapValuesIPv6Unquoted(t *testing.T) {
	o, err := AirgapValues(chartPath("airgap-operator"), Options{}, ipv6Config)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Unmoved) == 0 {
		t.Fatal("every image moved: the chart's rendering parsed")
	}
	for _, u := range o.Unmoved {
		if !strings.Contains(u.Reason, "without quotes") || !strings.Contains(u.Reason, "[fd00::5]") {
			t.Errorf("%s: %s", u.Field, u.Reason)
		}
	}
}

// TestRelocateIPv6: the relocated values.yaml and annotations parse back
// with the IPv6 registry, and the relocated chart renders what rehost
// rewrite gives.
func TestRelocateIPv6(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := Relocate(chartPath("airgap-absent"), out, Options{}, ipv6Config)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Overlay.Complete() {
		t.Fatalf("unmoved: %v", r.Overlay.Unmoved)
	}
	values := readFile(t, filepath.Join(out, "values.yaml"))
	var tree map[string]interface{}
	if err := yaml.Unmarshal([]byte(values), &tree); err != nil {
		t.Fatalf("values.yaml does not parse: %v\n%s", err, values)
	}
	if v, _ := lookup(tree, []interface{}{"global", "imageRegistry"}); v != "[fd00::5]:5000" {
		t.Errorf("global.imageRegistry = %v\n%s", v, values)
	}
	if !strings.Contains(values, `imageRegistry: "[fd00::5]:5000"`) {
		t.Errorf("values.yaml:\n%s", values)
	}
	ch, err := loader.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]interface{}
	if err := yaml.Unmarshal([]byte(ch.Metadata.Annotations["artifacthub.io/images"]), &entries); err != nil || len(entries) != 2 || entries[0]["image"] != "[fd00::5]:5000/library/nginx:1.25" {
		t.Errorf("artifacthub.io/images: %v\n%s", err, ch.Metadata.Annotations["artifacthub.io/images"])
	}
	diffDocs(t, renderedDocs(t, out, Options{}), rewrittenDocs(t, chartPath("airgap-absent"), Options{}, ipv6Config))
}

// TestRenderErrorBounded (issue 29, item 12): a template that includes
// itself makes Helm repeat the chain of includes in a message of tens of
// kilobytes; the render error shows its start, cut with its size, and
// keeps Helm's error whole.
func TestRenderErrorBounded(t *testing.T) {
	chart := writeChart(t, map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"templates/_loop.tpl": `{{- define "loop" }}{{ include "loop" . }}{{- end }}`,
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  a: {{ include \"loop\" . }}\n",
	})
	_, err := Render(chart, Options{})
	var re *RenderError
	if !errors.As(err, &re) {
		t.Fatalf("err = %.300v, want a *RenderError", err)
	}
	whole := re.Err.Error()
	if len(whole) < 4*maxRenderError {
		t.Fatalf("Helm's message has %d bytes: the test needs a long one", len(whole))
	}
	msg := err.Error()
	if len(msg) > maxRenderError+len(re.Chart)+64 || !strings.Contains(msg, "include") || !strings.HasSuffix(msg, "("+strconv.Itoa(len(whole))+" bytes)") {
		t.Errorf("message of %d bytes (Helm's: %d): %.200s…%s", len(msg), len(whole), msg, msg[max(0, len(msg)-40):])
	}
}
