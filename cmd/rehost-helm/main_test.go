package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/helm"
)

func chart(t *testing.T, kubeVersion string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	files := map[string]string{
		"Chart.yaml":                  "apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: \"" + kubeVersion + "\"\n",
		"templates/capabilities.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata:\n  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n",
	}
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
