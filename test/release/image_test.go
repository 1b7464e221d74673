package release

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The images' promises (tools/release/image.go, docs/kustomize.md,
// docs/mirror.md): each command's binary at /usr/local/bin, run as
// distroless's nonroot user.
const (
	imageUser   = "65532:65532"
	imageSource = "https://github.com/rehost/rehost"
)

// fallbackRoots is the module of the root certificates rehost mirror uses
// where the system has none (cmd/rehost/roots.go).
const fallbackRoots = "golang.org/x/crypto/x509roots/fallback"

// images are the commands the release has an image of.
var images = []string{"rehost-fn", "rehost"}

// entrypoint is a command's path in its image.
func entrypoint(command string) string { return "/usr/local/bin/" + command }

// startRegistry runs the distribution registry on a free loopback port
// and returns its host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := needTool(t, "registry")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yml")
	yaml := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), host)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", config)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return host
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry on %s did not start: %v", host, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// layoutIndex is a command's image in the release directory
// (COMMAND-image, an OCI layout holding one index).
func layoutIndex(t *testing.T, r *release, command string) v1.ImageIndex {
	t.Helper()
	l, err := layout.ImageIndexFromPath(r.path(command + "-image"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("%s-image holds %d entries (%v), want one OCI image index", command, len(m.Manifests), m.Manifests)
	}
	idx, err := l.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// files reads an image's filesystem: each path (without the leading /)
// with its header and content.
func files(t *testing.T, img v1.Image) map[string]*tarFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]*tarFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(strings.TrimPrefix(h.Name, "/"), "/")] = &tarFile{h, data}
	}
}

type tarFile struct {
	h    *tar.Header
	data []byte
}

// TestImage pushes each of the release's images (rehost-fn, rehost) to a
// loopback registry and checks what a registry serves: an OCI index for
// linux/amd64 and linux/arm64 with the digest the release lists, images
// that run as the non-root user 65532 with the command as entrypoint,
// labelled with the source, version and revision, /etc/passwd with the
// users kustomize and kpt run functions as (nobody) and the image's own
// (nonroot), the binary the release's archive has; the linux binary of this
// machine's architecture, taken out of the image, runs as a container
// runtime would run it (imageRuns).
func TestImage(t *testing.T) {
	r := needDist(t)
	host := startRegistry(t)
	for _, command := range images {
		t.Run(command, func(t *testing.T) { testImage(t, r, host, command) })
	}
}

// imageRuns runs a command's binary taken out of its image: rehost-fn
// answers --help and rewrites a ResourceList with no arguments (its
// entrypoint alone); rehost answers --help, mirror --help (with --shard,
// for the Indexed Job of docs/mirror.md) and version.
func imageRuns(t *testing.T, r *release, command, exe string) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	switch command {
	case "rehost-fn":
		if out := run(t, nil, nil, exe, "--help"); !bytes.Contains(out, []byte("KRM function")) {
			t.Errorf("rehost-fn --help from the image:\n%s", out)
		}
		rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web\n  spec:\n    containers:\n    - name: web\n      image: nginx:1.25\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: rehost\n  data:\n    registry: sea.hub:5000\n"
		if out := run(t, env, []byte(rl), exe); !bytes.Contains(out, []byte("image: sea.hub:5000/library/nginx:1.25")) {
			t.Errorf("rehost-fn from the image on a ResourceList:\n%s", out)
		}
	case "rehost":
		if out := run(t, env, nil, exe, "--help"); !bytes.Contains(out, []byte("mirror")) {
			t.Errorf("rehost --help from the image:\n%s", out)
		}
		if out := run(t, env, nil, exe, "mirror", "--help"); !bytes.Contains(out, []byte("--shard")) {
			t.Errorf("rehost mirror --help from the image:\n%s", out)
		}
		if out := run(t, env, nil, exe, "version"); !bytes.HasPrefix(out, []byte("rehost "+r.version+" (commit ")) {
			t.Errorf("rehost version from the image: %q, want rehost %s (commit …)", out, r.version)
		}
	default:
		t.Fatalf("no run check of the %s image", command)
	}
}

