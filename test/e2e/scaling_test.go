package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// podsChart writes a chart whose one template renders n Pods, each its own
// document with its own image (the chart of pkg/helm's
// BenchmarkRenderScaling), and returns its directory.
func podsChart(b *testing.B, n int) string {
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

// BenchmarkChartCLIScaling compares `rehost images CHART` and `rehost
// rewrite CHART` with `helm template CHART` on a chart rendering 5,000 and
// 20,000 Pods, process start included: what rehost adds to Helm's
// rendering must not grow faster than the chart's documents (#29 item 5:
// at most 1.2× helm template at 20,000 documents). The rehost-helm helper
// alone (the rendering rehost waits for) is timed too. Each iteration runs
// the commands in turn, the first one changing from one iteration to the
// next, so that a shared machine's load weighs on each alike. It reports
// the wall times of helm template and rehost, the ratios to helm template,
// and the ratios of their CPU time (user and system, rehost's including
// its helper's), which a loaded machine disturbs less:
//
//	go test -run '^$' -bench ChartCLIScaling -benchtime 3x ./test/e2e
func BenchmarkChartCLIScaling(b *testing.B) {
	helm, err := exec.LookPath("helm")
	if err != nil {
		b.Skip("helm not found on PATH")
	}
	for _, n := range []int{5000, 20000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			chart := podsChart(b, n)
			cmds := [][]string{
				{helm, "template", chart, "--include-crds"},
				{rehostBin(), "images", chart},
				{rehostBin(), "rewrite", chart},
				// The helper alone: what rendering costs rehost before it
				// rewrites anything.
				{filepath.Join(binDir, "rehost-helm"), chart},
			}
			// Once: every Pod's image is listed, every one rewritten.
			images, err := exec.Command(cmds[1][0], cmds[1][1:]...).Output()
			if err != nil || bytes.Count(images, []byte("\n")) != n {
				b.Fatalf("rehost images: %v, %d lines, want %d", err, bytes.Count(images, []byte("\n")), n)
			}
			out, err := exec.Command(cmds[2][0], cmds[2][1:]...).Output()
			if err != nil || bytes.Count(out, []byte("image: sea.hub:5000/library/nginx:1.")) != n {
				b.Fatalf("rehost rewrite: %v, %d images rewritten, want %d", err, bytes.Count(out, []byte("image: sea.hub:5000/library/nginx:1.")), n)
			}
			wall := make([]time.Duration, len(cmds))
			cpu := make([]time.Duration, len(cmds))
			i := 0
			for b.Loop() {
				for k := range cmds {
					c := (i + k) % len(cmds)
					cmd := exec.Command(cmds[c][0], cmds[c][1:]...)
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					start := time.Now()
					if err := cmd.Run(); err != nil {
						b.Fatalf("%v: %v\n%s", cmds[c], err, stderr.Bytes())
					}
					wall[c] += time.Since(start)
					cpu[c] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				i++
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(i) }
			b.ReportMetric(ms(wall[0]), "helm-template-ms/op")
			b.ReportMetric(ms(wall[1]), "rehost-images-ms/op")
			b.ReportMetric(ms(wall[2]), "rehost-rewrite-ms/op")
			b.ReportMetric(float64(wall[1])/float64(wall[0]), "images/helm")
			b.ReportMetric(float64(wall[2])/float64(wall[0]), "rewrite/helm")
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "images-cpu/helm")
			b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "rewrite-cpu/helm")
			b.ReportMetric(float64(wall[3])/float64(wall[0]), "helper/helm")
			b.ReportMetric(float64(cpu[3])/float64(cpu[0]), "helper-cpu/helm")
		})
	}
}
