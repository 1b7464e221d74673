package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/helm"
	"github.com/rehost/rehost/pkg/rendered"
)

func chart(t *testing.T, kubeVersion string) string {
	t.Helper()
	return writeChart(t, map[string]string{
		"Chart.yaml":                  "apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: \"" + kubeVersion + "\"\n",
		"templates/capabilities.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata:\n  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n",
	})
}

// writeChart writes the files of a chart named app and returns its
// directory.
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

// TestKubeVersion: rehost-helm renders for helm.DefaultKubeVersion, says
// so in --help, and a chart whose kubeVersion rejects the version
// rendered for fails with an error that names --kube-version.
func TestKubeVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{chart(t, ">= 1.22.0-0")}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `kubeVersion: \"v`+helm.DefaultKubeVersion+`\"`) {
		t.Errorf("not rendered for %s:\n%s", helm.DefaultKubeVersion, out.String())
	}

	for _, args := range [][]string{nil, {"values"}, {"relocate", "--output", filepath.Join(t.TempDir(), "out")}} {
		out.Reset()
		errOut.Reset()
		code := run(append(args, chart(t, "< 1.25.0")), &out, &errOut)
		if msg := errOut.String(); code != 1 || !strings.Contains(msg, `"< 1.25.0"`) || !strings.Contains(msg, "v"+helm.DefaultKubeVersion) || !strings.Contains(msg, "--kube-version") {
			t.Errorf("%q: exit %d, stderr %q", args, code, msg)
		}
		if code := run(append(args, "--kube-version", "1.24.0", chart(t, "< 1.25.0")), &out, &errOut); code != 0 {
			t.Errorf("%q --kube-version 1.24.0: exit %d: %s", args, code, errOut.String())
		}
	}

	out.Reset()
	if code := run([]string{"--help"}, &out, &out); code != 0 || !strings.Contains(out.String(), `--kube-version string`) || !strings.Contains(out.String(), `(default "`+helm.DefaultKubeVersion+`")`) {
		t.Errorf("--help: exit %d:\n%s", code, out.String())
	}
}

// TestDraftThenChart: asked for a draft (rendered.DraftEnv), rehost-helm
// writes it, then the chart without the contents the draft holds; put
// back, they give the chart it writes when not asked. A document the
// draft holds otherwise (a random function renders it differently each
// time) keeps its content.
func TestDraftThenChart(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"templates/pods.yaml": "{{- range $i := until 3 }}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p{{ $i }}}\nspec:\n  containers: [{name: c, image: \"nginx:1.{{ $i }}\"}]\n{{- end }}\n",
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n",
		"templates/rand.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: {{ randAlphaNum 16 | quote }}}\n",
	})
	var plain, out, errOut bytes.Buffer
	t.Setenv(rendered.DraftEnv, "")
	if code := run([]string{dir}, &plain, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	t.Setenv(rendered.DraftEnv, "1")
	if code := run([]string{dir}, &out, &errOut); code != 0 {
		t.Fatalf("with a draft: exit %d: %s", code, errOut.String())
	}
	var want, got rendered.Chart
	if err := json.Unmarshal(plain.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	d, n, err := rendered.ReadDraft(bytes.NewReader(out.Bytes()))
	if err != nil || len(d.Manifests) != 5 {
		t.Fatalf("draft: %v, %+v", err, d)
	}
	if err := json.Unmarshal(out.Bytes()[n:], &got); err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, m := range got.Manifests {
		if m.Drafted > 0 {
			left++
		}
		if m.Name == "app/templates/rand.yaml" && (m.Drafted != 0 || m.Content == "") {
			t.Errorf("a document of a random function left out: %+v", m)
		}
	}
	if left != 4 {
		t.Errorf("%d contents left out, want 4 (3 Pods, the ConfigMap):\n%s", left, out.String())
	}
	if err := got.Undraft(d); err != nil {
		t.Fatal(err)
	}
	for i := range got.Manifests {
		if got.Manifests[i].Name == "app/templates/rand.yaml" {
			got.Manifests[i].Content = want.Manifests[i].Content
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after Undraft:\n%+v\nwant:\n%+v", got, want)
	}
}
