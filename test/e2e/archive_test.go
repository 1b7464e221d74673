package e2e

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// The registry Pods pull in these tests: it does not resolve on the test
// machine, so every push must go to --push-registry.
const seaHub = "sea.hub:5000"

// archiveParts lists the parts of an archive, in order.
func archiveParts(t *testing.T, path string) []string {
	t.Helper()
	parts, err := filepath.Glob(path + ".part[0-9][0-9][0-9]")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(parts)
	return parts
}

// concat is the concatenation of files.
func concat(t *testing.T, paths ...string) []byte {
	t.Helper()
	var out []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// treeFiles is every regular file under dir with its content.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readLayout reads an OCI layout with go-containerregistry's layout
// package, as crane and other OCI-layout readers do: every manifest of
// index.json and of its indexes, with its config and layers, whose sizes
// are those declared. It returns how many manifests it read.
func readLayout(t *testing.T, dir string) int {
	t.Helper()
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	n := 0
	var walk func(ii v1.ImageIndex)
	walk = func(ii v1.ImageIndex) {
		im, err := ii.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range im.Manifests {
			n++
			if d.MediaType.IsIndex() {
				child, err := ii.ImageIndex(d.Digest)
				if err != nil {
					t.Fatal(err)
				}
				walk(child)
				continue
			}
			img, err := ii.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := img.RawConfigFile(); err != nil {
				t.Errorf("%s: config: %v", d.Digest, err)
			}
			for _, l := range m.Layers {
				layer, err := img.LayerByDigest(l.Digest)
				if err != nil {
					t.Fatal(err)
				}
				rc, err := layer.Compressed()
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.Copy(io.Discard, rc)
				rc.Close()
				if err != nil || got != l.Size {
					t.Errorf("%s: layer %s: %d bytes, %v; want %d", d.Digest, l.Digest, got, err, l.Size)
				}
			}
		}
	}
	walk(ii)
	return n
}

// TestMirrorArchiveAcrossTheGap carries a signed and attested
// multi-platform index (cosign's new bundle format, as OCI 1.1
// referrers), an image signed and attested in cosign's legacy format, a
// larger image and a chart with its four images through --to-archive
// --part-size and --from-archive, with the real registry, cosign, tar and
// sha256sum:
//   - each part is at most the part size; sha256sum -c checks them; the
//     same command gives the same bytes; tar -xf of the concatenated
//     parts gives exactly what --to-oci writes, which go-containerregistry's
//     layout package reads;
//   - each kind of damaged part is refused before anything is pushed (the
//     target's catalog stays empty);
//   - pushed with --registry sea.hub:5000 (which does not resolve here)
//     and --push-registry the loopback registry: every digest is the
//     source's, cosign verify passes on the pushed references, the chart
//     pulled from there renders sea.hub:5000 images that are all there,
//     --pin lines and rehost images -o mapping name sea.hub:5000; a second
//     run skips everything.
func TestMirrorArchiveAcrossTheGap(t *testing.T) {
	cs := newCosign(t)
	needTool(t, "tar")
	needTool(t, "sha256sum")
	f := newChartFixture(t)
	src := f.src

	index := seedIndex(t, src+"/team/app:1.0", "linux/amd64", "linux/arm64")
	cs.sign(t, src+"/team/app@"+index)
	cs.attest(t, src+"/team/app@"+index)
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	single := seed(t, src+"/tools/single:0.1", img)
	cs.sign(t, src+"/tools/single@"+single, "--new-bundle-format=false")
	cs.attest(t, src+"/tools/single@"+single, "--new-bundle-format=false")
	big, err := random.Image(512<<10, 3)
	if err != nil {
		t.Fatal(err)
	}
	bigDigest := seed(t, src+"/library/big:1", big)

	dir := t.TempDir()
	manifest := filepath.Join(dir, "deploy.yaml")
	writeFiles(t, dir, map[string]string{"deploy.yaml": fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec:\n  containers:\n  - {name: app, image: %s/team/app:1.0}\n  - {name: single, image: %s/tools/single:0.1}\n  - {name: big, image: %s/library/big:1}\n", src, src, src)})
	inputs := []string{"--registry", seaHub, "--kube-version", chartKube, manifest, f.chart}
	want := map[string]string{ // path below the registry -> digest
		"/team/app:1.0": index, "/tools/single:0.1": single, "/library/big:1": bigDigest,
	}
	for s, d := range f.images {
		want[strings.TrimPrefix(s, src)] = d
	}

	// Connected side: an archive in 1 MiB parts, and the same as a layout.
	out := filepath.Join(dir, "media")
	os.Mkdir(out, 0o755)
	path := filepath.Join(out, "bundle.tar")
	_, errOut := mustMirror(t, append([]string{"--to-archive", path, "--part-size", "1MiB", "--progress", "plain"}, inputs...)...)
	if !regexp.MustCompile(`7 copied, 0 skipped, 0 failed, .*; attachments: 4 copied, 0 skipped, 0 failed; charts: 1 pushed`).Match(errOut) {
		t.Errorf("--to-archive:\n%s", errOut)
	}
	parts := archiveParts(t, path)
	if len(parts) < 2 {
		t.Fatalf("%d parts, want at least 2", len(parts))
	}
	for _, p := range parts {
		if st, _ := os.Stat(p); st.Size() > 1<<20 {
			t.Errorf("%s: %d bytes, more than the part size", p, st.Size())
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s written besides its parts", path)
	}
	cmdIn(t, out, "sha256sum", "-c", "bundle.tar.sha256")

	again := filepath.Join(dir, "again.tar")
	mustMirror(t, append([]string{"--to-archive", again, "--part-size", "1MiB", "--progress", "none"}, inputs...)...)
	if !bytes.Equal(concat(t, parts...), concat(t, archiveParts(t, again)...)) {
		t.Error("the same command wrote other bytes")
	}
	layoutDir := filepath.Join(dir, "layout")
	mustMirror(t, append([]string{"--to-oci", layoutDir, "--progress", "none"}, inputs...)...)
	whole := filepath.Join(dir, "whole.tar")
	if err := os.WriteFile(whole, concat(t, parts...), 0o644); err != nil {
		t.Fatal(err)
	}
	extracted := filepath.Join(dir, "extracted")
	os.Mkdir(extracted, 0o755)
	run(t, nil, "tar", "-xf", whole, "-C", extracted)
	got, wantFiles := treeFiles(t, extracted), treeFiles(t, layoutDir)
	if len(got) != len(wantFiles) {
		t.Errorf("tar -xf gives %d files, --to-oci writes %d", len(got), len(wantFiles))
	}
	for name, b := range wantFiles {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s: tar -xf gives other bytes than --to-oci", name)
		}
	}
	if n := readLayout(t, extracted); n < 11 {
		t.Errorf("read %d manifests of the extracted layout", n)
	}
	// crane reads it as a layout too: pushed as one index, it lists what
	// index.json lists.
	crane := needTool(t, "crane")
	craneDst := startRegistry(t)
	run(t, nil, crane, "push", "--insecure", "--index", extracted, craneDst+"/layout/all:1")
	var listed []string
	for _, c := range children(t, craneDst+"/layout/all:1") {
		listed = append(listed, c.String())
	}
	if ii, err := layout.ImageIndexFromPath(extracted); err == nil {
		im, _ := ii.IndexManifest()
		var inIndex []string
		for _, d := range im.Manifests {
			inIndex = append(inIndex, d.Digest.String())
		}
		if strings.Join(listed, " ") != strings.Join(inIndex, " ") {
			t.Errorf("crane pushed the layout as an index of %v, index.json lists %v", listed, inIndex)
		}
	}
	if got := digestOf(t, craneDst+"/layout/all@"+want["/library/big:1"]); got != want["/library/big:1"] {
		t.Errorf("crane's push of the layout lacks the big image: %q", got)
	}

	// Far side: every kind of damage is refused before any push.
	dst := startRegistry(t)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"missing", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "bundle.tar.part001")) }, "bundle.tar.part001: missing"},
		{"truncated", func(t *testing.T, d string) { os.Truncate(filepath.Join(d, "bundle.tar.part000"), 4096) }, "bundle.tar.part000: content does not match its checksum"},
		{"altered", func(t *testing.T, d string) {
			p := filepath.Join(d, "bundle.tar.part001")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0xff
			os.WriteFile(p, b, 0o644)
		}, "bundle.tar.part001: content does not match its checksum"},
		{"reordered", func(t *testing.T, d string) {
			a, b := filepath.Join(d, "bundle.tar.part000"), filepath.Join(d, "bundle.tar.part001")
			os.Rename(a, a+".x")
			os.Rename(b, a)
			os.Rename(a+".x", b)
		}, "bundle.tar.part000: content does not match its checksum"},
		{"no checksum file", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "bundle.tar.sha256")) }, "bundle.tar.sha256: missing"},
		{"checksum file naming a file outside", func(t *testing.T, d string) {
			p := filepath.Join(d, "bundle.tar.sha256")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, []byte(strings.Repeat("0", 64)+"  ../etc/bundle.tar.part009\n")...), 0o644)
		}, "not a file of the archive's folder"},
	} {
		t.Run("damaged/"+c.name, func(t *testing.T) {
			d := t.TempDir()
			for _, p := range append(archiveParts(t, path), path+".sha256") {
				b, _ := os.ReadFile(p)
				os.WriteFile(filepath.Join(d, filepath.Base(p)), b, 0o644)
			}
			c.damage(t, d)
			_, errOut, err := runErr(nil, rehostBin(), "mirror", "--from-archive", filepath.Join(d, "bundle.tar"), "--registry", seaHub, "--push-registry", dst, "--progress", "plain")
			if exitCode(err) != 1 || !strings.Contains(string(errOut), c.want) || !strings.Contains(string(errOut), "nothing was pushed") {
				t.Errorf("exit %d; stderr lacks %q:\n%s", exitCode(err), c.want, errOut)
			}
			if cat := registryCatalog(t, dst); len(cat) != 0 {
				t.Errorf("the target's catalog: %v", cat)
			}
		})
	}

	// The dry run lists what it holds.
	plan, _ := mustMirror(t, "--from-archive", path, "--registry", seaHub, "--dry-run")
	for _, w := range []string{"would copy " + src + "/library/big:1 -> " + seaHub + "/library/big:1\n", "would copy chart " + f.chart + " -> " + seaHub + "/charts/shop:1.2.0"} {
		if !strings.Contains(string(plan), w) {
			t.Errorf("plan lacks %q:\n%s", w, plan)
		}
	}

	pins, errOut := mustMirror(t, "--from-archive", path, "--registry", seaHub, "--push-registry", dst, "--pin", "--progress", "plain")
	if !regexp.MustCompile(`7 copied, 0 skipped, 0 failed, .*; attachments: 4 copied, 0 skipped, 0 failed; charts: 1 pushed`).Match(errOut) ||
		!strings.Contains(string(errOut), "copied  "+src+"/library/big:1 -> "+seaHub+"/library/big:1 via "+dst+" (") {
		t.Errorf("--from-archive:\n%s", errOut)
	}
	for p, d := range want {
		if got := digestOf(t, dst+p); got != d {
			t.Errorf("%s%s: %q, want the source's %s", dst, p, got, d)
		}
	}
	pinLines := strings.Split(strings.TrimSpace(string(pins)), "\n")
	if len(pinLines) != 7 {
		t.Errorf("--pin: %d lines:\n%s", len(pinLines), pins)
	}
	for _, l := range pinLines {
		s, p, _ := strings.Cut(l, "\t")
		if !strings.HasPrefix(p, seaHub+"/") || !strings.HasSuffix(p, "@"+want[strings.TrimPrefix(s, src)]) {
			t.Errorf("--pin line %q", l)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(string(run(t, nil, rehostBin(), "images", "-o", "mapping", "--registry", seaHub, manifest))), "\n") {
		if _, tgt, _ := strings.Cut(l, "\t"); !strings.HasPrefix(tgt, seaHub+"/") {
			t.Errorf("-o mapping line %q", l)
		}
	}
	if !strings.Contains(strings.Join(registryCatalog(t, dst), " "), "library/big") {
		t.Errorf("the loopback registry holds %v", registryCatalog(t, dst))
	}
	cs.verify(t, dst+"/team/app@"+index)
	cs.verifyAttestation(t, dst+"/team/app@"+index)
	cs.verify(t, dst+"/tools/single@"+single, "--new-bundle-format=false")
	cs.verifyAttestation(t, dst+"/tools/single@"+single, "--new-bundle-format=false")

	// The chart, relocated for sea.hub:5000, renders images named there,
	// each pushed to the loopback registry with its source's digest.
	helm := needTool(t, "helm")
	env, chartDir := helmEnv(t), t.TempDir()
	runEnv(t, env, nil, helm, "pull", "oci://"+dst+"/charts/shop", "--version", "1.2.0", "--plain-http", "--destination", chartDir)
	stream := runEnv(t, env, nil, helm, "template", filepath.Join(chartDir, "shop-1.2.0.tgz"), "--kube-version", chartKube)
	rendered := imageLine.FindAllStringSubmatch(string(stream), -1)
	if len(rendered) != 4 {
		t.Errorf("the chart renders %d images:\n%s", len(rendered), stream)
	}
	for _, m := range rendered {
		p, ok := strings.CutPrefix(m[1], seaHub)
		if !ok || digestOf(t, dst+p) != want[p] {
			t.Errorf("the chart renders %s, not at %s with the source's digest", m[1], dst)
		}
	}

	// A second run (or one after an interruption) skips what is there.
	_, errOut = mustMirror(t, "--from-archive", path, "--registry", seaHub, "--push-registry", dst, "--progress", "plain")
	if !regexp.MustCompile(`0 copied, 7 skipped, 0 failed, 0 B in .*; attachments: 0 copied, 4 skipped, 0 failed; charts: 0 pushed, 1 skipped`).Match(errOut) {
		t.Errorf("second run:\n%s", errOut)
	}
}

