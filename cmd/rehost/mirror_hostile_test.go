package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// loopbackRegistry serves go-containerregistry's in-memory registry on
// 127.0.0.1, through wrap when given, and returns its host.
func loopbackRegistry(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host
}

// pushRandom pushes a random two-layer image to ref.
func pushRandom(t *testing.T, ref string) v1.Image {
	t.Helper()
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return img
}

// noDockerConfig keeps the commands from reading the machine's Docker
// credentials.
func noDockerConfig(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
}

// canary is a directory outside the layout with a file that must keep its
// content, and nothing may be added to it.
type canary struct{ dir, file string }

func newCanary(t *testing.T) canary {
	t.Helper()
	c := canary{dir: t.TempDir()}
	c.file = filepath.Join(c.dir, "victim")
	if err := os.WriteFile(c.file, []byte("canary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(c.dir, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c canary) check(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(c.file); err != nil || string(b) != "canary\n" {
		t.Errorf("the file outside the layout changed: %q, %v", b, err)
	}
	var got []string
	filepath.WalkDir(c.dir, func(p string, _ fs.DirEntry, _ error) error {
		rel, _ := filepath.Rel(c.dir, p)
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(got)
	if strings.Join(got, " ") != ". elsewhere victim" {
		t.Errorf("files outside the layout: %v", got)
	}
}

// TestMirrorCLIToOCILinks: --to-oci refuses a layout directory with a link
// planted at oci-layout (the canary would be overwritten), index.json (a
// file would be created outside), blobs or blobs/sha256 (blobs would go
// elsewhere): exit status 1, the link named, nothing written outside.
func TestMirrorCLIToOCILinks(t *testing.T) {
	noDockerConfig(t)
	src := loopbackRegistry(t, nil)
	pushRandom(t, src+"/team/app:1")
	for _, link := range []string{"oci-layout", "index.json", "blobs", "blobs/sha256"} {
		t.Run(link, func(t *testing.T) {
			c := newCanary(t)
			dir := t.TempDir()
			target := map[string]string{
				"oci-layout":   c.file,
				"index.json":   filepath.Join(c.dir, "created.json"),
				"blobs":        filepath.Join(c.dir, "elsewhere"),
				"blobs/sha256": filepath.Join(c.dir, "elsewhere"),
			}[link]
			os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755)
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := rehost(t, src+"/team/app:1\n", "mirror", "--image-list", "-", "--to-oci", dir, "--attachments", "none", "--progress", "plain")
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			want := filepath.Join(dir, filepath.FromSlash(link)) + " (a link to "
			if !strings.Contains(errOut, want) || !strings.Contains(errOut, "symbolic link inside an OCI layout") {
				t.Errorf("stderr does not name the link %s:\n%s", want, errOut)
			}
			c.check(t)
		})
	}
}

// cliBundle writes a layout with rehost mirror --to-oci from a loopback
// registry holding one image, and returns it with the registry to push it
// into.
func cliBundle(t *testing.T) (dir, src, dst string) {
	t.Helper()
	noDockerConfig(t)
	src = loopbackRegistry(t, nil)
	dst = loopbackRegistry(t, nil)
	pushRandom(t, src+"/team/app:1")
	dir = filepath.Join(t.TempDir(), "bundle")
	if _, errOut, code := rehost(t, src+"/team/app:1\n", "mirror", "--image-list", "-", "--to-oci", dir, "--progress", "none"); code != 0 {
		t.Fatalf("--to-oci: exit %d: %s", code, errOut)
	}
	return dir, src, dst
}

func readIndexJSON(t *testing.T, dir string) v1.IndexManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		t.Fatal(err)
	}
	return im
}

