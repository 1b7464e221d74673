package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// syncBuffer is a bytes.Buffer safe for the registry's output goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRegistry runs the CNCF distribution registry on a free 127.0.0.1
// port with filesystem storage in a temporary directory, and stops it by
// its PID when the test ends. It returns "127.0.0.1:PORT".
func startRegistry(t *testing.T) string { return startRegistryOn(t, "127.0.0.1", nil) }

// registryTLS is a certificate and key for a registry, in PEM.
type registryTLS struct{ certPEM, keyPEM []byte }

// startRegistryOn runs the registry on a free port of ip, over TLS when
// tlsc is given.
func startRegistryOn(t *testing.T, ip string, tlsc *registryTLS) string {
	t.Helper()
	return startRegistryWith(t, ip, tlsc, "")
}

// startRegistryWith is startRegistryOn with storage settings added to the
// registry's configuration (indented under storage:).
func startRegistryWith(t *testing.T, ip string, tlsc *registryTLS, storage string) string {
	t.Helper()
	bin := needTool(t, "registry")
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yml")
	yaml := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
%shttp:
  addr: %s
`, filepath.Join(dir, "data"), storage, host)
	client := http.DefaultClient
	scheme := "http"
	if tlsc != nil {
		cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		if err := os.WriteFile(cert, tlsc.certPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, tlsc.keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		yaml += fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", cert, key)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(tlsc.certPEM)
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		scheme = "https"
	}
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", config)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
		cmd.Wait()
		if t.Failed() {
			lines := strings.Split(log.String(), "\n")
			t.Logf("registry %s output (last lines):\n%s", host, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get(scheme + "://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return host
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry on %s did not start: %v\n%s", host, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// selfSigned makes a self-signed certificate for 127.0.0.1.
func selfSigned(t *testing.T) *registryTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rehost e2e registry"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &registryTLS{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
}

// seedIndex pushes a random multi-platform index and returns its digest.
func seedIndex(t *testing.T, ref string, platforms ...string) string {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		img, err := random.Image(2048, 2)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
	return seed(t, ref, idx)
}

// seed pushes an image or index and returns its digest.
func seed(t *testing.T, ref string, x interface {
	remote.Taggable
	Digest() (v1.Hash, error)
}) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Push(r, x); err != nil {
		t.Fatalf("seeding %s: %v", ref, err)
	}
	d, err := x.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// digestOf resolves a reference with a HEAD request, "" when it does not
// resolve.
func digestOf(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	d, err := remote.Head(r)
	if err != nil {
		return ""
	}
	return d.Digest.String()
}

// children lists the child manifests of an index ("" for an image).
func children(t *testing.T, ref string) []v1.Hash {
	t.Helper()
	r, _ := name.ParseReference(ref)
	d, err := remote.Get(r)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	if !d.MediaType.IsIndex() {
		return nil
	}
	idx, err := d.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []v1.Hash
	for _, m := range im.Manifests {
		out = append(out, m.Digest)
	}
	return out
}

// mirrorFixture is a source registry seeded with images and a manifest
// that pulls them.
type mirrorFixture struct {
	src, dst string
	dir      string
	manifest string
	digests  map[string]string // source reference as written -> digest
	excluded string
}

func newMirrorFixture(t *testing.T) *mirrorFixture {
	f := &mirrorFixture{src: startRegistry(t), dst: startRegistry(t), dir: t.TempDir(), digests: map[string]string{}}
	s := f.src
	f.digests[s+"/team/app:1.0"] = seedIndex(t, s+"/team/app:1.0", "linux/amd64", "linux/arm64", "linux/arm/v7")
	f.digests[s+"/library/base:2"] = seedIndex(t, s+"/library/base:2", "linux/amd64", "windows/amd64")
	single, err := random.Image(4096, 3)
	if err != nil {
		t.Fatal(err)
	}
	f.digests[s+"/tools/single:0.1"] = seed(t, s+"/tools/single:0.1", single)
	pinned := seedIndex(t, s+"/team/pinned:1", "linux/amd64", "linux/arm64")
	f.digests[s+"/team/pinned@"+pinned] = pinned
	both := seedIndex(t, s+"/team/both:3", "linux/amd64")
	f.digests[s+"/team/both:3@"+both] = both
	f.excluded = s + "/vendor/excluded:1"
	seedIndex(t, f.excluded, "linux/amd64")

	var b strings.Builder
	b.WriteString("# images from a private source registry\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      initContainers:\n      - name: init\n        image: " + s + "/tools/single:0.1\n      containers:\n")
	i := 0
	for ref := range f.digests {
		if strings.Contains(ref, "single") {
			continue
		}
		fmt.Fprintf(&b, "      - name: c%d\n        image: %q\n", i, ref)
		i++
	}
	fmt.Fprintf(&b, "      - name: vendor\n        image: %s  # stays as written\n", f.excluded)
	f.manifest = filepath.Join(f.dir, "deploy.yaml")
	if err := os.WriteFile(f.manifest, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

var imageLine = regexp.MustCompile(`image: "?([^"\s]+)"?`)

