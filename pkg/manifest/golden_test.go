package manifest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/internal/textpos"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output (review the diff by eye)")

const goldenDir = "../../testdata/golden/rewrite"

// TestGolden rewrites every stream under testdata/golden/rewrite with the
// config beside it (<name>.config.yaml, if any) and compares the output and
// the image report with <file>.golden and <file>.images.golden. For each
// stream it also proves that
//   - only image values changed, line by line, and each into its mapping;
//   - rewriting the output again changes nothing (idempotency);
//   - parsing every document gives the same output as the fast path.
func TestGolden(t *testing.T) {
	goldenStreams(t, goldenDir, 5, func(t *testing.T, name string, in []byte, cfg rewrite.Config) {
		rw, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, name)
		if err != nil {
			t.Fatal(err)
		}
		report, err := json.MarshalIndent(rw.Images(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join(goldenDir, name+".golden"), out)
		checkGolden(t, filepath.Join(goldenDir, name+".images.golden"), append(report, '\n'))
		// The embedded references found, rewritten or not.
		if emb := rw.Embedded(); len(emb) > 0 || fileExists(filepath.Join(goldenDir, name+".embedded.golden")) {
			report, err := json.MarshalIndent(emb, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(goldenDir, name+".embedded.golden"), append(report, '\n'))
		}
		assertOnlyImagesChanged(t, mapperTarget(t, rw.Mapper()), in, out, rewrittenImages(rw), name)
		// Every resolved value, against the reference model of the
		// mapping where it covers the config (no exclusions).
		if model, ok := newRefModel(cfg); ok && !assertValuesPreserved(t, model, in, out, rewrittenImages(rw), name) {
			t.Errorf("%s does not parse as a whole: the value oracle checked nothing", name)
		}

		again, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out2, err := again.RewriteBytes(out, name)
		if err != nil {
			t.Fatalf("rewriting the output again: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Errorf("not idempotent: second rewrite changed the output:\n%s", out2)
		}

		full, _ := New(cfg)
		full.fullParse = true
		out3, err := full.RewriteBytes(in, name)
		if err != nil {
			t.Fatalf("full parse: %v", err)
		}
		if !bytes.Equal(out, out3) {
			t.Errorf("fast path and full parse differ:\nfast:\n%s\nfull:\n%s", out, out3)
		}
	})
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update and review the diff):\ngot:\n%s", path, got)
	}
}

// mapperTarget is the target of a reference by m, the mapping under test:
// for callers whose expectation is pinned elsewhere (golden files).
func mapperTarget(t *testing.T, m *rewrite.Mapper) func(string) string {
	return func(v string) string {
		mp, err := m.Map(v)
		if err != nil {
			t.Fatal(err)
		}
		return mp.Target.String()
	}
}

// assertOnlyImagesChanged checks that out is in with exactly the rewritten
// image values replaced by their targets: the same lines, and each line that
// differs becomes the output line when the values at its occurrences'
// columns are replaced by target(value) (by the registry part of the
// target for the registry part of a split reference: see registryParts).
func assertOnlyImagesChanged(t *testing.T, target func(string) string, in, out []byte, images []rewrite.Image, file string) {
	t.Helper()
	parts := registryParts(in, images, file)
	lt := func(l rewrite.Location) string {
		if repo, ok := parts[l]; ok {
			return registryTarget(target, l.Value, repo)
		}
		return target(l.Value)
	}
	byLine := map[int][]rewrite.Location{}
	for _, img := range images {
		if img.Action != rewrite.Rewritten {
			continue
		}
		for _, l := range img.Occurrences {
			if l.File == file {
				byLine[l.Line] = append(byLine[l.Line], l)
			}
		}
	}
	inLines, outLines := yamlLines(in), yamlLines(out)
	if len(inLines) != len(outLines) {
		t.Fatalf("line count changed: %d -> %d", len(inLines), len(outLines))
	}
	// A value may sit lines below its node's position (after a tag or an
	// anchor on a line of its own, or a block scalar's header): occurrences
	// not found on their own line are carried to the next line that differs.
	var carry []rewrite.Location
	for i := range inLines {
		locs := byLine[i+1]
		if inLines[i] == outLines[i] {
			carry = append(carry, locs...)
			continue
		}
		want, ok := replaceAtColumns(lt, inLines[i], locs)
		if !ok {
			want = inLines[i]
			for _, l := range append(carry, locs...) {
				want = strings.Replace(want, l.Value, lt(l), 1)
			}
			carry = nil
		}
		if want != outLines[i] && !(strings.Contains(inLines[i], "*") && want == unquoteTargets(lt, outLines[i], locs)) {
			t.Errorf("line %d changed beyond its image values:\n in: %q\nout: %q\nwant %q", i+1, inLines[i], outLines[i], want)
		}
	}
}

// unquoteTargets removes the quotes around the targets of locs in line: an
// alias written out with a new value takes its anchor's quoting.
func unquoteTargets(target func(rewrite.Location) string, line string, locs []rewrite.Location) string {
	for _, l := range locs {
		tg := target(l)
		line = strings.NewReplacer("'"+tg+"'", tg, `"`+tg+`"`, tg).Replace(line)
	}
	return line
}

