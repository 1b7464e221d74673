package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

const gitopsGoldenDir = "../../testdata/golden/gitops"

// TestGoldenGitOps rewrites the Flux and Argo CD streams under
// testdata/golden/gitops with the config beside each (<name>.config.yaml)
// and compares the output with <file>.golden and the report (images, chart
// sources, warnings) with <file>.report.golden. For each stream it also
// proves that
//   - the output is the input byte for byte outside the reported changes:
//     with each rewritten URL put back, each spec.type set back and each
//     added type taken out, the input comes back;
//   - every Flux HelmRepository with an oci:// URL says type oci, and
//     every rewritten source points at the target's charts;
//   - rewriting the output again changes nothing;
//   - the fast path, a full parse and the parsed-node path (RewriteNode)
//     agree;
//   - with noChartSources no chart source changes.
func TestGoldenGitOps(t *testing.T) {
	goldenStreams(t, gitopsGoldenDir, 3, func(t *testing.T, name string, in []byte, cfg rewrite.Config) {
		var warns []string
		rw, err := New(cfg, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, name)
		if err != nil {
			t.Fatal(err)
		}
		report := struct {
			Images   []rewrite.Image `json:"images"`
			Charts   []ChartSource   `json:"charts"`
			Warnings []string        `json:"warnings"`
		}{rw.Images(), rw.Charts(), warns}
		js, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join(gitopsGoldenDir, name+".golden"), out)
		checkGolden(t, filepath.Join(gitopsGoldenDir, name+".report.golden"), append(js, '\n'))
		rewritten := 0
		for _, c := range rw.Charts() {
			if c.Action == rewrite.Rewritten {
				rewritten++
			}
		}
		if rewritten == 0 {
			t.Error("no chart source rewritten: a fixture that cannot fail")
		}
		assertOnlyChartsChanged(t, rw, in, out)
		assertChartsConsistent(t, rw.Mapper(), rw.Charts(), out)

		again, _ := New(cfg)
		if out2, err := again.RewriteBytes(out, name); err != nil || !bytes.Equal(out, out2) {
			t.Errorf("not idempotent (%v):\n%s", err, out2)
		}
		full, _ := New(cfg)
		full.fullParse = true
		if out3, err := full.RewriteBytes(in, name); err != nil || !bytes.Equal(out, out3) {
			t.Errorf("fast path and full parse differ (%v):\n%s", err, out3)
		}
		assertNodePathAgrees(t, cfg, in, out)

		off := cfg
		off.NoChartSources = true
		rwOff, _ := New(off)
		outOff, err := rwOff.RewriteBytes(in, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rwOff.Charts()) != 0 {
			t.Errorf("noChartSources: %d chart sources listed", len(rwOff.Charts()))
		}
		// Every source stays as written; a Flux OCIRepository of a
		// chart is an OCI artifact then, mapped as an image.
		offLines := yamlLines(outOff)
		for _, c := range rw.Charts() {
			for _, l := range c.Locations {
				line := offLines[l.Line-1]
				if l.Kind == "OCIRepository" {
					if strings.Contains(line, rw.Mapper().ChartsRepository()) {
						t.Errorf("noChartSources: line %d points at the charts: %q", l.Line, line)
					}
					continue
				}
				if !strings.Contains(line, c.Source) {
					t.Errorf("noChartSources: %s rewritten at line %d: %q", c.Source, l.Line, line)
				}
			}
		}
	})
}

// assertOnlyChartsChanged undoes every reported change in out: each
// rewritten URL (and image) put back at its line, each type set back to
// the value it replaced, each added type taken out; the input must come
// back, with every reported change used.
func assertOnlyChartsChanged(t testing.TB, rw *Rewriter, in, out []byte) {
	t.Helper()
	chartsChanged(t, rw, in, out, func(c ChartSource, _ ChartLocation) string { return c.Source }, true)
}

