package helm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestAirgapValuesKubePrometheus: Bitnami kube-prometheus passes the
// config-reloader image to the Prometheus operator through its ConfigMap
// (--prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER), env from
// configMapKeyRef), rendered before the Deployment. The ConfigMap value is
// an image field: rehost rewrite moves it, so the values that drive it
// (the operator's image, the reloader's own image fields when set) change
// no ConfigMap beyond image fields, and the overlay relocates the chart
// fully, agreeing with the rewrite; nothing is left on docker.io.
func TestAirgapValuesKubePrometheus(t *testing.T) {
	chart := chartPath("airgap-kube-prometheus")
	reloader := filepath.Join(t.TempDir(), "reloader.yaml")
	if err := os.WriteFile(reloader, []byte("operator:\n  prometheusConfigReloader:\n    image:\n      registry: docker.io\n      repository: bitnami/prometheus-config-reloader\n      tag: 0.85.0-debian-12-r0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		opts   Options
		images []string
	}{
		{"the operator's image", Options{}, []string{"docker.io/bitnami/prometheus-operator:0.85.0-debian-12-r0"}},
		{"the reloader's own image", withValues(Options{}, reloader), []string{"docker.io/bitnami/prometheus-config-reloader:0.85.0-debian-12-r0", "docker.io/bitnami/prometheus-operator:0.85.0-debian-12-r0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sources(t, "airgap-kube-prometheus", tt.opts); !reflect.DeepEqual(got, tt.images) {
				t.Errorf("images %q, want %q", got, tt.images)
			}
			rewritten := rewrittenDocs(t, chart, tt.opts, defaultConfig)
			for _, d := range rewritten {
				if strings.Contains(d, "docker.io") {
					t.Errorf("left on docker.io:\n%s", d)
				}
			}
			if !strings.Contains(strings.Join(rewritten, ""), "prometheus-config-reloader: sea.hub:5000/bitnami/") {
				t.Errorf("the ConfigMap is not rewritten:\n%s", strings.Join(rewritten, "\n"))
			}
			o, err := AirgapValues(chart, tt.opts, defaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Complete() {
				t.Fatalf("unmoved: %+v", o.Unmoved)
			}
			var keys []string
			for _, k := range o.Keys {
				keys = append(keys, PathString(k.Path)+"="+k.Value)
			}
			if want := []string{"global.imageRegistry=sea.hub:5000", "global.security.allowInsecureImages=true"}; !reflect.DeepEqual(keys, want) {
				t.Errorf("keys %q, want %q", keys, want)
			}
			diffDocs(t, renderedDocs(t, chart, withOverlay(t, tt.opts, o)), rewritten)
		})
	}
}