// cmdIn runs a command in dir, failing the test with its output when it
// fails.
func cmdIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	c := exec.Command(name, args...)
	c.Dir = dir
	b, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, b)
	}
	return string(b)
}

// hostileTar is a tar of the layout files plus extra entries.
func hostileTar(t *testing.T, files map[string][]byte, extra ...*tar.Header) []byte {
	t.Helper()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Size: int64(len(files[n])), Mode: 0o644})
		tw.Write(files[n])
	}
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// TestMirrorArchiveHostileEntries: an archive crafted with each kind of
// hostile entry (a name with "..", an absolute name, a symbolic link, a
// hard link, a device, a FIFO, a name twice, data past the end) is
// refused by the real binary, naming the entry, and nothing reaches the
// registry.
func TestMirrorArchiveHostileEntries(t *testing.T) {
	src, dst := startRegistry(t), startRegistry(t)
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, src+"/team/app:1", img)
	layoutDir := filepath.Join(t.TempDir(), "layout")
	run(t, []byte(src+"/team/app:1\n"), rehostBin(), "mirror", "--image-list", "-", "--to-oci", layoutDir, "--progress", "none")
	files := treeFiles(t, layoutDir)
	reg := func(name string, size int64) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644}
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"dot dot", hostileTar(t, files, reg("../../etc/cron.d/evil", 3)), `entry ../../etc/cron.d/evil: name is absolute or has a ".." component`},
		{"absolute", hostileTar(t, files, reg("/etc/evil", 3)), `entry /etc/evil: name is absolute`},
		{"symlink", hostileTar(t, files, &tar.Header{Typeflag: tar.TypeSymlink, Name: "blobs/sha256/x", Linkname: "/etc/shadow"}), "entry blobs/sha256/x: a link, which rehost never follows (to /etc/shadow)"},
		{"hard link", hostileTar(t, files, &tar.Header{Typeflag: tar.TypeLink, Name: "blobs/sha256/y", Linkname: "index.json"}), "entry blobs/sha256/y: a link"},
		{"device", hostileTar(t, files, &tar.Header{Typeflag: tar.TypeChar, Name: "tty", Devmajor: 5}), "entry tty: not a regular file or a directory: a device"},
		{"fifo", hostileTar(t, files, &tar.Header{Typeflag: tar.TypeFifo, Name: "pipe"}), "entry pipe: not a regular file or a directory: a FIFO"},
		{"duplicate", hostileTar(t, files, reg("./index.json", 2)), "entry ./index.json: a second entry of the same name"},
		{"past the end", hostileTar(t, files, reg("big", 100_000))[:len(hostileTar(t, files))+512+10_000], "entry big: its data runs past the end of the archive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hostile.tar")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, err := runErr(nil, rehostBin(), "mirror", "--from-archive", path, "--registry", dst, "--progress", "plain")
			if exitCode(err) != 1 || !strings.Contains(string(errOut), path+": "+c.want) || !strings.Contains(string(errOut), "nothing was pushed") {
				t.Errorf("exit %d; stderr lacks %q:\n%s", exitCode(err), c.want, errOut)
			}
			if cat := registryCatalog(t, dst); len(cat) != 0 {
				t.Errorf("the registry's catalog: %v", cat)
			}
		})
	}
}

