package manifest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"testing"

	"github.com/rehost/rehost/internal/benchdata/corpus"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// benchCorpus is the 15 MB stream written by `make bench-data`.
const benchCorpus = "../../testdata/bench/stream-15mb.yaml"

// loadBenchCorpus reads the benchmark corpus, or skips when it has not been
// generated; in CI (CI set, as .ci/run does, after generating it) a missing
// corpus fails: CI must not skip the 15 MB comparison silently.
func loadBenchCorpus(tb testing.TB) []byte {
	tb.Helper()
	data, err := os.ReadFile(benchCorpus)
	if errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%s is missing: CI must generate it (go run ./internal/benchdata -out testdata/bench, as .ci/run does)", benchCorpus)
		}
		tb.Skipf("%s is missing: run `make bench-data` to generate the benchmark corpus", benchCorpus)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// smallCorpus is a generated stream of about size bytes.
func smallCorpus(tb testing.TB, size, seed int64) []byte {
	tb.Helper()
	var b bytes.Buffer
	if _, err := corpus.Generate(&b, size, seed); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// benchRewrite measures one Rewriter per run over data, writing to w (nil:
// images only).
func benchRewrite(b *testing.B, data []byte, w io.Writer, fullParse bool) {
	benchRewriteWith(b, data, w, func(rw *Rewriter) { rw.fullParse = fullParse })
}

func benchRewriteWith(b *testing.B, data []byte, w io.Writer, set func(*Rewriter)) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rw, err := New(rewrite.Config{})
		if err != nil {
			b.Fatal(err)
		}
		set(rw)
		if err := rw.Rewrite(w, bytes.NewReader(data), "stream-15mb.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewrite is `rehost rewrite` on the 15 MB corpus, output discarded.
func BenchmarkRewrite(b *testing.B) {
	benchRewrite(b, loadBenchCorpus(b), io.Discard, false)
}

// BenchmarkRewriteUnverified is BenchmarkRewrite without the proof that
// each rewritten document parses back to the same tree but for its
// rewritten values: BenchmarkRewrite / BenchmarkRewriteUnverified is what
// the proof costs.
func BenchmarkRewriteUnverified(b *testing.B) {
	benchRewriteWith(b, loadBenchCorpus(b), io.Discard, func(rw *Rewriter) { rw.unverified = true })
}

// BenchmarkImages is `rehost images` on the 15 MB corpus: no output.
func BenchmarkImages(b *testing.B) {
	benchRewrite(b, loadBenchCorpus(b), nil, false)
}

// BenchmarkRewriteFullParse is BenchmarkRewrite with the fast path off:
// every document is parsed. It shows what the fast path saves.
func BenchmarkRewriteFullParse(b *testing.B) {
	benchRewrite(b, loadBenchCorpus(b), io.Discard, true)
}

// BenchmarkRewriteSmall needs no corpus: a 64 KB stream (a few dozen
// documents) generated in-process.
func BenchmarkRewriteSmall(b *testing.B) {
	benchRewrite(b, smallCorpus(b, 64e3, 1), io.Discard, false)
}

// BenchmarkYAMLDecode is the baseline: a bare yaml.v3 decode (the
// go.yaml.in/yaml/v3 kyaml uses) of every document of the 15 MB corpus into
// a yaml.Node, on one goroutine.
func BenchmarkYAMLDecode(b *testing.B) {
	data := loadBenchCorpus(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