// TestMirrorRealRegistry rewrites a manifest for a private registry, mirrors
// its images there with rehost mirror, and checks that every rewritten
// reference resolves in the target with the source's digest.
func TestMirrorRealRegistry(t *testing.T) {
	f := newMirrorFixture(t)
	mapping := []string{"--registry", f.dst, "--exclude", f.src + "/vendor"}

	rewritten := run(t, nil, rehostBin(), append([]string{"rewrite", f.manifest}, mapping...)...)
	pairs := map[string]string{} // rewritten reference -> source reference
	for _, line := range strings.Split(strings.TrimSpace(string(run(t, nil, rehostBin(), append([]string{"images", "-o", "mapping", f.manifest}, mapping...)...))), "\n") {
		src, dst, _ := strings.Cut(line, "\t")
		pairs[dst] = src
	}
	if len(pairs) != len(f.digests) {
		t.Fatalf("%d images to mirror, want %d: %v", len(pairs), len(f.digests), pairs)
	}

	out, errOut, err := runErr(nil, rehostBin(), append([]string{"mirror", "--insecure", "--progress", "plain", f.manifest}, mapping...)...)
	if err != nil {
		t.Fatalf("rehost mirror: %v\n%s", err, errOut)
	}
	if len(out) != 0 {
		t.Errorf("rehost mirror wrote to stdout: %q", out)
	}
	if want := fmt.Sprintf("%d copied, 0 skipped, 0 failed", len(f.digests)); !bytes.Contains(errOut, []byte(want)) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}

	// Every rewritten reference resolves in the target, with the digest of
	// the source, and so does every platform of the indexes.
	refs := imageLine.FindAllStringSubmatch(string(rewritten), -1)
	checked := 0
	for _, m := range refs {
		ref := m[1]
		if !strings.HasPrefix(ref, f.dst+"/") {
			if ref != f.excluded {
				t.Errorf("%s: not rewritten", ref)
			}
			continue
		}
		src, ok := pairs[ref]
		if !ok {
			t.Errorf("%s: not in the image mapping %v", ref, pairs)
			continue
		}
		want := digestOf(t, src)
		if want == "" {
			t.Fatalf("source %s does not resolve", src)
		}
		if got := digestOf(t, ref); got != want {
			t.Errorf("%s: digest %q in the target, want the source's %s", ref, got, want)
		}
		repo := repoOf(ref)
		for _, c := range children(t, src) {
			if digestOf(t, repo+"@"+c.String()) != c.String() {
				t.Errorf("%s: platform manifest %s missing in the target", ref, c)
			}
		}
		checked++
	}
	if checked != len(f.digests) {
		t.Errorf("checked %d rewritten references, want %d", checked, len(f.digests))
	}
	if digestOf(t, f.dst+"/vendor/excluded:1") != "" {
		t.Error("the excluded image was copied")
	}

	// A re-run copies nothing.
	_, errOut = mustMirror(t, append([]string{f.manifest, "--insecure", "--progress", "plain"}, mapping...)...)
	if want := fmt.Sprintf("0 copied, %d skipped, 0 failed, 0 B", len(f.digests)); !bytes.Contains(errOut, []byte(want)) {
		t.Errorf("re-run: stderr lacks %q:\n%s", want, errOut)
	}

	// --pin prints the pinned target of every image.
	out, _ = mustMirror(t, append([]string{f.manifest, "--insecure", "--dry-run", "--pin", "--progress", "none"}, mapping...)...)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(f.digests) {
		t.Fatalf("--pin printed %d lines, want %d:\n%s", len(lines), len(f.digests), out)
	}
	for _, l := range lines {
		src, pinned, _ := strings.Cut(l, "\t")
		want := digestOf(t, src)
		if !strings.HasPrefix(pinned, f.dst+"/") || !strings.HasSuffix(pinned, "@"+want) || digestOf(t, pinned) != want {
			t.Errorf("--pin: %q does not pin %s to %s", pinned, src, want)
		}
	}

	// rewrite --pins writes the manifests with those digests: every
	// rewritten reference is pinned and resolves to its source's digest.
	pinsFile := filepath.Join(t.TempDir(), "pins.tsv")
	if err := os.WriteFile(pinsFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	pinnedManifest := run(t, nil, rehostBin(), append([]string{"rewrite", f.manifest, "--pins", pinsFile}, mapping...)...)
	pinnedRefs := 0
	for _, m := range imageLine.FindAllStringSubmatch(string(pinnedManifest), -1) {
		ref := m[1]
		if !strings.HasPrefix(ref, f.dst+"/") {
			continue
		}
		pinnedRefs++
		_, d, ok := strings.Cut(ref, "@")
		if !ok || digestOf(t, ref) != d {
			t.Errorf("rewrite --pins: %s is not pinned to the digest it resolves to", ref)
		}
	}
	if pinnedRefs != checked {
		t.Errorf("rewrite --pins: %d pinned references, want %d", pinnedRefs, checked)
	}
}