// TestMirrorArchiveDockerSave: crane pull --format tarball writes what
// docker save writes (manifest.json with RepoTags); --from-archive pushes
// each tag to its target, with the digest crane gives the image in the
// archive.
func TestMirrorArchiveDockerSave(t *testing.T) {
	crane := needTool(t, "crane")
	src, dst := startRegistry(t), startRegistry(t)
	for _, ref := range []string{"/team/app:1.0", "/library/base:2"} {
		img, err := random.Image(2048, 2)
		if err != nil {
			t.Fatal(err)
		}
		seed(t, src+ref, img)
	}
	path := filepath.Join(t.TempDir(), "images.tar")
	run(t, nil, crane, "pull", "--insecure", "--format", "tarball", src+"/team/app:1.0", src+"/library/base:2", path)
	_, errOut := mustMirror(t, "--from-archive", path, "--registry", seaHub, "--push-registry", dst, "--progress", "plain")
	for _, w := range []string{"notice: " + path + " has no checksum file", "2 copied, 0 skipped, 0 failed", "-> " + seaHub + "/team/app:1.0 via " + dst} {
		if !strings.Contains(string(errOut), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	for _, ref := range []string{"/team/app:1.0", "/library/base:2"} {
		want := strings.TrimSpace(string(run(t, nil, crane, "digest", "--tarball", path, src+ref)))
		if got := digestOf(t, dst+ref); got != want || got == "" {
			t.Errorf("%s: %q, crane says %s", ref, got, want)
		}
	}
}

// TestMirrorPushRegistry: --push-registry sends direct copies and
// --from-oci pushes to the loopback registry while the targets keep the
// sea.hub:5000 names (which do not resolve here), in reports and --pin
// lines alike.
func TestMirrorPushRegistry(t *testing.T) {
	src, dst := startRegistry(t), startRegistry(t)
	base := seedIndex(t, src+"/library/base:2", "linux/amd64", "linux/arm64")
	list := []byte(src + "/library/base:2\n")
	pins, errOut, err := runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", seaHub, "--push-registry", dst, "--pin", "--progress", "plain")
	if err != nil || string(pins) != src+"/library/base:2\t"+seaHub+"/library/base:2@"+base+"\n" || !strings.Contains(string(errOut), "-> "+seaHub+"/library/base:2 via "+dst) {
		t.Errorf("direct: %v\nstdout %q\nstderr:\n%s", err, pins, errOut)
	}
	if got := digestOf(t, dst+"/library/base:2"); got != base {
		t.Errorf("direct: %q at the push address, want %s", got, base)
	}
	layoutDir := filepath.Join(t.TempDir(), "bundle")
	run(t, list, rehostBin(), "mirror", "--image-list", "-", "--to-oci", layoutDir, "--registry", seaHub, "--progress", "none")
	_, errOut = mustMirror(t, "--from-oci", layoutDir, "--registry", seaHub, "--push-registry", dst+"/offline", "--progress", "plain")
	if !strings.Contains(string(errOut), "-> "+seaHub+"/library/base:2 via "+dst+"/offline (") {
		t.Errorf("--from-oci:\n%s", errOut)
	}
	if got := digestOf(t, dst+"/offline/library/base:2"); got != base {
		t.Errorf("--from-oci: %q at the push address, want %s", got, base)
	}
}
