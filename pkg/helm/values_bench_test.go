package helm

import (
	"testing"
	"time"

	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/cli/values"
)

// BenchmarkAirgapValues measures AirgapValues against one `helm template`
// of the same chart (helmTemplate, in process), alternating the two in
// each iteration so that a shared machine's load weighs on both alike. It
// reports both times, their ratio, and the renders and candidates of the
// search (renders = candidates + 2):
//
//	go test -run '^$' -bench AirgapValues -count 6 ./pkg/helm
func BenchmarkAirgapValues(b *testing.B) {
	for _, chart := range []string{"airgap", "airgap-absent", "parent"} {
		b.Run(chart, func(b *testing.B) {
			path := chartPath(chart)
			opts := Options{}
			var helm, airgap time.Duration
			var o *Overlay
			i := 0
			for b.Loop() {
				for k := 0; k < 2; k++ {
					start := time.Now()
					if (i+k)%2 == 0 {
						helmTemplate(b, path, values.Options{})
						helm += time.Since(start)
					} else {
						var err error
						if o, err = AirgapValues(path, opts, rewrite.Config{Registry: "sea.hub:5000"}); err != nil {
							b.Fatal(err)
						}
						airgap += time.Since(start)
					}
				}
				i++
			}
			b.ReportMetric(float64(helm.Microseconds())/float64(i), "helm-µs/op")
			b.ReportMetric(float64(airgap.Microseconds())/float64(i), "values-µs/op")
			b.ReportMetric(float64(airgap)/float64(helm), "values/helm")
			b.ReportMetric(float64(o.Renders), "renders")
			b.ReportMetric(float64(o.Candidates), "candidates")
		})
	}
}
