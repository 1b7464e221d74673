package rendered

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

// podsChart is a chart whose one template rendered n Pods, each its own
// document, as BenchmarkRenderScaling's chart in pkg/helm renders them.
func podsChart(n int) *Chart {
	c := &Chart{Format: Format, Name: "pods", Version: "1.0.0", Manifests: make([]Manifest, n)}
	for i := range c.Manifests {
		c.Manifests[i] = Manifest{
			Name:    "pods/templates/pods.yaml",
			Content: fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%d\n  labels:\n    app: pods\nspec:\n  containers:\n  - name: web\n    image: nginx:1.%d", i, i),
			Line:    3 + 11*i,
		}
	}
	return c
}

// BenchmarkRewriteDocuments measures what rehost images (w nil) and rehost
// rewrite (w io.Discard) do with a rendered chart of n documents: the cost
// per document must not depend on n, nor exceed what the same documents
// cost as one stream (BenchmarkRewriteStream): a chart's documents run
// through one pipeline, not one each.
//
//	go test -run '^$' -bench RewriteDocuments ./pkg/rendered
func BenchmarkRewriteDocuments(b *testing.B) {
	for _, n := range []int{5000, 20000} {
		c := podsChart(n)
		for _, mode := range []struct {
			name string
			w    io.Writer
		}{{"images", nil}, {"rewrite", io.Discard}} {
			b.Run(fmt.Sprintf("docs=%d/%s", n, mode.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
					if err != nil {
						b.Fatal(err)
					}
					if err := c.Rewrite(mode.w, rw); err != nil {
						b.Fatal(err)
					}
					if got := len(rw.Images()); got != n {
						b.Fatalf("%d images, want %d", got, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/doc")
			})
		}
	}
}

// BenchmarkRewriteStream is BenchmarkRewriteDocuments's work done on the
// chart's `helm template` output as one stream, what rehost images does
// with it piped: the floor for a chart's documents.
func BenchmarkRewriteStream(b *testing.B) {
	for _, n := range []int{5000, 20000} {
		c := podsChart(n)
		var sb strings.Builder
		if _, err := c.WriteTo(&sb); err != nil {
			b.Fatal(err)
		}
		text := sb.String()
		for _, mode := range []struct {
			name string
			w    io.Writer
		}{{"images", nil}, {"rewrite", io.Discard}} {
			b.Run(fmt.Sprintf("docs=%d/%s", n, mode.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
					if err != nil {
						b.Fatal(err)
					}
					if err := rw.Rewrite(mode.w, strings.NewReader(text), "s"); err != nil {
						b.Fatal(err)
					}
					if got := len(rw.Images()); got != n {
						b.Fatalf("%d images, want %d", got, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/doc")
			})
		}
	}
}