// repoOf is the repository of a reference: "h:5000/a/b:1@sha256:…" -> "h:5000/a/b".
func repoOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// mustMirror runs rehost mirror and returns its stdout and stderr.
func mustMirror(t *testing.T, args ...string) ([]byte, []byte) {
	t.Helper()
	out, errOut, err := runErr(nil, rehostBin(), append([]string{"mirror"}, args...)...)
	if err != nil {
		t.Fatalf("rehost mirror %v: %v\n%s", args, err, errOut)
	}
	return out, errOut
}

// TestMirrorOCIRoundTrip writes the images into an OCI layout and pushes
// the layout into a registry under another prefix.
func TestMirrorOCIRoundTrip(t *testing.T) {
	f := newMirrorFixture(t)
	bundle := filepath.Join(f.dir, "bundle")
	mustMirror(t, "--to-oci", bundle, "--exclude", f.src+"/vendor", "--progress", "plain", f.manifest)
	if _, err := os.Stat(filepath.Join(bundle, "index.json")); err != nil {
		t.Fatal(err)
	}
	// The other side of the air gap: another registry (here a prefix).
	_, errOut := mustMirror(t, "--from-oci", bundle, "--registry", f.dst+"/offline", "--insecure", "--progress", "plain")
	if want := fmt.Sprintf("%d copied, 0 skipped, 0 failed", len(f.digests)); !bytes.Contains(errOut, []byte(want)) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	// The manifests rewritten for that registry resolve, with the source digests.
	rewritten := run(t, nil, rehostBin(), "rewrite", "--registry", f.dst+"/offline", "--exclude", f.src+"/vendor", f.manifest)
	n := 0
	for _, m := range imageLine.FindAllStringSubmatch(string(rewritten), -1) {
		ref := m[1]
		if !strings.HasPrefix(ref, f.dst+"/offline/") {
			continue
		}
		n++
		src := f.src + strings.TrimPrefix(ref, f.dst+"/offline")
		if got, want := digestOf(t, ref), digestOf(t, src); got != want || got == "" {
			t.Errorf("%s: digest %q after the round trip, want %q", ref, got, want)
		}
	}
	if n != len(f.digests) {
		t.Errorf("checked %d references, want %d", n, len(f.digests))
	}
}