func writeIndexJSON(t *testing.T, dir string, im v1.IndexManifest) {
	t.Helper()
	raw, _ := json.Marshal(im)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func blobFile(dir string, h v1.Hash) string {
	return filepath.Join(dir, "blobs", h.Algorithm, h.Hex)
}

// plantSelfIndex makes the image of the layout an index blob, named h,
// that lists itself: its name is not its digest. Such an index used to
// hang the push forever.
func plantSelfIndex(t *testing.T, dir string, h v1.Hash) {
	t.Helper()
	var content []byte
	for size := 0; len(content) != size || size == 0; {
		size = len(content)
		content = fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":%q,"size":%d}]}`, h, size)
	}
	if err := os.WriteFile(blobFile(dir, h), content, 0o644); err != nil {
		t.Fatal(err)
	}
	im := readIndexJSON(t, dir)
	im.Manifests[0].MediaType, im.Manifests[0].Digest, im.Manifests[0].Size = types.OCIImageIndex, h, int64(len(content))
	writeIndexJSON(t, dir, im)
}

// TestMirrorCLIFromOCIHostile: --from-oci of a tampered layout exits with
// status 1 and a message naming what is wrong, promptly, and pushes
// nothing of the tampered image.
func TestMirrorCLIFromOCIHostile(t *testing.T) {
	sum := sha256.Sum256([]byte("self"))
	self := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
	for _, c := range []struct {
		name   string
		args   []string
		tamper func(t *testing.T, dir string)
		want   []string
		raw    []string // must not appear raw
	}{
		{"self-referencing index", []string{"--attachments", "none"}, func(t *testing.T, dir string) { plantSelfIndex(t, dir, self) }, []string{"index lists itself (a cycle): " + self.String() + " → " + self.String()}, nil},
		{"self-referencing index, attachments all", nil, func(t *testing.T, dir string) { plantSelfIndex(t, dir, self) }, []string{"index lists itself (a cycle)"}, nil},
		{"manifest edited in place", nil, func(t *testing.T, dir string) {
			h := readIndexJSON(t, dir).Manifests[0].Digest
			raw, _ := os.ReadFile(blobFile(dir, h))
			os.WriteFile(blobFile(dir, h), bytes.Replace(raw, []byte(`"schemaVersion":2`), []byte(`"schemaVersion":3`), 1), 0o644)
		}, []string{"content does not match its digest"}, nil},
		{"huge sparse index.json", nil, func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "index.json"), 3<<30); err != nil {
				t.Skip(err)
			}
		}, []string{filepath.Join("bundle", "index.json") + ": 3.0 GiB, over the size limit of 4.0 MiB"}, nil},
		{"escapes in annotations", nil, func(t *testing.T, dir string) {
			im := readIndexJSON(t, dir)
			im.Manifests[0].Annotations["dev.rehost.source"] = "docker.io/x/y:1\x1b]0;owned\x07\nfake line"
			d := im.Manifests[0]
			d.Annotations = map[string]string{"dev.rehost.source": "docker.io/x/y:sig\x1b[2J", "dev.rehost.attachment": "signature\x1b[31m", "dev.rehost.subject": "sha256:\x1b[31m"}
			im.Manifests = append(im.Manifests, d)
			writeIndexJSON(t, dir, im)
		}, []string{`"docker.io/x/y:1\x1b]0;owned\a\nfake line"`, `"signature\x1b[31m"`}, []string{"\x1b", "\x07", "\nfake line"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _, dst := cliBundle(t)
			c.tamper(t, dir)
			args := append([]string{"mirror", "--from-oci", dir, "--registry", dst, "--progress", "plain"}, c.args...)
			_, errOut, code := rehost(t, "", args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
			for _, r := range c.raw {
				if strings.Contains(errOut, r) {
					t.Errorf("stderr holds %q raw:\n%s", r, errOut)
				}
			}
			if r, _ := name.ParseReference(dst + "/team/app:1"); r != nil {
				if _, err := remote.Head(r); err == nil {
					t.Error("the tampered image was pushed")
				}
			}
		})
	}
}

// TestMirrorCLISecrets: a registry whose error body echoes the request's
// Authorization header: rehost prints neither the token nor the password
// from the Docker config.
func TestMirrorCLISecrets(t *testing.T) {
	const user, pass, token = "robot", "pw-SECRET-5551212", "tok-SECRET-1234567890abcdef"
	var host string
	host = loopbackRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				if u, p, _ := r.BasicAuth(); u != user || p != pass {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				fmt.Fprintf(w, `{"token":%q}`, token)
				return
			}
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="x"`, host))
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			a := r.Header.Get("Authorization")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, "denied\nAuthorization: %s\nAuthorization: %s\npassword was %s\n", a, a, pass)
		})
	})
	cfg := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	os.WriteFile(filepath.Join(cfg, "config.json"), []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)), 0o600)
	t.Setenv("DOCKER_CONFIG", cfg)
	dst := loopbackRegistry(t, nil)
	_, errOut, code := rehost(t, host+"/team/app:1\n", "mirror", "--image-list", "-", "--registry", dst, "--progress", "plain")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, secret := range []string{pass, token, auth} {
		if strings.Contains(errOut, secret) {
			t.Errorf("stderr holds %q:\n%s", secret, errOut)
		}
	}
	if !strings.Contains(errOut, "403") || !strings.Contains(errOut, "Authorization: [redacted]") {
		t.Errorf("stderr does not say what the registry answered, redacted:\n%s", errOut)
	}
}

// TestMirrorCLIStallTimeout: --stall-timeout bounds how long a registry
// that does not answer holds the run.
func TestMirrorCLIStallTimeout(t *testing.T) {
	noDockerConfig(t)
	src := loopbackRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") {
				<-r.Context().Done()
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	dst := loopbackRegistry(t, nil)
	_, errOut, code := rehost(t, src+"/team/app:1\n", "mirror", "--image-list", "-", "--registry", dst, "--progress", "plain", "--stall-timeout", "300ms")
	if code != 1 || !strings.Contains(errOut, "registry stalled: less than 307 bytes moved in 300ms") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
	for _, bad := range []string{"0", "-1s"} {
		_, errOut, code := rehost(t, "nginx:1\n", "mirror", "--image-list", "-", "--dry-run", "--stall-timeout", bad)
		if code != 1 || !strings.Contains(errOut, "--stall-timeout") {
			t.Errorf("--stall-timeout %s: exit %d, %s", bad, code, errOut)
		}
	}
}