// replaceAtColumns replaces, right to left, the value of each location on
// the line at its column (after its tag, anchor and opening quote). Each
// distinct column is replaced once (an anchor reached by several paths).
func replaceAtColumns(target func(rewrite.Location) string, line string, locs []rewrite.Location) (string, bool) {
	if len(locs) == 0 {
		return line, false
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i].Column > locs[j].Column })
	runes := []rune(line)
	if strings.HasPrefix(line, "\ufeff") {
		runes = runes[1:]
	}
	done := map[int]bool{}
	for _, l := range locs {
		if done[l.Column] {
			continue
		}
		done[l.Column] = true
		start := l.Column - 1
		if start > len(runes) {
			return line, false
		}
		rest := string(runes[start:])
		for strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "&") {
			_, after, _ := strings.Cut(rest, " ")
			rest = strings.TrimLeft(after, " ")
		}
		if strings.HasPrefix(rest, "*") {
			// An alias at the image field, written out with the new value
			// (quoted as its anchor's value, which unquoteTargets undoes).
			end := strings.IndexAny(rest, " \t,]}\r\n")
			if end < 0 {
				end = len(rest)
			}
			prefix := string(runes[:len(runes)-len([]rune(rest))])
			runes = []rune(prefix + target(l) + rest[end:])
			continue
		}
		if strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, "'") {
			rest = rest[1:] // the opening quote
		}
		if !strings.HasPrefix(rest, l.Value) {
			return line, false
		}
		prefix := string(runes[:len(runes)-len([]rune(rest))])
		runes = []rune(prefix + target(l) + rest[len(l.Value):])
	}
	out := string(runes)
	if strings.HasPrefix(line, "\ufeff") {
		out = "\ufeff" + out
	}
	return out, true
}

// registryParts finds the occurrences of images whose value is the
// registry part of a split reference: their field ends in "registry" and
// the map holding it has a string repository, which is returned. Such a
// value becomes the target's repository name without the repository part
// (registryTarget). Occurrences are placed in documents by line.
func registryParts(in []byte, images []rewrite.Image, file string) map[rewrite.Location]string {
	docs, err := decodeAll(in)
	if err != nil {
		return nil
	}
	starts := make([]int, len(docs))
	byPath := make([]map[string]string, len(docs))
	for i, d := range docs {
		starts[i] = docStart(d)
		budget := maxOracleScalars
		ss, _ := walkScalars(d, &budget)
		byPath[i] = map[string]string{}
		for _, x := range ss {
			if x.node.Kind == yaml.ScalarNode {
				byPath[i][x.path] = x.node.Value
			}
		}
	}
	out := map[rewrite.Location]string{}
	for _, img := range images {
		for _, l := range img.Occurrences {
			prefix, ok := strings.CutSuffix(l.Field, "registry")
			if l.File != file || !ok || prefix != "" && !strings.HasSuffix(prefix, ".") {
				continue
			}
			d := sort.Search(len(starts), func(i int) bool { return starts[i] > l.Line }) - 1
			if d < 0 {
				continue
			}
			if repo, ok := byPath[d][prefix+"repository"]; ok && byPath[d][l.Field] == l.Value {
				out[l] = repo
			}
		}
	}
	return out
}

// registryTarget is what the registry part reg of a split reference with
// the repository repo becomes: the target's repository name without the
// repository part.
func registryTarget(target func(string) string, reg, repo string) string {
	return strings.TrimSuffix(target(strings.TrimSuffix(reg, "/")+"/"+repo), "/"+repo)
}

// yamlLines splits data into lines, line breaks included, as yaml.v3 counts
// them ("\r\n", "\r", "\n", NEL, LS, PS).
func yamlLines(data []byte) []string {
	starts := textpos.LineStarts(data)
	lines := make([]string, len(starts))
	for i, s := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		lines[i] = string(data[s:end])
	}
	return lines
}

// rewrittenImages are the images whose occurrences a rewrite may change:
// the listed ones, the split references whose tag the operator picks, and
// the named embedded references, which are rewritten by default also when
// they are not listed (no tag: reported instead).
func rewrittenImages(rw *Rewriter) []rewrite.Image {
	rw.mu.Lock()
	unlisted := rw.unlisted.Images()
	rw.mu.Unlock()
	out := append(rw.Images(), unlisted...)
	// Named references are listed in Images already: each place once.
	listed := map[rewrite.Location]bool{}
	for _, img := range out {
		for _, l := range img.Occurrences {
			listed[l] = true
		}
	}
	for _, img := range rw.Embedded() {
		var named []rewrite.Location
		for _, l := range img.Occurrences {
			if l.Named && !listed[l] {
				named = append(named, l)
			}
		}
		if len(named) > 0 && rw.namedEmbedded {
			img.Occurrences = named
			out = append(out, img)
		}
	}
	return out
}

// goldenStreams runs f, as a subtest, on every input stream under dir (the
// files that are neither *.golden nor *.config.yaml) with the config
// beside it, and fails when dir holds fewer than minimum streams.
func goldenStreams(t *testing.T, dir string, minimum int, f func(t *testing.T, name string, in []byte, cfg rewrite.Config)) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".golden") || strings.HasSuffix(name, ".config.yaml") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			f(t, name, in, configBeside(t, dir, name))
		})
	}
	if n < minimum {
		t.Fatalf("found only %d inputs in %s", n, dir)
	}
}

// configBeside loads <name without extension>.config.yaml in dir, if any.
func configBeside(t *testing.T, dir, name string) rewrite.Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name))+".config.yaml"))
	if os.IsNotExist(err) {
		return rewrite.Config{}
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rewrite.LoadConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
