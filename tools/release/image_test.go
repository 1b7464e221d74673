package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func fakeBinaries(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		f := filepath.Join(dir, strings.ReplaceAll(p, "/", "_"))
		if err := os.WriteFile(f, []byte("binary for "+p), 0o755); err != nil {
			t.Fatal(err)
		}
		out[p] = f
	}
	return out
}

// TestImage: for each command with an image, an OCI index of one image per
// platform, each non-root with the command as entrypoint, labelled, its
// filesystem the base users and the binary; the same inputs give the same
// digest, another time or another command another.
func TestImage(t *testing.T) {
	bins := fakeBinaries(t)
	digests := map[string]string{}
	for _, command := range []string{"rehost-fn", "rehost"} {
		t.Run(command, func(t *testing.T) {
			d := testImage(t, command, bins)
			for c, other := range digests {
				if other == d {
					t.Errorf("the images of %s and %s have one digest %s", c, command, d)
				}
			}
			digests[command] = d
		})
	}
}

func testImage(t *testing.T, command string, bins map[string]string) string {
	s := &imageSpec{command: command, binaries: bins, version: "v0.1.0", revision: strings.Repeat("ab", 20), source: "https://github.com/rehost/rehost", created: time.Unix(1700000000, 0)}
	dir := filepath.Join(t.TempDir(), "layout")
	d, err := writeImage(s, dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := writeImage(s, filepath.Join(t.TempDir(), "layout"), "", false)
	if err != nil || again != d {
		t.Errorf("a second build: %v %v, want %v", again, err, d)
	}
	later := *s
	later.created = s.created.Add(time.Second)
	if other, _ := writeImage(&later, "", "", false); other == d {
		t.Error("another creation time gives the same digest")
	}

	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := l.ImageIndex(d)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex || im.Annotations["org.opencontainers.image.version"] != "v0.1.0" {
		t.Errorf("index: %s %v", im.MediaType, im.Annotations)
	}
	var platforms []string
	for _, desc := range im.Manifests {
		p := desc.Platform.OS + "/" + desc.Platform.Architecture
		platforms = append(platforms, p)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || !slices.Equal(cf.Config.Entrypoint, []string{"/usr/local/bin/" + command}) || cf.OS+"/"+cf.Architecture != p || !cf.Created.Time.Equal(s.created) {
			t.Errorf("%s: config %+v", p, cf)
		}
		for k, v := range map[string]string{"org.opencontainers.image.source": s.source, "org.opencontainers.image.revision": s.revision, "org.opencontainers.image.version": "v0.1.0", "org.opencontainers.image.created": "2023-11-14T22:13:20Z", "org.opencontainers.image.title": command} {
			if cf.Config.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q", p, k, cf.Config.Labels[k], v)
			}
		}
		rc := mutate.Extract(img)
		tr := tar.NewReader(rc)
		got := map[string]string{}
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(tr)
			got[h.Name] = string(b)
			if !h.ModTime.Equal(s.created) {
				t.Errorf("%s: %s has time %v", p, h.Name, h.ModTime)
			}
		}
		rc.Close()
		if cf.Config.Labels["org.opencontainers.image.description"] == "" {
			t.Errorf("%s: no description label", p)
		}
		if got["usr/local/bin/"+command] != "binary for "+p || !strings.Contains(got["etc/passwd"], "\nnobody:x:65534:65534:") || !strings.Contains(got["etc/passwd"], "\nnonroot:x:65532:65532:") {
			t.Errorf("%s: filesystem %q", p, got)
		}
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}
	return d.String()
}

func TestImageRefusesOtherOS(t *testing.T) {
	s := &imageSpec{command: "rehost", binaries: map[string]string{"windows/amd64": "x"}, version: "v0.1.0", revision: "r", created: time.Unix(1, 0)}
	if _, err := writeImage(s, "", "", false); err == nil || !strings.Contains(err.Error(), "want linux/ARCH") {
		t.Errorf("a windows binary: %v", err)
	}
}

func TestImageRefusesOtherCommand(t *testing.T) {
	s := &imageSpec{command: "rehost-helm", binaries: fakeBinaries(t), version: "v0.1.0", revision: "r", created: time.Unix(1, 0)}
	if _, err := writeImage(s, "", "", false); err == nil || !strings.Contains(err.Error(), `no image of command "rehost-helm": want one of rehost, rehost-fn`) {
		t.Errorf("rehost-helm: %v", err)
	}
	err := run([]string{"image", "-version", "v0.1.0", "-revision", "r", "-created", "1", "-binary", "linux/amd64=x"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "give -command") {
		t.Errorf("release image without -command: %v", err)
	}
}
