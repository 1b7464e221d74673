package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const guessOperators = "../../testdata/golden/operators"

// cephCluster is rook's CephCluster, whose image rehost finds by its key's
// name only, with a placeholder it leaves as written.
const cephCluster = `apiVersion: ceph.rook.io/v1
kind: CephCluster
metadata: {name: rook-ceph, namespace: rook-ceph}
spec:
  cephVersion: {image: quay.io/ceph/ceph:v19.2.2}
  csi: {pluginImage: "<YOUR-IMAGE>"}
`

// TestGuessedImagesCLI: rehost images lists the images found by key name
// in custom resources, marked "guessed": true in -o json, with one summary
// warning on stderr and a warning per value left as written; rehost
// rewrite rewrites them; --no-guess-images and the config's noGuessImages
// leave them all out, silently.
func TestGuessedImagesCLI(t *testing.T) {
	out, errOut, code := rehost(t, cephCluster, "images", "-")
	if code != 0 || out != "quay.io/ceph/ceph:v19.2.2\n" {
		t.Fatalf("code %d, stdout %q, stderr %s", code, out, errOut)
	}
	wantErr := []string{
		`rehost: warning: <stdin>:6: CephCluster rook-ceph/rook-ceph: spec.csi.pluginImage: "<YOUR-IMAGE>" left as written: invalid image reference`,
		"rehost: warning: 1 image(s) in custom resources found by name: CephCluster spec.cephVersion.image; listed and rewritten like image fields (\"guessed\": true in rehost images -o json); --no-guess-images (noGuessImages: true) leaves them as written, imageFields makes them known",
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if len(lines) != len(wantErr) {
		t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(wantErr), errOut)
	}
	for i, w := range wantErr {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stderr line %d:\n%s\nwant it to start with:\n%s", i+1, lines[i], w)
		}
	}

	out, _, code = rehost(t, cephCluster, "images", "-o", "json", "-")
	var imgs []struct {
		Source      string
		Occurrences []map[string]any
	}
	if err := decodeImages(out, &imgs); err != nil || code != 0 || len(imgs) != 1 {
		t.Fatalf("code %d, %v: %s", code, err, out)
	}
	if o := imgs[0].Occurrences[0]; o["guessed"] != true || o["field"] != "spec.cephVersion.image" {
		t.Errorf("occurrence %v, want guessed spec.cephVersion.image", o)
	}

	out, _, code = rehost(t, cephCluster, "rewrite")
	if code != 0 || !strings.Contains(out, "cephVersion: {image: sea.hub:5000/ceph/ceph:v19.2.2}") || !strings.Contains(out, `pluginImage: "<YOUR-IMAGE>"`) {
		t.Errorf("rewrite: code %d:\n%s", code, out)
	}

	cfg := filepath.Join(t.TempDir(), "rehost.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nnoGuessImages: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--no-guess-images"}, {"--config", cfg}} {
		out, errOut, code = rehost(t, cephCluster, append([]string{"rewrite"}, args...)...)
		if code != 0 || out != cephCluster || errOut != "" {
			t.Errorf("rewrite %v: code %d, stderr %q:\n%s", args, code, errOut, out)
		}
		out, errOut, code = rehost(t, cephCluster, append([]string{"images"}, args...)...)
		if code != 0 || out != "" || errOut != "" {
			t.Errorf("images %v: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	// The flag overrides the config.
	if out, _, _ := rehost(t, cephCluster, "images", "--config", cfg, "--no-guess-images=false"); out != "quay.io/ceph/ceph:v19.2.2\n" {
		t.Errorf("--no-guess-images=false over noGuessImages: true: %q", out)
	}
}

// TestGuessedImagesOneWarning: however many inputs, one summary warning
// sums up the run, naming each kind and field once.
func TestGuessedImagesOneWarning(t *testing.T) {
	_, errOut, code := rehost(t, "", "images", filepath.Join(guessOperators, "percona-xtradb-cluster.yaml"), filepath.Join(guessOperators, "rook-ceph-cluster.yaml"), filepath.Join(guessOperators, "tidb-cluster.yaml"))
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "found by name"); n != 1 {
		t.Fatalf("%d summaries, want 1:\n%s", n, errOut)
	}
	if !strings.Contains(errOut, "rehost: warning: 14 image(s) in custom resources found by name: CephCluster spec.cephVersion.image, PerconaXtraDBCluster spec.backup.image,") ||
		!strings.Contains(errOut, "TidbMonitor spec.grafana.baseImage and 4 more;") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestGuessFlagInHelp: the commands that map images document the flag.
func TestGuessFlagInHelp(t *testing.T) {
	for _, cmd := range []string{"rewrite", "images", "mirror", "values", "relocate"} {
		out, _, code := rehost(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(out, "--no-guess-images") {
			t.Errorf("rehost %s --help: code %d, no --no-guess-images", cmd, code)
		}
	}
	for _, cmd := range []string{"rewrite", "images"} {
		if out, _, _ := rehost(t, "", cmd, "--help"); !strings.Contains(out, "image or *Image") {
			t.Errorf("rehost %s --help does not explain the images found by key name", cmd)
		}
	}
}
