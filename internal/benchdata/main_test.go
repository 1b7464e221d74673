package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []spec
		err  bool
	}{
		{"15MB,250MB", []spec{{"15mb", 15e6}, {"250mb", 250e6}}, false},
		{"250mb, 15MB", []spec{{"15mb", 15e6}, {"250mb", 250e6}}, false},
		{"1.5GB", []spec{{"1.5gb", 1.5e9}}, false},
		{"64KB", []spec{{"64kb", 64e3}}, false},
		{"1000", []spec{{"1000", 1000}}, false},
		{"MB", nil, true},
		{"-1MB", nil, true},
		{"15MB,", nil, true},
	}
	for _, tt := range tests {
		got, err := parseSizes(tt.in)
		if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	if err := run(&log, dir, "2MB,1MB", 1, "sea.hub:5000"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"stream-1mb.yaml", "stream-2mb.yaml", "kustomization.yaml", "onepod.yaml", "onepod-kustomize/kustomization.yaml", "onepod-kustomize/pod.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(k), "- stream-1mb.yaml\n") || !strings.Contains(string(k), "newName: sea.hub:5000/") {
		t.Errorf("kustomization.yaml:\n%s", k)
	}
	if !strings.Contains(log.String(), "stream-2mb.yaml: ") {
		t.Errorf("log: %s", log.String())
	}
}
