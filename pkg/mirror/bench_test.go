package mirror

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/rehost/rehost/pkg/rewrite"
)

// Benchmark sizes: benchImages images of benchLayers layers of benchLayerSize
// bytes each, copied between two in-memory registries on loopback.
const (
	benchImages    = 8
	benchLayers    = 4
	benchLayerSize = 256 << 10
)

// BenchmarkCopy copies the same images with rehost's Mirror (4 images at a
// time, the default, and one at a time) and with a plain crane.Copy loop,
// the baseline, into a fresh target registry at every iteration. Compare
// the ns/op of the sub-benchmarks of one run. The rtt=2ms cases add 2 ms to
// every request of both registries, as a registry across a network would.
func BenchmarkCopy(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchmarkCopy(b, rtt) })
	}
}

func benchmarkCopy(b *testing.B, rtt time.Duration) {
	src := newTestRegistry(b)
	src.delay = rtt
	var sources []string
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < benchImages; i++ {
		img, err := random.Image(benchLayerSize, benchLayers, random.WithSource(rnd))
		if err != nil {
			b.Fatal(err)
		}
		ref := fmt.Sprintf("%s/bench/image%d:1", src.host, i)
		push(b, ref, img)
		sources = append(sources, ref)
	}
	jobsFor := func(dst string) []Job {
		out := make([]Job, len(sources))
		for i, s := range sources {
			out[i] = Job{Source: s, Target: fmt.Sprintf("%s/bench/image%d:1", dst, i)}
		}
		return out
	}
	bytes := int64(benchImages * benchLayers * benchLayerSize)

	for _, jobs := range []int{DefaultJobs, 1} {
		b.Run(fmt.Sprintf("rehost/jobs=%d", jobs), func(b *testing.B) {
			b.SetBytes(bytes)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dst := newTestRegistry(b)
				dst.delay = rtt
				m := newMirror(b, Options{Jobs: jobs})
				b.StartTimer()
				s := m.Copy(context.Background(), jobsFor(dst.host))
				if s.Copied != benchImages {
					b.Fatalf("%d copied: %v", s.Copied, s.Err())
				}
			}
		})
	}
	b.Run("crane.Copy-loop", func(b *testing.B) {
		b.SetBytes(bytes)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dst := newTestRegistry(b)
			dst.delay = rtt
			b.StartTimer()
			for _, j := range jobsFor(dst.host) {
				if err := crane.Copy(j.Source, j.Target, crane.WithAuthFromKeychain(anonymous)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkAttachmentsOverhead copies benchImages images that have no
// attachments with Attachments none and all, into a fresh target registry
// at every iteration, and reports the requests per image to both
// registries (req/image) besides the time. The difference is the cost of
// looking for attachments: one tag listing per repository, plus one probe
// of the referrers API per registry and run. The rtt=2ms cases add 2 ms to
// every request, as a registry across a network would.
func BenchmarkAttachmentsOverhead(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) {
			src := newTestRegistry(b)
			src.delay = rtt
			var sources []string
			rnd := rand.New(rand.NewSource(2))
			for i := 0; i < benchImages; i++ {
				img, err := random.Image(benchLayerSize/16, 1, random.WithSource(rnd))
				if err != nil {
					b.Fatal(err)
				}
				ref := fmt.Sprintf("%s/bench/image%d:1", src.host, i)
				push(b, ref, img)
				sources = append(sources, ref)
			}
			for _, mode := range []Attachments{AttachmentsNone, AttachmentsAll} {
				b.Run("attachments="+string(mode), func(b *testing.B) {
					reqs := 0
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						dst := newTestRegistry(b)
						dst.delay = rtt
						jobs := make([]Job, len(sources))
						for j, s := range sources {
							jobs[j] = Job{Source: s, Target: fmt.Sprintf("%s/bench/image%d:1", dst.host, j)}
						}
						m := newMirror(b, Options{Attachments: mode})
						src.resetLog()
						b.StartTimer()
						s := m.Copy(context.Background(), jobs)
						b.StopTimer()
						if s.Copied != benchImages {
							b.Fatalf("%d copied: %v", s.Copied, s.Err())
						}
						src.mu.Lock()
						reqs += len(src.reqs)
						src.mu.Unlock()
						dst.mu.Lock()
						reqs += len(dst.reqs)
						dst.mu.Unlock()
						b.StartTimer()
					}
					b.ReportMetric(float64(reqs)/float64(b.N*benchImages), "req/image")
				})
			}
		})
	}
}

