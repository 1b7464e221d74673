package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

const corpusDir = "../../testdata/embedded"

// Thresholds of TestEmbeddedCorpus. Precision: a reported reference that
// is not an image is noise in "rehost images --embedded" and, with
// rewriteEmbedded, a wrong rewrite, so at most 1 in 20 may be wrong.
// Recall: the corpus labels references the rules knowingly cannot reach
// (an image split into repository and tag keys); at least 9 in 10 found.
const (
	minPrecision = 0.95
	minRecall    = 0.90
)

// TestEmbeddedCorpus measures the precision and recall of the embedded
// reference finder on the hand-labelled corpus under testdata/embedded.
func TestEmbeddedCorpus(t *testing.T) {
	truth := readTruth(t)
	rw := mustNew(t, rewrite.Config{})
	for _, p := range inputFiles(t, corpusDir) {
		if _, err := rw.RewriteBytes(readFile(t, p), filepath.Base(p)); err != nil {
			t.Fatal(err)
		}
	}
	found := map[string]int{}
	for _, img := range rw.Embedded() {
		for _, l := range img.Occurrences {
			found[fmt.Sprintf("%s\t%d\t%s", l.File, l.Line, l.Value)]++
		}
	}
	tp, fp, fn, fps, fns := score(found, truth)
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	t.Logf("embedded references: %d labelled, %d reported, %d right: precision %.3f, recall %.3f", tp+fn, tp+fp, tp, precision, recall)
	for _, k := range fps {
		t.Logf("false positive: %s", k)
	}
	for _, k := range fns {
		t.Logf("missed: %s", k)
	}
	if tp+fn < 30 {
		t.Errorf("only %d labelled references: the measure means little", tp+fn)
	}
	if precision < minPrecision || recall < minRecall {
		t.Errorf("precision %.3f (min %.2f), recall %.3f (min %.2f)", precision, minPrecision, recall, minRecall)
	}
}

// TestEmbeddedCorpusRewrite rewrites the corpus with rewriteEmbedded: only
// the image references change, rewriting is idempotent, the fast path and
// a full parse agree, and every reported reference was rewritten. GitOps
// chart sources (flux.yaml's HelmRepository) are not image references:
// they are left out here and proven by TestGoldenGitOps and
// FuzzChartSources.
func TestEmbeddedCorpusRewrite(t *testing.T) {
	for _, p := range inputFiles(t, corpusDir) {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			in := readFile(t, p)
			cfg := rewrite.Config{RewriteEmbedded: true, NoChartSources: true}
			rw := mustNew(t, cfg)
			out, err := rw.RewriteBytes(in, name)
			if err != nil {
				t.Fatal(err)
			}
			assertOnlyImagesChanged(t, mapperTarget(t, rw.Mapper()), in, out, rw.Images(), name)
			if left := rw.EmbeddedLeftOut(); len(left) > 0 {
				t.Errorf("left out: %+v", left)
			}
			if out2 := mustRewrite(t, cfg, string(out)); !bytes.Equal(out, out2) {
				t.Errorf("not idempotent")
			}
			full := mustNew(t, cfg)
			full.fullParse = true
			out3, err := full.RewriteBytes(in, name)
			if err != nil || !bytes.Equal(out, out3) || len(full.Embedded()) != len(rw.Embedded()) {
				t.Errorf("fast path and full parse differ (%v)", err)
			}
		})
	}
}

type truthEntry struct {
	count int
	note  string
}

// readTruth reads truth.tsv: file, line, reference, note. Each entry must
// name a line of the file that holds the reference.
func readTruth(t *testing.T) map[string]truthEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "truth.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]truthEntry{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 3 {
			t.Fatalf("truth.tsv:%d: want file, line, reference, note", n)
		}
		ln, err := strconv.Atoi(cols[1])
		if err != nil {
			t.Fatalf("truth.tsv:%d: %v", n, err)
		}
		lines := strings.Split(string(readFile(t, filepath.Join(corpusDir, cols[0]))), "\n")
		if ln < 1 || ln > len(lines) || !strings.Contains(lines[ln-1], cols[2]) {
			t.Fatalf("truth.tsv:%d: %s line %d does not hold %s", n, cols[0], ln, cols[2])
		}
		k := strings.Join(cols[:3], "\t")
		e := out[k]
		e.count++
		if len(cols) > 3 {
			e.note = cols[3]
		}
		out[k] = e
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// inputFiles lists the manifest files of a directory: *.yaml, *.yml and
// *.json, but not goldens or configs.
func inputFiles(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasSuffix(n, ".config.yaml") {
			continue
		}
		switch filepath.Ext(n) {
		case ".yaml", ".yml", ".json":
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// score compares the references found (file, line, value, with their
// counts) with the labelled truth: true and false positives, misses, and
// the keys of the false positives and of the misses (with their notes),
// sorted.
func score(found map[string]int, truth map[string]truthEntry) (tp, fp, fn int, fps, fns []string) {
	for k, n := range found {
		m := min(n, truth[k].count)
		tp += m
		if n > m {
			fp += n - m
			fps = append(fps, k)
		}
	}
	for k, e := range truth {
		if miss := e.count - min(e.count, found[k]); miss > 0 {
			fn += miss
			fns = append(fns, k+"\t("+e.note+")")
		}
	}
	sort.Strings(fps)
	sort.Strings(fns)
	return tp, fp, fn, fps, fns
}

// Thresholds of TestEmbeddedCorpusNamed: what is listed and rewritten by
// default must be images (a wrong one is a wrong rewrite nobody asked
// for); recall is what the named rule alone reaches, the free-text
// references staying opt-in.
const (
	minNamedPrecision = 1.0
	minNamedRecall    = 0.80
)

// TestEmbeddedCorpusNamed measures the precision and recall of the default
// (the named embedded references: --*-image= flags, *_IMAGE env values,
// image-named parameters, listed and rewritten without any option) on the
// labelled corpus: a reference counts as found when it is listed, or
// rewritten and reported as having no tag.
func TestEmbeddedCorpusNamed(t *testing.T) {
	truth := readTruth(t)
	rw := mustNew(t, rewrite.Config{})
	for _, p := range inputFiles(t, corpusDir) {
		if _, err := rw.RewriteBytes(readFile(t, p), filepath.Base(p)); err != nil {
			t.Fatal(err)
		}
	}
	found := map[string]int{}
	for _, img := range rw.Embedded() {
		for _, l := range img.Occurrences {
			if l.Named {
				found[fmt.Sprintf("%s\t%d\t%s", l.File, l.Line, l.Value)]++
			}
		}
	}
	listed := 0
	for _, img := range rw.Images() {
		for _, l := range img.Occurrences {
			if l.Embedded {
				listed++
				if !l.Named {
					t.Errorf("listed by default but not named: %+v", l)
				}
			}
		}
	}
	tp, fp, fn, fps, fns := score(found, truth)
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	t.Logf("default (named) embedded references: %d labelled, %d named (%d listed, %d rewritten without a tag), %d right: precision %.3f, recall %.3f", tp+fn, tp+fp, listed, tp+fp-listed, tp, precision, recall)
	for _, k := range fps {
		t.Logf("false positive: %s", k)
	}
	for _, k := range fns {
		t.Logf("not by default: %s", k)
	}
	if precision < minNamedPrecision || recall < minNamedRecall {
		t.Errorf("precision %.3f (min %.2f), recall %.3f (min %.2f)", precision, minNamedPrecision, recall, minNamedRecall)
	}
}
