package manifest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
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
	entries, err := os.ReadDir(goldenDir)
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
			in, err := os.ReadFile(filepath.Join(goldenDir, name))
			if err != nil {
				t.Fatal(err)
			}
			cfg := goldenConfig(t, name)
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
			assertOnlyImagesChanged(t, rw.Mapper(), in, out, rw.Images(), name)

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
	if n < 5 {
		t.Fatalf("found only %d golden inputs in %s", n, goldenDir)
	}
}

func goldenConfig(t *testing.T, name string) rewrite.Config {
	t.Helper()
	base := strings.TrimSuffix(name, filepath.Ext(name))
	data, err := os.ReadFile(filepath.Join(goldenDir, base+".config.yaml"))
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

// assertOnlyImagesChanged checks that out is in with exactly the rewritten
// image values replaced by their targets: same lines, and each line that
// differs becomes, when its occurrences' values are replaced by their
// mapped targets, the output line.
func assertOnlyImagesChanged(t *testing.T, m *rewrite.Mapper, in, out []byte, images []rewrite.Image, file string) {
	t.Helper()
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
	inLines := strings.SplitAfter(string(in), "\n")
	outLines := strings.SplitAfter(string(out), "\n")
	if len(inLines) != len(outLines) {
		t.Fatalf("line count changed: %d -> %d", len(inLines), len(outLines))
	}
	for i := range inLines {
		if inLines[i] == outLines[i] {
			continue
		}
		locs := byLine[i+1]
		if len(locs) == 0 {
			// A block scalar's value sits on the line after its node's line.
			locs = byLine[i]
		}
		// Several fields may share a value (an anchor): replace each
		// distinct value once, everywhere on the line.
		want := inLines[i]
		done := map[string]bool{}
		for _, l := range locs {
			if done[l.Value] {
				continue
			}
			done[l.Value] = true
			mp, err := m.Map(l.Value)
			if err != nil {
				t.Fatal(err)
			}
			want = strings.ReplaceAll(want, l.Value, mp.Target.String())
		}
		if want != outLines[i] {
			t.Errorf("line %d changed beyond its image values:\n in: %q\nout: %q\nwant %q", i+1, inLines[i], outLines[i], want)
		}
	}
}
