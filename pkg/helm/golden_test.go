package helm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output (review the diff by eye)")

const goldenDir = "../../testdata/golden/helm"

// TestGolden renders each test chart, rewrites it, and compares the stream
// (as `rehost rewrite CHART` prints it) with <chart>.yaml and the image
// report with <chart>.images.json under testdata/golden/helm. Regenerate
// them with `go test ./pkg/helm -run TestGolden -update`.
func TestGolden(t *testing.T) {
	for _, chart := range []string{"parent", "hooks", "withcrd"} {
		t.Run(chart, func(t *testing.T) {
			c := mustRender(t, chart, Options{KubeVersion: "1.33.0"})
			rw, err := manifest.New(defaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := c.Rewrite(&out, rw); err != nil {
				t.Fatal(err)
			}
			report, err := json.MarshalIndent(rw.Images(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(goldenDir, chart+".yaml"), out.Bytes())
			checkGolden(t, filepath.Join(goldenDir, chart+".images.json"), append(report, '\n'))

			// Rewriting the rewritten stream changes nothing.
			again, err := manifest.New(defaultConfig)
			if err != nil {
				t.Fatal(err)
			}
			twice, err := again.RewriteBytes(out.Bytes(), chart)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(twice, out.Bytes()) {
				t.Errorf("rewriting the output again changed it")
			}
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update and review the diff):\n%s", path, got)
	}
}
