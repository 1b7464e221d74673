package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMayMissDependencies: rehost asks rehost-helm to fetch dependencies
// only for a chart that declares some (Chart.yaml, requirements.yaml of
// apiVersion v1, in a directory or a packaged chart) not seemingly in its
// charts/, and when it cannot tell.
func TestMayMissDependencies(t *testing.T) {
	charts := filepath.Join("..", "..", "testdata", "charts")
	tgz := func(files map[string]string) string {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for name, content := range files {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
			tw.Write([]byte(content))
		}
		tw.Close()
		gz.Close()
		p := filepath.Join(t.TempDir(), "c.tgz")
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	for _, tt := range []struct {
		name string
		path string
		want bool
	}{
		{"dependencies", filepath.Join(charts, "missingdep"), true},
		{"vendored dependencies", filepath.Join(charts, "parent"), false},
		{"vendored, packaged", func() string {
			d := filepath.Join(t.TempDir(), "c")
			os.MkdirAll(filepath.Join(d, "charts"), 0o755)
			os.WriteFile(filepath.Join(d, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: d\n  version: 1.0.0\n  repository: https://x\n"), 0o644)
			os.WriteFile(filepath.Join(d, "charts", "d-1.0.0.tgz"), []byte("x"), 0o644)
			return d
		}(), false},
		{"none", filepath.Join(charts, "hooks"), false},
		{"packaged, none", tgz(map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "c/values.yaml": "a: 1\n"}), false},
		{"packaged", tgz(map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: d\n  version: 1.0.0\n  repository: https://x\n"}), true},
		{"packaged, vendored", tgz(map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: d\n- name: e\n", "c/charts/d/Chart.yaml": "name: d\n", "c/charts/e-1.0.0.tgz": "x"}), false},
		{"packaged, one vendored", tgz(map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: d\n- name: e\n", "c/charts/d/Chart.yaml": "name: d\n"}), true},
		{"packaged, v1", tgz(map[string]string{"c/Chart.yaml": "apiVersion: v1\nname: c\nversion: 1.0.0\n", "c/requirements.yaml": "dependencies:\n- name: d\n"}), true},
		{"a subchart's are its own", tgz(map[string]string{"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "c/charts/s/Chart.yaml": "dependencies:\n- name: d\n"}), false},
		{"not gzip", writeFile(t, "c.tgz", "not a chart"), true},
		{"missing", filepath.Join(t.TempDir(), "nope"), true},
		{"bad YAML", writeFile(t, "Chart.yaml", ":\n\t- ["), false},
	} {
		path := tt.path
		if filepath.Base(path) == "Chart.yaml" {
			path = filepath.Dir(path)
			tt.want = true // cannot tell: rehost-helm says why
		}
		if got := mayMissDependencies(path); got != tt.want {
			t.Errorf("%s: %t, want %t", tt.name, got, tt.want)
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDependenciesHelper: a chart that declares dependencies is first
// given to rehost-helm dependencies, with the flags that bound its
// downloads (and mirror's source mirrors), whose error is rehost's; with
// --no-fetch-dependencies it is rendered as it is.
func TestDependenciesHelper(t *testing.T) {
	chart, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "charts", "missingdep"))
	msg := "chart " + chart + ": dependency redis version 18.x.x from https://charts.example.com/never-contacted: boom"
	record := fakeHelper(t, msg, 1)
	_, errOut, code := rehost(t, "", "images", chart, "--plain-http", "--max-chart-size", "1GiB")
	if code != 1 || errOut != "rehost: "+msg+"\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	args, _ := os.ReadFile(record)
	lines := strings.Split(string(args), "\n")
	if len(lines) < 8 || lines[0] != "dependencies" || !strings.HasPrefix(lines[1], "--dest=") || strings.Join(lines[2:8], " ") != "--max-chart-size=1073741824 --max-index-size=33554432 --stall-timeout=2m0s --plain-http -- "+chart {
		t.Errorf("rehost-helm arguments:\n%s", args)
	}

	record = fakeHelper(t, "boom", 1)
	rehost(t, "", "mirror", chart, "--registry", "127.0.0.1:1", "--source-mirror", "charts.example.com=mirror.corp/charts")
	if args, _ := os.ReadFile(record); !strings.HasPrefix(string(args), "dependencies\n") || !strings.Contains(string(args), "\n--source-mirror=charts.example.com=mirror.corp/charts\n") {
		t.Errorf("mirror: rehost-helm arguments:\n%s", args)
	}

	// The same mirrors for chart references.
	record = fakeHelper(t, "boom", 1)
	rehost(t, "", "mirror", "oci://charts.example.com/x/shop", "--version", "1.0.0", "--registry", "127.0.0.1:1", "--source-mirror", "charts.example.com=mirror.corp/charts")
	if args, _ := os.ReadFile(record); !strings.HasPrefix(string(args), "pull\n") || !strings.Contains(string(args), "\n--source-mirror=charts.example.com=mirror.corp/charts\n") {
		t.Errorf("mirror of a reference: rehost-helm arguments:\n%s", args)
	}

	record = fakeHelper(t, "missing chart dependencies", 1)
	rehost(t, "", "images", chart, "--no-fetch-dependencies")
	if args, _ := os.ReadFile(record); strings.HasPrefix(string(args), "dependencies\n") {
		t.Errorf("--no-fetch-dependencies: rehost-helm arguments:\n%s", args)
	}
}
