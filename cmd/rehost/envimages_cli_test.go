package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rendered"
)

const (
	kpConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kp-operator, namespace: monitoring}\ndata:\n  prometheus-config-reloader: bitnami/prometheus-operator:0.85.0\n"
	kpOperator  = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: kp-operator, namespace: monitoring}\nspec:\n  template:\n    spec:\n      containers:\n      - name: operator\n        image: quay.io/example/operator:1\n" +
		"        args: [\"--prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER)\"]\n        env:\n        - name: PROMETHEUS_CONFIG_RELOADER\n          valueFrom: {configMapKeyRef: {name: kp-operator, key: prometheus-config-reloader}}\n"
	kpRewritten = "prometheus-config-reloader: sea.hub:5000/bitnami/prometheus-operator:0.85.0\n"
)

// TestEnvImagesCLI: an image a ConfigMap passes to a container through
// $(VAR) is rewritten and listed, at the ConfigMap's file, line and key,
// whether the ConfigMap comes first in one stream or in a file of its own
// before the workload's (as kustomize and Helm write them).
func TestEnvImagesCLI(t *testing.T) {
	for _, in := range []string{kpConfigMap + "---\n" + kpOperator, kpOperator + "---\n" + kpConfigMap} {
		out, errOut, code := rehost(t, in, "rewrite")
		if code != 0 || !strings.Contains(out, kpRewritten) {
			t.Errorf("stdin: code %d, stderr %q, stdout:\n%s", code, errOut, out)
		}
	}

	dir := writeFiles(t, map[string]string{"01-configmap.yaml": kpConfigMap, "02-operator.yaml": kpOperator})
	out, errOut, code := rehost(t, "", "rewrite", dir)
	if code != 0 || !strings.Contains(out, kpRewritten) || errOut != "" {
		t.Errorf("directory: code %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	out, errOut, code = rehost(t, "", "images", "-o", "json", dir)
	var imgs []struct {
		Source      string
		Occurrences []struct {
			File, Kind, Field string
			Line              int
			Named             bool
		}
	}
	if err := decodeImages(out, &imgs); err != nil || code != 0 {
		t.Fatalf("images: code %d, %v, stderr %q", code, err, errOut)
	}
	found := false
	for _, im := range imgs {
		for _, o := range im.Occurrences {
			if im.Source == "docker.io/bitnami/prometheus-operator:0.85.0" && filepath.Base(o.File) == "01-configmap.yaml" && o.Line == 5 && o.Kind == "ConfigMap" && o.Field == "data.prometheus-config-reloader" && o.Named {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("images -o json: the reloader is not listed at 01-configmap.yaml:5:\n%s", out)
	}
	if _, errOut, code := rehost(t, "", "rewrite", "--in-place", dir); code != 0 {
		t.Fatalf("--in-place: code %d, stderr %q", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "01-configmap.yaml")); err != nil || !strings.Contains(string(b), kpRewritten) {
		t.Errorf("--in-place: %v\n%s", err, b)
	}
}

// TestEnvImagesChartOutputDir: with --output-dir, a chart is written one
// template at a time; the ConfigMap of one template still gets the image
// a container of a later template receives through $(VAR), as on
// standard output.
func TestEnvImagesChartOutputDir(t *testing.T) {
	c := fakeChart(t)
	c.Manifests = []rendered.Manifest{
		{Name: "app/templates/configmap.yaml", Content: strings.TrimSuffix(kpConfigMap, "\n")},
		{Name: "app/templates/operator.yaml", Content: strings.TrimSuffix(kpOperator, "\n")},
	}
	c.Images = nil
	fakeHelper(t, fakeChartJSON(t, c), 0)
	dir := chartDir(t)
	stdout, stderr, code := rehost(t, "", "rewrite", dir)
	if code != 0 || !strings.Contains(stdout, kpRewritten) {
		t.Fatalf("standard output: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	out := filepath.Join(t.TempDir(), "out")
	if stdout, stderr, code := rehost(t, "", "rewrite", dir, "--output-dir", out); code != 0 || stdout != "" {
		t.Fatalf("--output-dir: exit %d, stdout %q: %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "app/templates/configmap.yaml")); err != nil || !strings.Contains(string(b), kpRewritten) {
		t.Errorf("--output-dir: configmap.yaml not rewritten (%v):\n%s", err, b)
	}
}
