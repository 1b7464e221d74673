package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// helmTemplate does in process what `helm template` does to render a chart:
// merge the values, load the chart, run the client-only install action.
func helmTemplate(b *testing.B, path string, opts values.Options) {
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		b.Fatal(err)
	}
	ch, err := loader.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.DryRunOption, install.ClientOnly, install.Replace, install.IncludeCRDs = true, "client", true, true, true
	install.ReleaseName, install.Namespace = DefaultReleaseName, DefaultNamespace
	if _, err := install.Run(ch, vals); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRender compares Render, which returns the documents with their
// template names and the annotation images, with what `helm template` does
// for the same chart (helmTemplate). Each iteration runs both, in
// alternating order, so that the load of a shared machine weighs on both
// alike; the benchmark reports each one's time per render and their ratio:
//
//	go test -run '^$' -bench Render -count 6 ./pkg/helm
func BenchmarkRender(b *testing.B) {
	path := chartPath("parent")
	opts := Options{Values: values.Options{Values: []string{"sub-c.enabled=true"}}}
	var helm, rehost time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for k := 0; k < 2; k++ {
			start := time.Now()
			if (i+k)%2 == 0 {
				helmTemplate(b, path, opts.Values)
				helm += time.Since(start)
			} else {
				if _, err := Render(path, opts); err != nil {
					b.Fatal(err)
				}
				rehost += time.Since(start)
			}
		}
		i++
	}
	b.ReportMetric(float64(helm.Microseconds())/float64(i), "helm-µs/op")
	b.ReportMetric(float64(rehost.Microseconds())/float64(i), "rehost-µs/op")
	b.ReportMetric(float64(rehost)/float64(helm), "rehost/helm")
}

// scalingChart writes a chart whose one template renders n Pods (each its
// own document, as a chart that ranges over a list renders them) and
// returns its directory.
func scalingChart(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "pods")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: pods\nversion: 1.0.0\n",
		"values.yaml": fmt.Sprintf("pods: %d\nimage: nginx\n", n),
		"templates/pods.yaml": `{{- range $i := until (int .Values.pods) }}
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-{{ $i }}
  labels:
    app: pods
spec:
  containers:
  - name: web
    image: {{ $.Values.image }}:1.{{ $i }}
{{- end }}
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkRenderScaling compares Render with what `helm template` does
// (helmTemplate) on a chart rendering 5,000, 10,000 and 20,000 documents
// from one template: Render's cost over Helm's must not grow with the
// number of documents (it grew quadratically when each document was
// searched for in its template's whole output). Each iteration runs both,
// in alternating order; the benchmark reports each one's time per render
// and their ratio:
//
//	go test -run '^$' -bench RenderScaling -count 1 ./pkg/helm
func BenchmarkRenderScaling(b *testing.B) {
	for _, n := range []int{5000, 10000, 20000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			path := scalingChart(b, n)
			var helm, rehost time.Duration
			i := 0
			for b.Loop() {
				for k := 0; k < 2; k++ {
					start := time.Now()
					if (i+k)%2 == 0 {
						helmTemplate(b, path, values.Options{})
						helm += time.Since(start)
					} else {
						c, err := Render(path, Options{})
						if err != nil {
							b.Fatal(err)
						}
						if len(c.Manifests) != n || c.Manifests[n-1].Line == 0 {
							b.Fatalf("%d documents, the last at line %d", len(c.Manifests), c.Manifests[n-1].Line)
						}
						rehost += time.Since(start)
					}
				}
				i++
			}
			b.ReportMetric(float64(helm.Milliseconds())/float64(i), "helm-ms/op")
			b.ReportMetric(float64(rehost.Milliseconds())/float64(i), "rehost-ms/op")
			b.ReportMetric(float64(rehost)/float64(helm), "rehost/helm")
		})
	}
}
