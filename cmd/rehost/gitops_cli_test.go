package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const gitopsDir = "../../testdata/golden/gitops"

// TestRewriteGitOps: rehost rewrite writes what the library's golden files
// hold for the Flux and Argo CD fixtures, and one line on stderr counts
// the chart sources rewritten.
func TestRewriteGitOps(t *testing.T) {
	for _, name := range []string{"flux.yaml", "argocd.yaml", "flux.json"} {
		want, err := os.ReadFile(filepath.Join(gitopsDir, name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := rehost(t, "", "rewrite", filepath.Join(gitopsDir, name))
		if code != 0 || out != string(want) {
			t.Errorf("%s: code %d, stderr %s\nstdout:\n%s", name, code, errOut, out)
		}
		if !strings.Contains(errOut, "GitOps chart source(s) rewritten: the controllers pull chart NAME at VERSION from sea.hub:5000/charts/NAME:VERSION, where rehost mirror pushes the charts (noChartSources: true, --no-chart-sources, leaves the sources as written)\n") {
			t.Errorf("%s: stderr %q", name, errOut)
		}
	}
}

// TestRewriteGitOpsFlags: --charts-path and the config's chartsPath move
// the target, the flag winning; --no-chart-sources leaves every source as
// written; a bad --charts-path is an error naming the flag.
func TestRewriteGitOpsFlags(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(gitopsDir, "argocd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"config.yaml": "chartsPath: from/config\n"})
	cfg := filepath.Join(dir, "config.yaml")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--charts-path", "helm"}, "repoURL: sea.hub:5000/helm\n"},
		{[]string{"--config", cfg}, "repoURL: sea.hub:5000/from/config\n"},
		{[]string{"--config", cfg, "--charts-path", "helm", "--registry", "harbor.local/air"}, "repoURL: harbor.local/air/helm\n"},
	} {
		out, errOut, code := rehost(t, string(in), append([]string{"rewrite"}, tt.args...)...)
		if code != 0 || strings.Count(out, tt.want) != 4 {
			t.Errorf("%v: code %d, stderr %s, want 4 x %q in:\n%s", tt.args, code, errOut, tt.want, out)
		}
	}

	out, errOut, code := rehost(t, string(in), "rewrite", "--no-chart-sources")
	if code != 0 || out != string(in) || strings.Contains(errOut, "chart source") {
		t.Errorf("--no-chart-sources: code %d, stderr %q, output changed:\n%s", code, errOut, out)
	}

	for _, bad := range []struct{ arg, want string }{
		{"--charts-path=/charts", `--charts-path: "/charts": want a repository path without leading or trailing slash`},
		{"--charts-path=", "--charts-path: empty"},
		{"--charts-path=Charts", `--charts-path: "Charts": repository path component`},
	} {
		_, errOut, code := rehost(t, string(in), "rewrite", bad.arg)
		if code == 0 || !strings.Contains(errOut, bad.want) {
			t.Errorf("%s: code %d, stderr %q, want %q", bad.arg, code, errOut, bad.want)
		}
	}
}

// TestImagesGitOps: -o json lists the chart sources under "charts" beside
// the images; text output lists images only, with one line on stderr about
// the chart sources.
func TestImagesGitOps(t *testing.T) {
	path := filepath.Join(gitopsDir, "flux.yaml")
	out, errOut, code := rehost(t, "", "images", "-o", "json", path)
	var doc struct {
		Images []struct{ Source string }
		Charts []struct {
			Source, Target, Action string
			Count                  int
			Locations              []struct {
				Kind, Field, Chart, Version string
				Line                        int
				TypeAdded                   bool
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("code %d, %v, stderr %s: %s", code, err, errOut, out)
	}
	if len(doc.Images) != 1 || doc.Images[0].Source != "ghcr.io/stefanprodan/manifests/podinfo:6.5.4" {
		t.Errorf("images: %+v", doc.Images)
	}
	got := map[string]string{}
	for _, c := range doc.Charts {
		got[c.Source] = c.Target + " " + c.Action
	}
	want := map[string]string{
		"https://stefanprodan.github.io/podinfo":          "oci://sea.hub:5000/charts rewritten",
		"https://charts.bitnami.com/bitnami/":             "oci://sea.hub:5000/charts rewritten",
		"https://charts.jetstack.io":                      "oci://sea.hub:5000/charts rewritten",
		"oci://registry.example.com:8443/platform/charts": "oci://sea.hub:5000/charts rewritten",
		"oci://ghcr.io/stefanprodan/charts/podinfo":       "oci://sea.hub:5000/charts/podinfo rewritten",
		"oci://sea.hub:5000/charts":                       "oci://sea.hub:5000/charts in-target",
	}
	if len(got) != len(want) {
		t.Errorf("charts %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("chart source %s: %q, want %q", k, got[k], v)
		}
	}
	for _, c := range doc.Charts {
		if c.Source == "oci://ghcr.io/stefanprodan/charts/podinfo" {
			if c.Count != 2 || len(c.Locations) != 2 || c.Locations[0].Kind != "OCIRepository" || c.Locations[0].Chart != "podinfo" || c.Locations[0].Version != "6.5.4" || c.Locations[1].Field != "spec.chart.spec.url" {
				t.Errorf("podinfo chart: %+v", c)
			}
		}
	}

	out, errOut, code = rehost(t, "", "images", path)
	if code != 0 || out != "ghcr.io/stefanprodan/manifests/podinfo:6.5.4\n" || !hasFacts(errOut, "rehost: 6 GitOps chart source(s)", "not listed") {
		t.Errorf("text: code %d, stdout %q, stderr %q", code, out, errOut)
	}

	out, _, code = rehost(t, "", "images", "-o", "json", "--no-chart-sources", path)
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Charts) != 0 || len(doc.Images) != 2 {
		t.Errorf("--no-chart-sources: code %d, %v: %s", code, err, out)
	}
}
