package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rendered"
)

func fakeAirgap(t *testing.T, unmoved bool) string {
	t.Helper()
	r := rendered.Airgap{
		Format: rendered.AirgapFormat, Chart: "app", Version: "1.0.0",
		Overlay:    "# header\nimage:\n  # nginx -> sea.hub:5000/library/nginx\n  repository: sea.hub:5000/library/nginx\n",
		Keys:       []rendered.AirgapKey{{Path: "image.repository", Value: "sea.hub:5000/library/nginx", Images: []string{"nginx -> sea.hub:5000/library/nginx"}}},
		Candidates: 3, Renders: 5, Output: "out.tgz", Edited: []string{"app/values.yaml"},
	}
	if unmoved {
		r.Unmoved = []rendered.AirgapUnmoved{{Image: "busybox", Template: "app/templates/job.yaml", Line: 9, Message: "app/templates/job.yaml:9: Job job: spec.template.spec.containers[0].image: busybox (-> sea.hub:5000/library/busybox): hard-coded in the template: no value drives it"}}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestValuesCommand: rehost values forwards the chart and mapping flags to
// rehost-helm values, prints the overlay on stdout, the summary and the
// unmoved images on stderr, and exits 3 when an image is unmoved unless
// --allow-partial.
func TestValuesCommand(t *testing.T) {
	dir := chartDir(t)
	chart := filepath.Join(dir, "app")
	record := fakeHelper(t, fakeAirgap(t, false), 0)
	stdout, stderr, code := rehost(t, "", "values", chart, "--registry", "harbor.local/x", "--exclude", "quay.io", "--path-style", "nest", "-f", "u.yaml", "--set", "a=b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "# header\nimage:\n") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !hasFacts(stderr, "chart app: ", "1 key(s) set", "3 candidate value(s)", "5 renders") {
		t.Errorf("stderr:\n%s", stderr)
	}
	args, _ := recorded(t, record)
	want := []string{"values", `--rewrite-config={"registry":"harbor.local/x","pathStyle":"nest","exclude":["quay.io"]}`,
		"--values=u.yaml", "--set=a=b", "--release-name=release-name", "--namespace=default", "--kube-version=" + rendered.DefaultKubeVersion, "--include-crds=true", "--", chart}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("rehost-helm got\n%q\nwant\n%q", args, want)
	}

	// Values from standard input reach the helper.
	record = fakeHelper(t, fakeAirgap(t, false), 0)
	if _, stderr, code := rehost(t, "image: {tag: x}\n", "values", chart, "-f", "-"); code != 0 {
		t.Fatalf("-f -: exit %d: %s", code, stderr)
	}
	if _, stdin := recorded(t, record); stdin != "image: {tag: x}\n" {
		t.Errorf("-f -: rehost-helm read %q from standard input", stdin)
	}

	fakeHelper(t, fakeAirgap(t, true), 0)
	stdout, stderr, code = rehost(t, "", "values", chart)
	if code != 3 || !strings.HasPrefix(stdout, "# header") || !strings.Contains(stderr, "app/templates/job.yaml:9: Job job:") {
		t.Errorf("partial: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, stderr, code := rehost(t, "", "values", chart, "--allow-partial"); code != 0 {
		t.Errorf("--allow-partial: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "airgap.yaml")
	if stdout, stderr, code := rehost(t, "", "values", chart, "--allow-partial", "-o", out); code != 0 || stdout != "" {
		t.Errorf("-o: exit %d, stdout %q: %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "# header") {
		t.Errorf("-o file: %q, %v", b, err)
	}

	// Errors: not a chart, helper failure, another format.
	if _, stderr, code := rehost(t, "", "values", dir); code != 1 || !strings.Contains(stderr, "has no Chart.yaml") {
		t.Errorf("not a chart: exit %d: %s", code, stderr)
	}
	fakeHelper(t, "rehost-helm: boom at templates/x.yaml:3", 1)
	if _, stderr, code := rehost(t, "", "values", chart); code != 1 || !strings.Contains(stderr, "boom at templates/x.yaml:3") {
		t.Errorf("helper error: exit %d: %s", code, stderr)
	}
	fakeHelper(t, `{"format": 99}`, 0)
	if _, stderr, code := rehost(t, "", "values", chart); code != 1 || !strings.Contains(stderr, "format 99") {
		t.Errorf("format: exit %d: %s", code, stderr)
	}
}

func TestRelocateCommand(t *testing.T) {
	dir := chartDir(t)
	chart := filepath.Join(dir, "app")
	record := fakeHelper(t, fakeAirgap(t, false), 0)
	stdout, stderr, code := rehost(t, "", "relocate", chart, "--output", "out.tgz")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "out.tgz written (edited: app/values.yaml)") {
		t.Errorf("stderr: %s", stderr)
	}
	args, _ := recorded(t, record)
	if len(args) < 3 || args[0] != "relocate" || args[2] != "--output=out.tgz" {
		t.Errorf("rehost-helm got %q", args)
	}
	if _, stderr, code := rehost(t, "", "relocate", chart); code != 1 || !strings.Contains(stderr, "--output") {
		t.Errorf("no --output: exit %d: %s", code, stderr)
	}
	fakeHelper(t, fakeAirgap(t, true), 0)
	if _, _, code := rehost(t, "", "relocate", chart, "--output", "out.tgz"); code != 3 {
		t.Errorf("partial: exit %d, want 3", code)
	}
}

// TestValuesWarnings: Helm's warnings reach stderr, named by the chart.
func TestValuesWarnings(t *testing.T) {
	dir := chartDir(t)
	var r rendered.Airgap
	if err := json.Unmarshal([]byte(fakeAirgap(t, false)), &r); err != nil {
		t.Fatal(err)
	}
	r.Warnings = []string{"skipped value for resources.limits: Not a table."}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	fakeHelper(t, string(b), 0)
	_, stderr, code := rehost(t, "", "values", filepath.Join(dir, "app"))
	// The chart, the key and Helm's reason, as rehost-helm reported them.
	if code != 0 || !hasFacts(stderr, "rehost: warning: app: ", "resources.limits", "Not a table.") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
