package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReproducible rebuilds targets of the release (-repro, OS/ARCH/COMMAND)
// with make release-artifacts, from this checkout, with an empty build cache,
// and compares byte for byte: the archives, their SBOMs and the plugin
// tarball. It then builds each image (rehost-fn, rehost) again from the
// binaries in the release's archives and compares its digest. The release must have
// been built from this checkout's commit.
func TestReproducible(t *testing.T) {
	r := needDist(t)
	head, _ := headCommit(t)
	var want []string
	for _, target := range strings.Fields(*reproFlag) {
		i := strings.LastIndex(target, "/")
		if i < 0 {
			t.Fatalf("-repro %q: want OS/ARCH/COMMAND", target)
		}
		a, ok := r.find(target[i+1:], target[:i])
		if !ok {
			t.Fatalf("-repro %s: the release has no such archive", target)
		}
		data, _, _ := extract(t, r, a)
		if !bytes.Contains(data, []byte(head)) {
			t.Skipf("%s was not built from this checkout's commit %s: nothing to rebuild it from", a.name, head)
		}
		want = append(want, a.name, a.name+".sbom.cdx.json")
	}
	want = append(want, r.plugin)

	out := t.TempDir()
	start := time.Now()
	cmd := exec.Command(needTool(t, "make"), "--no-print-directory", "release-artifacts",
		"DIST="+out, "TARGETS="+*reproFlag, "VERSION="+r.version)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "GOCACHE="+t.TempDir())
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release-artifacts TARGETS=%q with an empty GOCACHE: %v\n%s", *reproFlag, err, log)
	}
	t.Logf("rebuilt %s with an empty build cache in %.0fs", *reproFlag, time.Since(start).Seconds())
	for _, n := range want {
		a, err := os.ReadFile(r.path(n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, n))
		if err != nil {
			t.Errorf("the second build made no %s: %v", n, err)
			continue
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the second build differs (%d and %d bytes)", n, len(a), len(b))
		}
	}

	// The images, from the release's own binaries, with their labels'
	// revision and time.
	tool := filepath.Join(t.TempDir(), "release")
	build := exec.Command("go", "build", "-o", tool, ".")
	build.Dir = filepath.Join(repoRoot(), "tools", "release")
	build.Env = append(os.Environ(), "GOWORK=off")
	if log, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tools/release: %v\n%s", err, log)
	}
	for _, command := range images {
		idx := layoutIndex(t, r, command)
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		created, err := time.Parse(time.RFC3339, im.Annotations["org.opencontainers.image.created"])
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"image", "-command", command, "-version", r.version, "-revision", im.Annotations["org.opencontainers.image.revision"],
			"-created", strconv.FormatInt(created.Unix(), 10), "-source", im.Annotations["org.opencontainers.image.source"], "-layout", filepath.Join(t.TempDir(), "image")}
		for _, desc := range im.Manifests {
			p := desc.Platform.OS + "/" + desc.Platform.Architecture
			a, ok := r.find(command, p)
			if !ok {
				t.Fatalf("no %s archive for %s, which its image has", command, p)
			}
			data, _, _ := extract(t, r, a)
			f := filepath.Join(t.TempDir(), command)
			if err := os.WriteFile(f, data, 0o755); err != nil {
				t.Fatal(err)
			}
			args = append(args, "-binary", p+"="+f)
		}
		got := run(t, nil, nil, tool, args...)
		d, _ := idx.Digest()
		if !strings.HasSuffix(strings.TrimSpace(string(got)), "@"+d.String()) {
			t.Errorf("the %s image built again from the release's binaries is %s, the release's is %s", command, got, d)
		}
	}
}