func testImage(t *testing.T, r *release, host, command string) {
	idx := layoutIndex(t, r, command)
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	digestFile := command + "_" + r.version + "_image-digest.txt"
	listed, err := os.ReadFile(r.path(digestFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(listed)) != digest.String() {
		t.Errorf("%s says %s, the OCI layout holds %s", digestFile, listed, digest)
	}
	if _, ok := r.checksums[digestFile]; !ok {
		t.Errorf("checksums.txt does not list %s", digestFile)
	}
	ref, err := name.ParseReference(host+"/rehost/"+command+":"+r.version, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}

	// From here on, only what the registry serves.
	pulled, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := pulled.Digest(); d != digest {
		t.Errorf("the registry serves %s as %s, pushed %s", ref, d, digest)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", im.MediaType, types.OCIImageIndex)
	}
	labels := func(what string, got map[string]string, created time.Time) {
		t.Helper()
		if got["org.opencontainers.image.source"] != imageSource || got["org.opencontainers.image.title"] != command || got["org.opencontainers.image.version"] != r.version || !hexCommit.MatchString(got["org.opencontainers.image.revision"]) {
			t.Errorf("%s: source %q, title %q, version %q, revision %q; want %s, %s, %s and a commit", what, got["org.opencontainers.image.source"], got["org.opencontainers.image.title"], got["org.opencontainers.image.version"], got["org.opencontainers.image.revision"], imageSource, command, r.version)
		}
		if c, err := time.Parse(time.RFC3339, got["org.opencontainers.image.created"]); err != nil || (!created.IsZero() && !c.Equal(created)) {
			t.Errorf("%s: created %q, want the image's creation time %v", what, got["org.opencontainers.image.created"], created)
		}
	}
	labels("index annotations", im.Annotations, time.Time{})
	var platforms []string
	for _, desc := range im.Manifests {
		p := desc.Platform.OS + "/" + desc.Platform.Architecture
		platforms = append(platforms, p)
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			if desc.MediaType != types.OCIManifestSchema1 {
				t.Errorf("%s: manifest media type %s, want %s", p, desc.MediaType, types.OCIManifestSchema1)
			}
			img, err := pulled.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			c := cf.Config
			if cf.OS+"/"+cf.Architecture != p {
				t.Errorf("%s: config says %s/%s", p, cf.OS, cf.Architecture)
			}
			if c.User != imageUser || !slices.Equal(c.Entrypoint, []string{entrypoint(command)}) || len(c.Cmd) != 0 {
				t.Errorf("%s: user %q, entrypoint %q, cmd %q; want %s, [%s], none", p, c.User, c.Entrypoint, c.Cmd, imageUser, entrypoint(command))
			}
			labels(p+" labels", c.Labels, cf.Created.Time)
			if rev := c.Labels["org.opencontainers.image.revision"]; rev != im.Annotations["org.opencontainers.image.revision"] {
				t.Errorf("%s: revision %s, the index says %s", p, rev, im.Annotations["org.opencontainers.image.revision"])
			}

			fs := files(t, img)
			for _, want := range []string{"root:x:0:0:", "nobody:x:65534:65534:", "nonroot:x:65532:65532:"} {
				if f := fs["etc/passwd"]; f == nil || !bytes.Contains(f.data, []byte("\n"+want)) && !bytes.HasPrefix(f.data, []byte(want)) {
					t.Errorf("%s: /etc/passwd lacks %q", p, want)
				}
			}
			if f := fs["etc/group"]; f == nil || !bytes.Contains(f.data, []byte("nonroot:x:65532:")) || !bytes.Contains(f.data, []byte("nobody:x:65534:")) {
				t.Errorf("%s: /etc/group lacks nonroot or nobody", p)
			}
			if f := fs["tmp"]; f == nil || f.h.Typeflag != tar.TypeDir || f.h.FileInfo().Mode()&os.ModeSticky == 0 || f.h.FileInfo().Mode().Perm() != 0o777 {
				t.Errorf("%s: /tmp is not a world-writable sticky directory", p)
			}
			if f := fs["home/nonroot"]; f == nil || f.h.Uid != 65532 || f.h.Gid != 65532 {
				t.Errorf("%s: /home/nonroot is not owned by 65532", p)
			}
			bin := fs[strings.TrimPrefix(entrypoint(command), "/")]
			if bin == nil || bin.h.Typeflag != tar.TypeReg || bin.h.FileInfo().Mode().Perm() != 0o755 || bin.h.Uid != 0 {
				t.Fatalf("%s: %s is not an executable owned by root", p, entrypoint(command))
			}
			if a, ok := r.find(command, p); ok {
				data, _, _ := extract(t, r, a)
				if !bytes.Equal(data, bin.data) {
					t.Errorf("%s: %s differs from the binary in %s", p, entrypoint(command), a.name)
				}
			}
			_, bi := readBinary(t, command, bin.data)
			if setting(bi, "GOOS") != "linux" || setting(bi, "GOARCH") != desc.Platform.Architecture || setting(bi, "CGO_ENABLED") != "0" {
				t.Errorf("%s: the binary is built for %s/%s (CGO_ENABLED=%s), want a static %s binary", p, setting(bi, "GOOS"), setting(bi, "GOARCH"), setting(bi, "CGO_ENABLED"), p)
			}
			// The image has no /etc/ssl/certs: rehost mirror verifies
			// registries' TLS with the fallback roots it links.
			if command == "rehost" && !slices.ContainsFunc(bi.Deps, func(m *debug.Module) bool { return m.Path == fallbackRoots }) {
				t.Errorf("%s: the binary does not link %s", p, fallbackRoots)
			}
			if rev := c.Labels["org.opencontainers.image.revision"]; !bytes.Contains(bin.data, []byte(rev)) {
				t.Errorf("%s: the binary does not link the revision %s its label names", p, rev)
			}
			if p != "linux/"+runtime.GOARCH || runtime.GOOS != "linux" {
				return
			}
			exe := filepath.Join(t.TempDir(), command)
			if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
				t.Fatal(err)
			}
			imageRuns(t, r, command, exe)
		})
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("the index has platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
}