// chartsChanged is assertOnlyChartsChanged with undo giving the value each
// rewritten source had in in, and the rewritten images undone or not.
func chartsChanged(t testing.TB, rw *Rewriter, in, out []byte, undo func(ChartSource, ChartLocation) string, images bool) {
	t.Helper()
	type change struct{ from, to string }
	byLine := map[int][]change{}
	added := 0
	var was []string
	for _, c := range rw.Charts() {
		if c.Action != rewrite.Rewritten {
			continue
		}
		for _, l := range c.Locations {
			byLine[l.Line] = append(byLine[l.Line], change{c.Target, undo(c, l)})
			if l.TypeAdded {
				added++
			}
			if l.TypeWas != "" {
				was = append(was, strings.TrimSuffix(l.TypeWas, "(empty)"))
			}
		}
	}
	for _, img := range rw.Images() {
		if img.Action != rewrite.Rewritten || !images {
			continue
		}
		for _, l := range img.Occurrences {
			m, err := rw.Mapper().Map(l.Value)
			if err != nil {
				t.Fatal(err)
			}
			to := m.Target.String()
			if _, err := rewrite.ParseRef(l.Value); err == nil && m.Source.Tag == "" && m.Source.Digest == "" {
				to = m.Target.RepositoryName()
			}
			byLine[l.Line] = append(byLine[l.Line], change{to, l.Value})
		}
	}
	// Added types: a line of their own in a block map, else inside the
	// flow map on its line.
	outLines, inLines := yamlLines(out), yamlLines(in)
	j := 0
	for i := range inLines {
		undoLine := func(line string) string {
			for _, c := range byLine[i+1] {
				line = strings.Replace(line, c.from, c.to, 1)
			}
			return line
		}
		for j < len(outLines) && added > 0 && strings.TrimSpace(outLines[j]) == "type: oci" && undoLine(outLines[j]) != inLines[i] {
			added--
			j++
		}
		if j == len(outLines) {
			t.Fatalf("the output ends before input line %d:\n%s", i+1, out)
		}
		back := undoLine(outLines[j])
		if back != inLines[i] && added > 0 {
			for _, form := range []string{", type: oci", `, "type": "oci"`} {
				if b := strings.Replace(back, form, "", 1); b == inLines[i] {
					back, added = b, added-1
					break
				}
			}
		}
		if back != inLines[i] {
			for k, w := range was {
				for _, q := range []string{`":`, ":"} { // the key's end, JSON or YAML
					for _, vq := range []string{"", `"`, "'"} {
						if b := strings.Replace(back, "type"+q+" "+vq+"oci"+vq, "type"+q+" "+vq+w+vq, 1); b == inLines[i] {
							back = b
						}
					}
				}
				if back == inLines[i] {
					was = append(was[:k:k], was[k+1:]...)
				}
				if back == inLines[i] {
					break
				}
			}
		}
		if back != inLines[i] {
			t.Errorf("line %d changed beyond the reported changes:\n in: %q\nout: %q", i+1, inLines[i], outLines[j])
		}
		j++
	}
	if j != len(outLines) {
		t.Errorf("the output has %d more lines than the input and the added types", len(outLines)-j)
	}
	if added != 0 || len(was) != 0 {
		t.Errorf("reported changes not in the output: %d added types, types set from %q", added, was)
	}
}

// assertChartsConsistent checks the output as the controllers read it:
// every Flux HelmRepository with an oci:// URL says type oci, and every
// rewritten source's target is in the target's charts.
func assertChartsConsistent(t *testing.T, m *rewrite.Mapper, charts []ChartSource, out []byte) {
	t.Helper()
	repo := m.ChartsRepository()
	for _, c := range charts {
		if c.Action == rewrite.Rewritten && strings.TrimPrefix(c.Target, "oci://") != repo && !strings.HasPrefix(c.Target, "oci://"+repo+"/") {
			t.Errorf("%s rewritten to %s, outside %s", c.Source, c.Target, repo)
		}
	}
	var docs []any
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
	}
	var walk func(v any)
	walk = func(v any) {
		o, _ := v.(map[string]any)
		if items, ok := o["items"].([]any); ok {
			for _, it := range items {
				walk(it)
			}
		}
		if o["kind"] != "HelmRepository" {
			return
		}
		spec, _ := o["spec"].(map[string]any)
		if u, _ := spec["url"].(string); strings.HasPrefix(u, "oci://") && spec["type"] != "oci" {
			t.Errorf("HelmRepository %v: url %s with type %v, want oci", o["metadata"], u, spec["type"])
		}
	}
	for _, d := range docs {
		walk(d)
	}
}

// assertNodePathAgrees rewrites every document of in as a parsed node (the
// kio filter's path) and expects the values of the output's documents.
func assertNodePathAgrees(t *testing.T, cfg rewrite.Config, in, out []byte) {
	t.Helper()
	rw, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	decIn, decOut := yaml.NewDecoder(bytes.NewReader(in)), yaml.NewDecoder(bytes.NewReader(out))
	for i := 0; ; i++ {
		var doc, want yaml.Node
		errIn, errOut := decIn.Decode(&doc), decOut.Decode(&want)
		if errors.Is(errIn, io.EOF) && errors.Is(errOut, io.EOF) {
			return
		}
		if errIn != nil || errOut != nil {
			t.Fatalf("document %d: %v, %v", i, errIn, errOut)
		}
		if err := rw.RewriteNode(&doc, "in", true); err != nil {
			t.Fatal(err)
		}
		var got, wantV any
		if err := doc.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if err := want.Decode(&wantV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("document %d: RewriteNode gives\n%v\nthe stream\n%v", i, got, wantV)
		}
	}
}
