package helm

import (
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
