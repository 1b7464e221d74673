package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageListIsToCache: the images output and the --image-list file hold
// the images to cache: not the excluded ones, not those in the target.
func TestImageListIsToCache(t *testing.T) {
	in := podNginx + "---\n" + strings.Replace(podNginx, "nginx:1.25", "quay.io/x/y:1", 1) + "---\n" + strings.Replace(podNginx, "nginx:1.25", "sea.hub:5000/z:1", 1)
	list := filepath.Join(t.TempDir(), "imageList")
	if _, errOut, code := rehost(t, in, "rewrite", "--exclude", "quay.io", "--image-list", list); code != 0 {
		t.Fatalf("rewrite: %d %s", code, errOut)
	}
	got, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	const want = "docker.io/library/nginx:1.25\n"
	if string(got) != want {
		t.Errorf("--image-list: %q, want %q", got, want)
	}
	if out, _, code := rehost(t, in, "images", "--exclude", "quay.io"); code != 0 || out != want {
		t.Errorf("images: %d %q, want %q", code, out, want)
	}
}
