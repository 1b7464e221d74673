package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestChartLocationsAgree: for a chart, rehost images, rehost rewrite and
// rehost rewrite --output-dir name the same template file and line, that
// of the value in the template's output, for an error in the third
// document of a multi-document template and for the -o json occurrences.
func TestChartLocationsAgree(t *testing.T) {
	chart := testChart("multidoc")
	const want = "multidoc/templates/app.yaml:27: Pod second: spec.containers[0].image: invalid image reference \"Nginx:1.25\""
	for _, args := range [][]string{
		{"images", chart},
		{"rewrite", chart},
		{"rewrite", chart, "--output-dir", t.TempDir()},
	} {
		_, stderr, err := runErr(nil, rehostBin(), args...)
		if err == nil || !strings.Contains(string(stderr), want) {
			t.Errorf("rehost %s: %v, stderr:\n%s\nwant an error containing %q", strings.Join(args, " "), err, stderr, want)
		}
	}

	out := run(t, nil, rehostBin(), "images", "-o", "json", chart, "--set", "image=nginx:1.25")
	var images []struct {
		Source      string
		Occurrences []struct {
			File string
			Line int
		}
	}
	if err := imagesOf(out, &images); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, img := range images {
		for _, o := range img.Occurrences {
			lines[img.Source] = o.File + ":" + itoa(o.Line)
		}
	}
	for src, at := range map[string]string{"docker.io/library/nginx:1.25": "multidoc/templates/app.yaml:27", "registry.k8s.io/pause:3.9": "multidoc/templates/app.yaml:12"} {
		if lines[src] != at {
			t.Errorf("%s at %q, want %q (all: %v)", src, lines[src], at, lines)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestChartWarningsOnce: Helm's warnings about a chart's values reach
// rehost's stderr once each, prefixed with the chart.
func TestChartWarningsOnce(t *testing.T) {
	for _, cmd := range []string{"images", "rewrite"} {
		_, stderr, err := runErr(nil, rehostBin(), cmd, testChart("warnings"), "--set", "resources.limits=big")
		if err != nil {
			t.Fatalf("rehost %s: %v\n%s", cmd, err, stderr)
		}
		const want = "rehost: warning: warnings: cannot overwrite table with non table for warnings.resources.limits"
		if n := strings.Count(string(stderr), want); n != 1 || strings.Count(string(stderr), "cannot overwrite") != 1 {
			t.Errorf("rehost %s stderr:\n%s\nwant %q once", cmd, stderr, want)
		}
	}
}
