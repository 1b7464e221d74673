package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// archiveSource is a loopback registry with an image of about 1.2 MB (two
// parts of 1 MiB) and a small one, and their image list.
func archiveSource(t *testing.T) (src, list string) {
	t.Helper()
	noDockerConfig(t)
	src = loopbackRegistry(t, nil)
	img, err := random.Image(600<<10, 2)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := name.ParseReference(src + "/team/big:1")
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	pushRandom(t, src+"/team/app:1")
	return src, src + "/team/big:1\n" + src + "/team/app:1\n"
}

func ls(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// TestMirrorArchive: --to-archive --part-size writes the parts and the
// checksum file, reporting each; --from-archive checks and pushes them to
// the --push-registry address under the --registry names; an archive is
// never overwritten without --force; a damaged part is named and nothing
// is pushed; --dry-run lists what the archive holds.
func TestMirrorArchive(t *testing.T) {
	src, list := archiveSource(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bundle.tar")
	out, errOut, code := rehost(t, list, "mirror", "--image-list", "-", "--to-archive", path, "--part-size", "1MiB", "--registry", "sea.hub:5000", "--progress", "plain")
	if code != 0 || out != "" {
		t.Fatalf("--to-archive: exit %d, stdout %q: %s", code, out, errOut)
	}
	for _, want := range []string{"copied  " + src + "/team/big:1 -> oci-archive:" + path, "wrote   " + path + ".part000 (1.0 MiB)", "wrote   " + path + ".part001 (", "wrote   " + path + ".sha256 (", "2 copied, 0 skipped, 0 failed"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if got := ls(t, dir); got != "bundle.tar.part000 bundle.tar.part001 bundle.tar.sha256" {
		t.Errorf("files: %s", got)
	}

	// Never overwritten without --force.
	_, errOut, code = rehost(t, list, "mirror", "--image-list", "-", "--to-archive", path, "--part-size", "1MiB", "--progress", "plain")
	if code != 1 || !strings.Contains(errOut, path+".sha256, "+path+".part000, "+path+".part001: already there") || !strings.Contains(errOut, "--force replaces them") {
		t.Errorf("existing archive: exit %d: %s", code, errOut)
	}
	if _, errOut, code = rehost(t, list, "mirror", "--image-list", "-", "--to-archive", path, "--part-size", "1MiB", "--force", "--progress", "none"); code != 0 {
		t.Errorf("--force: exit %d: %s", code, errOut)
	}

	// The dry run lists what it holds, after checking the parts.
	out, errOut, code = rehost(t, "", "mirror", "--from-archive", path, "--dry-run", "--progress", "plain")
	if code != 0 || !strings.Contains(out, "would copy "+src+"/team/big:1 -> sea.hub:5000/team/big:1\n") || !strings.Contains(errOut, "checked "+path+".part001 against "+path+".sha256") {
		t.Errorf("--dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	dst := loopbackRegistry(t, nil)
	out, errOut, code = rehost(t, "", "mirror", "--from-archive", path, "--registry", "sea.hub:5000", "--push-registry", dst, "--pin", "--progress", "plain")
	if code != 0 {
		t.Fatalf("--from-archive: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "copied  "+src+"/team/big:1 -> sea.hub:5000/team/big:1 via "+dst) || !strings.Contains(out, src+"/team/big:1\tsea.hub:5000/team/big:1@sha256:") {
		t.Errorf("--from-archive:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	for _, repo := range []string{"team/big:1", "team/app:1"} {
		s, _ := name.ParseReference(src + "/" + repo)
		d, _ := name.ParseReference(dst + "/" + repo)
		a, err1 := remote.Head(s)
		b, err2 := remote.Head(d)
		if err1 != nil || err2 != nil || a.Digest != b.Digest {
			t.Errorf("%s: %v %v %v %v", repo, a, b, err1, err2)
		}
	}

	// A damaged part: named, nothing pushed.
	other := loopbackRegistry(t, nil)
	if err := os.Truncate(path+".part001", 10); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = rehost(t, "", "mirror", "--from-archive", path, "--registry", other, "--progress", "plain")
	for _, want := range []string{path + ".part001: content does not match its checksum", "nothing was pushed", "sha256sum -c bundle.tar.sha256"} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("damaged part: exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
	if strings.Contains(errOut, "copied") {
		t.Errorf("pushed:\n%s", errOut)
	}
	_, errOut, code = rehost(t, "", "mirror", "--from-archive", filepath.Join(dir, "none.tar"), "--registry", other)
	if code != 1 || !strings.Contains(errOut, "no archive "+filepath.Join(dir, "none.tar")) {
		t.Errorf("no archive: exit %d: %s", code, errOut)
	}
}

// TestMirrorArchiveFailureLeavesNothing: an image that cannot be read
// fails the run, and no file of the archive is left.
func TestMirrorArchiveFailureLeavesNothing(t *testing.T) {
	src, list := archiveSource(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bundle.tar")
	_, errOut, code := rehost(t, list+src+"/no/such:1\n", "mirror", "--image-list", "-", "--to-archive", path, "--progress", "plain")
	if code != 1 || !strings.Contains(errOut, "mirror: 1 of 3 images failed") || !strings.Contains(errOut, path+" is not written: an archive is written only whole") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if got := ls(t, dir); got != "" {
		t.Errorf("left behind: %s", got)
	}
}

func TestMirrorArchiveFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--part-size", "1MiB", "--image-list", "-"}, "--part-size applies to --to-archive only"},
		{[]string{"--force", "--image-list", "-"}, "--force applies to --to-archive only"},
		{[]string{"--to-oci", dir, "--to-archive", "b.tar"}, "--to-oci and --to-archive exclude each other"},
		{[]string{"--from-oci", dir, "--from-archive", "b.tar"}, "--from-oci and --from-archive exclude each other"},
		{[]string{"--to-archive", "a.tar", "--from-archive", "b.tar"}, "--to-archive and --from-archive exclude each other"},
		{[]string{"--to-archive", "a.tar", "--part-size", "512KiB", "--image-list", "-"}, "--part-size 512KiB: 524288 bytes, want at least 1MiB"},
		{[]string{"--to-archive", "a.tar", "--part-size", "4G", "--image-list", "-"}, "--part-size: size \"4G\": unit G: say GB"},
		{[]string{"--to-archive", "a.tar", "--push-registry", "10.0.0.5:5000", "--image-list", "-"}, "--to-archive pushes nothing"},
		{[]string{"--from-archive", "b.tar", "x.yaml"}, "--from-archive pushes what it holds: it takes no PATH"},
		{[]string{"--from-archive", "b.tar", "--images-from", "list"}, "--from-archive pushes what it holds: it takes no --images-from"},
		{[]string{"--from-archive", "b.tar", "--charts", "as-is"}, "--from-archive pushes the charts it holds as they were written"},
		{[]string{"--from-archive", dir}, "--from-archive " + dir + ": a directory; a layout directory is pushed with --from-oci"},
	} {
		_, errOut, code := rehost(t, "nginx:1\n", append([]string{"mirror", "--dry-run", "--attachments", "none"}, c.args...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
	help, _, _ := rehost(t, "", "mirror", "--help")
	for _, want := range []string{"--to-archive FILE", "--part-size", "--from-archive FILE", "--push-registry", "sha256sum -c bundle.tar.sha256", "docker save"} {
		if !strings.Contains(help, want) {
			t.Errorf("mirror --help does not mention %q", want)
		}
	}
}
