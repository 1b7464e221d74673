package manifest

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

const operatorsGoldenDir = "../../testdata/golden/operators"

// TestGoldenOperators rewrites the operator streams under
// testdata/golden/operators (shaped like the upstream manifests: tigera's
// custom-resources.yaml, an IstioOperator, Sail resources, a Kiali CR,
// rook's CephCluster, Percona's PerconaXtraDBCluster, a TidbCluster and a
// TidbMonitor) with
// the config beside each, and compares the output with <file>.golden and
// the report (images, registry settings, operators) with
// <file>.report.golden. It also proves that the output is the input
// byte for byte outside the reported fields: with the added lines taken
// out and each reported value put back, the input comes back; and that
// rewriting the output again changes nothing.
func TestGoldenOperators(t *testing.T) {
	goldenStreams(t, operatorsGoldenDir, 5, func(t *testing.T, name string, in []byte, cfg rewrite.Config) {
		var warns []string
		rw, err := New(cfg, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rw.RewriteBytes(in, name)
		if err != nil {
			t.Fatal(err)
		}
		rw.WarnGuessed() // the run's summary of the images found by key name
		report := struct {
			Images    []rewrite.Image `json:"images"`
			Settings  []Setting       `json:"settings"`
			Operators []OperatorNote  `json:"operators"`
			Warnings  []string        `json:"warnings"`
		}{rw.Images(), rw.Settings(), rw.Operators(), warns}
		js, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join(operatorsGoldenDir, name+".golden"), out)
		checkGolden(t, filepath.Join(operatorsGoldenDir, name+".report.golden"), append(js, '\n'))
		if len(rw.Settings())+len(rw.Images()) == 0 {
			t.Error("nothing found: a fixture that cannot fail")
		}
		assertOnlyReportedChanged(t, rw, in, out)

		full, _ := New(cfg)
		full.fullParse = true
		if out3, err := full.RewriteBytes(in, name); err != nil || !bytes.Equal(out, out3) {
			t.Errorf("fast path and full parse differ (%v):\n%s", err, out3)
		}

		again, _ := New(cfg)
		if out2, err := again.RewriteBytes(out, name); err != nil || !bytes.Equal(out, out2) {
			t.Errorf("not idempotent (%v):\n%s", err, out2)
		}
	})
}

// assertOnlyReportedChanged takes the added settings' lines out of out,
// puts each reported value (rewritten settings, image fields) back at its
// line, and expects in.
func assertOnlyReportedChanged(t *testing.T, rw *Rewriter, in, out []byte) {
	t.Helper()
	type change struct{ from, to string }
	byLine := map[int][]change{} // input line -> new value, old value
	added := map[string]int{}    // added line, trimmed -> how many
	for _, s := range rw.Settings() {
		switch {
		case s.Added && s.Source == "":
			added[strings.TrimSpace(strings.Join(addedKeys(s.Location.Field), ""))+" "+s.Target]++
		case s.Action == rewrite.Rewritten || s.Added:
			byLine[s.Location.Line] = append(byLine[s.Location.Line], change{s.Target, s.Source})
		}
	}
	for _, img := range rw.Images() {
		if img.Action != rewrite.Rewritten {
			continue
		}
		for _, l := range img.Occurrences {
			m, err := rw.Mapper().Map(l.Value)
			if err != nil {
				t.Fatal(err)
			}
			// Value is what the field holds: the whole reference, or the
			// repository part of a split one.
			to := m.Target.String()
			if _, err := rewrite.ParseRef(l.Value); err == nil && m.Source.Tag == "" && m.Source.Digest == "" {
				to = m.Target.RepositoryName()
			}
			byLine[l.Line] = append(byLine[l.Line], change{to, l.Value})
		}
	}
	var kept []string
	for _, line := range yamlLines(out) {
		k := strings.TrimSpace(line)
		if added[k] > 0 {
			added[k]--
			continue
		}
		kept = append(kept, line)
	}
	for k, n := range added {
		if n > 0 {
			t.Errorf("added line %q not in the output", k)
		}
	}
	inLines := yamlLines(in)
	if len(kept) != len(inLines) {
		t.Fatalf("the output has %d lines besides the added ones, the input %d:\n%s", len(kept), len(inLines), out)
	}
	for i := range inLines {
		back := kept[i]
		for _, c := range byLine[i+1] {
			back = strings.Replace(back, c.from, c.to, 1)
		}
		if back != inLines[i] {
			t.Errorf("line %d changed beyond the reported fields:\n in: %q\nout: %q", i+1, inLines[i], kept[i])
		}
	}
}

// addedKeys is the added line's key: "registry:" for spec.registry.
func addedKeys(field string) []string {
	return []string{field[strings.LastIndexByte(field, '.')+1:] + ":"}
}