// BenchmarkArchive writes the same images into an OCI layout directory
// (Export, --to-oci) and into an archive of 1 MiB parts (ExportArchive,
// --to-archive), and pushes each into a fresh registry (Import,
// --from-oci; ImportArchive, --from-archive, its parts checked first).
// Compare the ns/op of to-archive with to-oci, and of from-archive with
// from-oci, in one run. The rtt=2ms cases add 2 ms to every request, as a
// registry across a network would.
func BenchmarkArchive(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchmarkArchive(b, rtt) })
	}
}

func benchmarkArchive(b *testing.B, rtt time.Duration) {
	src := newTestRegistry(b)
	src.delay = rtt
	var jobs []Job
	rnd := rand.New(rand.NewSource(3))
	for i := 0; i < benchImages; i++ {
		img, err := random.Image(benchLayerSize, benchLayers, random.WithSource(rnd))
		if err != nil {
			b.Fatal(err)
		}
		ref := fmt.Sprintf("%s/bench/image%d:1", src.host, i)
		push(b, ref, img)
		jobs = append(jobs, Job{Source: ref, Target: fmt.Sprintf("sea.hub:5000/bench/image%d:1", i)})
	}
	bytes := int64(benchImages * benchLayers * benchLayerSize)
	opts := Options{Attachments: AttachmentsNone}
	dir := b.TempDir()
	n := 0
	fresh := func() string { n++; return filepath.Join(dir, fmt.Sprint(n)) }

	b.Run("to-oci", func(b *testing.B) {
		b.SetBytes(bytes)
		for i := 0; i < b.N; i++ {
			s, err := newMirror(b, opts).Export(context.Background(), jobs, fresh())
			if err != nil || s.Copied != benchImages {
				b.Fatal(err, s.Err())
			}
		}
	})
	b.Run("to-archive", func(b *testing.B) {
		b.SetBytes(bytes)
		for i := 0; i < b.N; i++ {
			s, err := newMirror(b, opts).ExportArchive(context.Background(), jobs, fresh(), ArchiveOptions{PartSize: MinPartSize})
			if err != nil || s.Copied != benchImages {
				b.Fatal(err, s.Err())
			}
		}
	})

	layoutDir, archive := fresh(), fresh()
	if s, err := newMirror(b, opts).Export(context.Background(), jobs, layoutDir); err != nil || s.Err() != nil {
		b.Fatal(err, s.Err())
	}
	if s, err := newMirror(b, opts).ExportArchive(context.Background(), jobs, archive, ArchiveOptions{PartSize: MinPartSize}); err != nil || s.Err() != nil {
		b.Fatal(err, s.Err())
	}
	for _, c := range []struct {
		name string
		run  func(m *Mirror, mp *rewrite.Mapper) (Summary, error)
	}{
		{"from-oci", func(m *Mirror, mp *rewrite.Mapper) (Summary, error) {
			return m.Import(context.Background(), layoutDir, mp)
		}},
		{"from-archive", func(m *Mirror, mp *rewrite.Mapper) (Summary, error) {
			return m.ImportArchive(context.Background(), archive, mp)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(bytes)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dst := newTestRegistry(b)
				dst.delay = rtt
				mp, err := rewrite.NewMapper(rewrite.Config{Registry: dst.host})
				if err != nil {
					b.Fatal(err)
				}
				m := newMirror(b, opts)
				b.StartTimer()
				s, err := c.run(m, mp)
				if err != nil || s.Copied != benchImages {
					b.Fatal(err, s.Err())
				}
			}
		})
	}
}
