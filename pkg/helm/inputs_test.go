package helm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/internal/safefile/specialtest"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// writeChart writes a chart of the files given into a new directory and
// returns its path.
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDefaultKubeVersionFollowsClientGo: DefaultKubeVersion is the
// Kubernetes version of the k8s.io/client-go Helm is built with (v0.N.x
// is Kubernetes 1.N), as this module's go.mod selects it (a test binary
// carries no dependency versions in its build information): when Helm is
// upgraded, the default follows.
func TestDefaultKubeVersionFollowsClientGo(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var clientGo string
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "k8s.io/client-go" {
			clientGo = f[1]
		}
	}
	parts := strings.Split(strings.TrimPrefix(clientGo, "v"), ".")
	if len(parts) < 2 || parts[0] != "0" {
		t.Fatalf("go.mod: k8s.io/client-go version %q: want v0.N.x", clientGo)
	}
	if want := "1." + parts[1] + "."; !strings.HasPrefix(DefaultKubeVersion, want) {
		t.Errorf("DefaultKubeVersion is %s, but Helm links k8s.io/client-go %s: Kubernetes %s0", DefaultKubeVersion, clientGo, want)
	}
}

// TestDefaultKubeVersion: a chart renders for DefaultKubeVersion when no
// version is given, so that a current chart's kubeVersion constraint
// accepts it; a chart that still rejects the version rendered for fails
// with ErrKubeVersion, naming its constraint and the version.
func TestDefaultKubeVersion(t *testing.T) {
	capabilities := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata:\n  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n"
	current := writeChart(t, map[string]string{
		"Chart.yaml":                  "apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: \">= 1.22.0-0\"\n",
		"templates/capabilities.yaml": capabilities,
	})
	c, err := Render(current, Options{})
	if err != nil {
		t.Fatalf("a chart for Kubernetes >= 1.22 with the default version: %v", err)
	}
	if want := `kubeVersion: "v` + DefaultKubeVersion + `"`; !strings.Contains(c.Manifests[0].Content, want) {
		t.Errorf("rendered for another version than %s:\n%s", DefaultKubeVersion, c.Manifests[0].Content)
	}
	old := writeChart(t, map[string]string{
		"Chart.yaml":                  "apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: \"< 1.25.0\"\n",
		"templates/capabilities.yaml": capabilities,
	})
	_, err = Render(old, Options{})
	if !errors.Is(err, ErrKubeVersion) || !strings.Contains(err.Error(), `"< 1.25.0"`) || !strings.Contains(err.Error(), "v"+DefaultKubeVersion) {
		t.Errorf("a chart for Kubernetes < 1.25: error %v", err)
	}
	if _, err := Render(old, Options{KubeVersion: "1.24.3"}); err != nil {
		t.Errorf("with the version it accepts: %v", err)
	}
}

// TestChartLinks: a symbolic link that leaves the chart directory (a
// files/ entry pointing at a secret elsewhere) is an error naming the link
// and its target, for rendering, values and relocation, and nothing is
// written; a link inside the chart is followed, with a warning.
func TestChartLinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"values.yaml":         "image: nginx:1.25\n",
		"files/readme.txt":    "hello",
		"templates/pod.yaml":  "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: {{ .Values.image }}\n",
		"templates/file.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata:\n  token: {{ .Files.Get \"files/token\" | quote }}\n",
	}

	leaving := writeChart(t, files)
	link := filepath.Join(leaving, "files", "token")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	named := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), link) && strings.Contains(err.Error(), secret) && !strings.Contains(err.Error(), "s3cr3t")
	}
	if _, err := Render(leaving, Options{}); !named(err) {
		t.Errorf("Render: error %v, want one naming %s and %s", err, link, secret)
	}
	if _, err := AirgapValues(leaving, Options{}, defaultConfig); !named(err) {
		t.Errorf("AirgapValues: error %v", err)
	}
	out := filepath.Join(t.TempDir(), "relocated")
	if _, err := Relocate(leaving, out, Options{}, defaultConfig); !named(err) {
		t.Errorf("Relocate: error %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("Relocate wrote %v", entries)
	}

	inside := writeChart(t, files)
	if err := os.Symlink("readme.txt", filepath.Join(inside, "files", "token")); err != nil {
		t.Fatal(err)
	}
	c, err := Render(inside, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Manifests[0].Content, `token: "hello"`) {
		t.Errorf("the link inside the chart is not followed:\n%s", c.Manifests[0].Content)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], filepath.Join(inside, "files", "token")) {
		t.Errorf("warnings %q, want one naming the link", c.Warnings)
	}
	o, err := AirgapValues(inside, Options{}, rewrite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 1 {
		t.Errorf("AirgapValues warnings %q, want the link's", o.Warnings)
	}
}

// TestRelocateIntoSpecialFile: a packaged chart relocated to a FIFO or a
// device node (a file named *.tgz that is not a regular file, as
// /dev/stdout is not) is written into, never replaced.
func TestRelocateIntoSpecialFile(t *testing.T) {
	for _, sp := range specialtest.Make(t, t.TempDir(), "chart.tgz") {
		t.Run(sp.Kind, func(t *testing.T) {
			if _, err := Relocate(chartPath("airgap-absent"), sp.Path, Options{}, defaultConfig); err != nil {
				t.Fatal(err)
			}
			sp.Check(t)
			if sp.Kind == "fifo" {
				ch, err := loader.LoadArchive(bytes.NewReader(sp.Received(t)))
				if err != nil || ch.Name() != "airgap-absent" {
					t.Errorf("the FIFO received no chart: %v", err)
				}
			}
		})
	}
}