// TestMirrorMountsSharedLayers copies two images that share a large layer
// into two repositories: the second mounts it instead of uploading it.
func TestMirrorMountsSharedLayers(t *testing.T) {
	src, dst := startRegistry(t), startRegistry(t)
	layer, err := random.Layer(1<<20, types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	one, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	two, err := mutate.Config(one, v1.Config{Labels: map[string]string{"image": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, src+"/a/one:1", one)
	seed(t, src+"/b/two:1", two)
	list := filepath.Join(t.TempDir(), "imageList")
	os.WriteFile(list, []byte("# two images, one layer\n"+src+"/a/one:1\n\n"+src+"/b/two:1\n"), 0o644)
	_, errOut := mustMirror(t, "--image-list", list, "--registry", dst, "--insecure", "--jobs", "1", "--progress", "plain")
	first := regexp.MustCompile(`copied  \S+/a/one:1 -> \S+ \(sha256:\w+, ([\d.]+ MiB)\)`).FindSubmatch(errOut)
	second := regexp.MustCompile(`copied  \S+/b/two:1 -> \S+ \(sha256:\w+, ([\d.]+ (B|KiB))\)`).FindSubmatch(errOut)
	if first == nil || second == nil {
		t.Errorf("the first image should upload the 1 MiB layer, the second only its config and manifest:\n%s", errOut)
	}
	for _, r := range []string{"/a/one:1", "/b/two:1"} {
		if got, want := digestOf(t, dst+r), digestOf(t, src+r); got != want || got == "" {
			t.Errorf("%s: digest %q, want %q", r, got, want)
		}
	}
}

// TestMirrorFailureExitStatus: one missing image fails the run, after the
// others were copied, and is named on stderr.
func TestMirrorFailureExitStatus(t *testing.T) {
	src, dst := startRegistry(t), startRegistry(t)
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, src+"/ok/image:1", img)
	list := []byte(src + "/ok/image:1\n" + src + "/missing/image:1\n")
	out, errOut, err := runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", dst, "--insecure", "--progress", "plain")
	if err == nil {
		t.Fatalf("rehost mirror succeeded with a missing image:\n%s", errOut)
	}
	if len(out) != 0 {
		t.Errorf("stdout on failure: %q", out)
	}
	for _, want := range []string{"1 copied, 0 skipped, 1 failed", "mirror: 1 of 2 images failed", src + "/missing/image:1 -> " + dst + "/missing/image:1"} {
		if !bytes.Contains(errOut, []byte(want)) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if digestOf(t, dst+"/ok/image:1") == "" {
		t.Error("the good image was not copied")
	}
}

// TestMirrorDryRunAndFlags needs no registry: a dry run makes no request.
func TestMirrorDryRunAndFlags(t *testing.T) {
	// Without attachments a dry run makes no request at all (listing
	// attachments reads the sources). The plan goes to stdout, so that
	// "> plan.txt" works; stderr keeps the summary.
	list := []byte("# a sealer imageList\nnginx:1.25\n\nregistry.k8s.io/pause:3.9\nquay.io/skip/me:1\n")
	out, errOut, err := runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", "sea.hub:5000", "--exclude", "quay.io", "--dry-run", "--attachments", "none", "--progress", "plain")
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	want := "would copy docker.io/library/nginx:1.25 -> sea.hub:5000/library/nginx:1.25\n" +
		"would copy registry.k8s.io/pause:3.9 -> sea.hub:5000/pause:3.9\n"
	if string(out) != want {
		t.Errorf("dry run stdout:\n%s\nwant:\n%s", out, want)
	}
	if want := "dry run: 2 images would be copied, 0 failed\n"; string(errOut) != want {
		t.Errorf("dry run stderr:\n%s\nwant:\n%s", errOut, want)
	}
	out, errOut, _ = runErr(list, rehostBin(), "mirror", "--image-list", "-", "--to-oci", filepath.Join(t.TempDir(), "b"), "--dry-run", "--attachments", "none", "--progress", "plain")
	if !bytes.Contains(out, []byte("would copy docker.io/library/nginx:1.25 -> oci:")) {
		t.Errorf("dry run to a layout: stdout\n%s\nstderr\n%s", out, errOut)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--progress", "fancy"}, "--progress fancy"},
		{[]string{"--jobs", "0"}, "--jobs 0"},
		{[]string{"--attachments", "some"}, "--attachments some: want all, signatures or none"},
		{[]string{"--to-oci", "a", "--from-oci", "b"}, "exclude each other"},
		{[]string{"--from-oci", "b", "x.yaml"}, "takes no PATH"},
		{[]string{"--platform", "/amd64", "--image-list", "-"}, "--platform"},
		{[]string{"--ca-file", "/nonexistent/ca.pem", "--image-list", "-"}, "--ca-file"},
		{[]string{"--image-list", "-"}, "<stdin>:2"},
	} {
		_, errOut, err := runErr([]byte("nginx:1.25\nUPPER/case:1\n"), rehostBin(), append([]string{"mirror", "--dry-run", "--attachments", "none"}, c.args...)...)
		if err == nil || !bytes.Contains(errOut, []byte(c.want)) {
			t.Errorf("rehost mirror %v: err %v, stderr %q; want an error mentioning %q", c.args, err, errOut, c.want)
		}
	}
}

// TestMirrorTLSRule: TLS is required for every registry unless --insecure
// (target) or --insecure-source names it; loopback keeps plain HTTP with a
// one-line notice. A plain registry on 127.0.0.2 stands in for a private
// address.
func TestMirrorTLSRule(t *testing.T) {
	src := startRegistry(t) // plain HTTP on 127.0.0.1
	cert := selfSigned(t)
	secure := startRegistryOn(t, "127.0.0.1", cert)
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	} else {
		l.Close()
	}
	other := startRegistryOn(t, "127.0.0.2", nil)
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	digest := seed(t, src+"/team/app:1", img)
	list := []byte(src + "/team/app:1\n")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, cert.certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	notice := "notice: " + src + " is reached over plain HTTP"

	// TLS target with its CA: copied; the plain loopback source gets one
	// notice, the TLS target none.
	_, errOut, err := runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", secure, "--ca-file", ca, "--progress", "plain")
	if err != nil {
		t.Fatalf("TLS target: %v\n%s", err, errOut)
	}
	if n := strings.Count(string(errOut), notice); n != 1 {
		t.Errorf("%d notices for the plain loopback source, want 1:\n%s", n, errOut)
	}
	if strings.Contains(string(errOut), "notice: "+secure) {
		t.Errorf("notice for the TLS registry:\n%s", errOut)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cert.certPEM)
	r, _ := name.ParseReference(secure + "/team/app:1")
	if d, err := remote.Head(r, remote.WithTransport(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}})); err != nil || d.Digest.String() != digest {
		t.Errorf("TLS target: %v, %v; want %s", d, err, digest)
	}
	// Without the CA: the certificate is not trusted.
	_, errOut, err = runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", secure, "--progress", "plain")
	if err == nil || !bytes.Contains(errOut, []byte("certificate")) {
		t.Errorf("TLS target without --ca-file: %v\n%s", err, errOut)
	}

	// A plain registry that is not loopback-by-name: refused, with the fix.
	_, errOut, err = runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", other, "--progress", "plain")
	if err == nil {
		t.Fatalf("plain HTTP to %s without --insecure succeeded:\n%s", other, errOut)
	}
	for _, want := range []string{other + " speaks plain HTTP", "--insecure"} {
		if !bytes.Contains(errOut, []byte(want)) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	plainDigest := func(ref string) string {
		r, err := name.ParseReference(ref, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		d, err := remote.Head(r)
		if err != nil {
			return ""
		}
		return d.Digest.String()
	}
	if plainDigest(other+"/team/app:1") != "" {
		t.Error("the image reached the plain registry")
	}
	_, errOut, err = runErr(list, rehostBin(), "mirror", "--image-list", "-", "--registry", other, "--insecure", "--progress", "plain")
	if err != nil || plainDigest(other+"/team/app:1") != digest {
		t.Errorf("--insecure: %v\n%s", err, errOut)
	}
	// As a source, --insecure-source names it.
	list2 := []byte(other + "/team/app:1\n")
	_, errOut, err = runErr(list2, rehostBin(), "mirror", "--image-list", "-", "--registry", src+"/back", "--progress", "plain")
	if err == nil || !bytes.Contains(errOut, []byte("--insecure-source "+other)) {
		t.Errorf("plain source without --insecure-source: %v\n%s", err, errOut)
	}
	_, errOut, err = runErr(list2, rehostBin(), "mirror", "--image-list", "-", "--registry", src+"/back", "--insecure-source", other, "--progress", "plain")
	if err != nil || digestOf(t, src+"/back/team/app:1") != digest {
		t.Errorf("--insecure-source: %v\n%s", err, errOut)
	}
}
