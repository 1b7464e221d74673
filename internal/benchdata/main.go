// Command benchdata writes rehost's benchmark corpus (see package corpus):
//
//	go run ./internal/benchdata -out testdata/bench [-size 15MB,250MB] [-seed 1]
//
// It writes one stream per size, stream-<size>.yaml, a kustomization.yaml
// that gives kustomize's images transformer rehost's mapping for the
// smallest stream, and onepod.yaml with onepod-kustomize/ for start-up
// measurements. Streams are written as they are generated: memory stays
// bounded for any size. 1 MB is 1,000,000 bytes.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rehost/rehost/internal/benchdata/corpus"
	"github.com/rehost/rehost/internal/safefile"
	"github.com/rehost/rehost/pkg/rewrite"
)

func main() {
	out := flag.String("out", "testdata/bench", "output `directory`")
	sizes := flag.String("size", "15MB,250MB", "comma-separated stream sizes (KB, MB, GB: powers of 1000)")
	seed := flag.Int64("seed", 1, "random seed")
	registry := flag.String("registry", rewrite.DefaultRegistry, "target registry of the kustomize mapping (rehost's --registry)")
	flag.Parse()
	if err := run(os.Stdout, *out, *sizes, *seed, *registry); err != nil {
		fmt.Fprintln(os.Stderr, "benchdata:", err)
		os.Exit(1)
	}
}

type spec struct {
	label string
	bytes int64
}

func parseSizes(s string) ([]spec, error) {
	var out []spec
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		up := strings.ToUpper(f)
		mult := int64(1)
		for _, u := range []struct {
			suffix string
			mult   int64
		}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
			if strings.HasSuffix(up, u.suffix) {
				up, mult = strings.TrimSuffix(up, u.suffix), u.mult
				break
			}
		}
		n, err := strconv.ParseFloat(up, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-size %q: want sizes like 15MB", f)
		}
		out = append(out, spec{label: strings.ToLower(f), bytes: int64(n * float64(mult))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].bytes < out[j].bytes })
	return out, nil
}

func run(log io.Writer, dir, sizes string, seed int64, registry string) error {
	specs, err := parseSizes(sizes)
	if err != nil {
		return err
	}
	m, err := rewrite.NewMapper(rewrite.Config{Registry: registry})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, sp := range specs {
		name := "stream-" + sp.label + ".yaml"
		start := time.Now()
		var st corpus.Stats
		err := writeFile(filepath.Join(dir, name), func(w io.Writer) error {
			var err error
			st, err = corpus.Generate(w, sp.bytes, seed)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "%s: %d documents, %.1f MB in %.1fs; ", name, st.Documents, float64(st.Bytes)/1e6, time.Since(start).Seconds())
		for _, c := range []corpus.Category{corpus.CRD, corpus.ConfigMap, corpus.Workload, corpus.RBAC, corpus.Service, corpus.Other} {
			fmt.Fprintf(log, "%s %.1f%%, ", c, 100*float64(st.Categories[c])/float64(st.Bytes))
		}
		fmt.Fprintf(log, "without \"image\" %.1f%%; %d image references\n", 100*float64(st.WithoutImage)/float64(st.Bytes), len(st.Images))
		if i == 0 {
			k, err := corpus.Kustomization([]string{name}, st.Images, m)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), k, 0o644); err != nil {
				return err
			}
		}
	}
	pod, images := corpus.OnePod()
	if err := os.WriteFile(filepath.Join(dir, "onepod.yaml"), pod, 0o644); err != nil {
		return err
	}
	kdir := filepath.Join(dir, "onepod-kustomize")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(kdir, "pod.yaml"), pod, 0o644); err != nil {
		return err
	}
	k, err := corpus.Kustomization([]string{"pod.yaml"}, images, m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(kdir, "kustomization.yaml"), k, 0o644)
}

// writeFile writes path atomically (safefile.Write).
func writeFile(path string, write func(io.Writer) error) error {
	return safefile.Write(safefile.Dir(filepath.Dir(path)), filepath.Base(path), safefile.Options{}, write)
}
