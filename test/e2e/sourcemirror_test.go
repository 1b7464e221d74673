package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// seedInsecure pushes an image or index over plain HTTP to a registry
// that is not loopback by name (127.0.0.2), and returns its digest.
func seedInsecure(t *testing.T, ref string, x remote.Taggable) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Push(r, x); err != nil {
		t.Fatalf("seeding %s: %v", ref, err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

// randomIndex is a multi-platform index of random images.
func randomIndex(t *testing.T, platforms ...string) v1.ImageIndex {
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
	return mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
}

// seedTLS pushes an image to a registry over TLS with the certificate of
// cert, and returns its digest.
func seedTLS(t *testing.T, cert *registryTLS, ref string, x remote.Taggable) string {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cert.certPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Push(r, x, remote.WithTransport(tr)); err != nil {
		t.Fatalf("seeding %s: %v", ref, err)
	}
	d, err := remote.Head(r, remote.WithTransport(tr))
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

// authProxy is a registry behind basic authentication: a reverse proxy
// on a free loopback port that asks for user:password and forwards to
// the registry at host. It returns the proxy's host.
func authProxy(t *testing.T, host, user, password string) string {
	t.Helper()
	u, _ := url.Parse("http://" + host)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="corporate mirror"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	pu, _ := url.Parse(srv.URL)
	return pu.Host
}

// dockerConfig writes a Docker config with credentials for host and
// returns its directory, for DOCKER_CONFIG.
func dockerConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runIn runs a command with env added to the environment (replacing
// DOCKER_CONFIG and HOME's Docker config when given).
func runIn(env []string, stdin []byte, name string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// craneDigest resolves a reference with the real crane (plain HTTP
// allowed), "" when it does not resolve.
func craneDigest(t *testing.T, ref string) string {
	t.Helper()
	out, _, err := runErr(nil, needTool(t, "crane"), "digest", "--insecure", ref)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestMirrorSourceMirrors: manifests name docker.io/…, quay.io/… and
// registry.k8s.io/… images, which this machine cannot reach; a corporate
// mirror holds copies under dockerhub/ and q/ (plain HTTP on 127.0.0.2:
// --insecure-source names it), quay.io/jetstack has a mirror of its own
// behind credentials (the Docker config's), registry.k8s.io one over TLS
// with a private CA (--ca-file). rehost mirror reads every image from its
// mirror (the longest prefix), its signature too, and copies them to the
// targets rehost rewrite writes, with the digests of the copies; an
// image a mirror lacks is read from its own registry, with a warning,
// unless --source-mirror-only; names stay the sources' through an
// archive and back.
func TestMirrorSourceMirrors(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	} else {
		l.Close()
	}
	cs := newCosign(t)
	corp := startRegistryOn(t, "127.0.0.2", nil)
	cert := selfSigned(t)
	k8s := startRegistryOn(t, "127.0.0.1", cert)
	behind := startRegistry(t)
	jetstack := authProxy(t, behind, "robot", "s3cret-robot")
	origin, dst := startRegistry(t), startRegistry(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, cert.certPEM, 0o644); err != nil {
		t.Fatal(err)
	}

	img := func() v1.Image {
		i, err := random.Image(1024, 1)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	want := map[string]string{} // source as the manifests write it -> digest of the copy it must get
	want["docker.io/library/nginx:1.25"] = seedInsecure(t, corp+"/dockerhub/library/nginx:1.25", randomIndex(t, "linux/amd64", "linux/arm64"))
	want["docker.io/bitnami/redis:7.2"] = seedInsecure(t, corp+"/dockerhub/bitnami/redis:7.2", img())
	want["quay.io/prometheus/prometheus:v2.53.0"] = seedInsecure(t, corp+"/q/prometheus/prometheus:v2.53.0", img())
	// quay.io/jetstack: its own mirror wins over quay.io's, which holds
	// another image under the same path.
	want["quay.io/jetstack/cert-manager-controller:v1.15.0"] = seed(t, behind+"/jetstack/cert-manager-controller:v1.15.0", randomIndex(t, "linux/amd64"))
	decoy := seedInsecure(t, corp+"/q/jetstack/cert-manager-controller:v1.15.0", img())
	want["registry.k8s.io/pause:3.9"] = seedTLS(t, cert, k8s+"/k8s/pause:3.9", img())
	// A private registry this machine reaches, with a pull-through cache
	// in the corporate mirror: what the cache holds is read from it, what
	// it lacks from the registry itself.
	want[origin+"/team/cached:1"] = seedInsecure(t, corp+"/cache/team/cached:1", img())
	seed(t, origin+"/team/cached:1", img())
	want[origin+"/team/fresh:1"] = seed(t, origin+"/team/fresh:1", img())
	// nginx is signed in the mirror (cosign's .sig tag): the signature
	// comes with it.
	cs.sign(t, corp+"/dockerhub/library/nginx@"+want["docker.io/library/nginx:1.25"], "--new-bundle-format=false", "--allow-http-registry")

	dir := t.TempDir()
	manifest := filepath.Join(dir, "deploy.yaml")
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n")
	i := 0
	for _, src := range []string{"nginx:1.25", "bitnami/redis:7.2", "quay.io/prometheus/prometheus:v2.53.0", "quay.io/jetstack/cert-manager-controller:v1.15.0", "registry.k8s.io/pause:3.9", origin + "/team/cached:1", origin + "/team/fresh:1"} {
		fmt.Fprintf(&b, "      - name: c%d\n        image: %s\n", i, src)
		i++
	}
	if err := os.WriteFile(manifest, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mirrors := []string{
		"--source-mirror", "docker.io=" + corp + "/dockerhub",
		"--source-mirror", "quay.io=" + corp + "/q",
		"--source-mirror", "quay.io/jetstack=" + jetstack + "/jetstack",
		"--source-mirror", "registry.k8s.io=" + k8s + "/k8s",
		"--source-mirror", origin + "=" + corp + "/cache",
		"--insecure-source", corp, "--ca-file", ca,
	}
	creds := []string{"DOCKER_CONFIG=" + dockerConfig(t, jetstack, "robot", "s3cret-robot")}

	// The targets are rehost rewrite's, mirrors or not.
	pairs := map[string]string{} // source -> target
	for _, line := range strings.Split(strings.TrimSpace(string(run(t, nil, rehostBin(), "images", "-o", "mapping", "--registry", dst, manifest))), "\n") {
		src, tgt, _ := strings.Cut(line, "\t")
		pairs[src] = tgt
	}
	if len(pairs) != len(want) {
		t.Fatalf("mapping %v, want %d images", pairs, len(want))
	}

	// The plan says where each image is read from.
	plan, errOut, err := runIn(creds, nil, rehostBin(), append([]string{"mirror", "--registry", dst, "--dry-run", "--attachments", "none", "--progress", "plain", manifest}, mirrors...)...)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	for _, w := range []string{
		"would copy docker.io/library/nginx:1.25 -> " + pairs["docker.io/library/nginx:1.25"] + " from " + corp + "/dockerhub/library/nginx:1.25\n",
		"would copy quay.io/jetstack/cert-manager-controller:v1.15.0 -> " + pairs["quay.io/jetstack/cert-manager-controller:v1.15.0"] + " from " + jetstack + "/jetstack/cert-manager-controller:v1.15.0\n",
		"would copy registry.k8s.io/pause:3.9 -> " + pairs["registry.k8s.io/pause:3.9"] + " from " + k8s + "/k8s/pause:3.9\n",
	} {
		if !strings.Contains(string(plan), w) {
			t.Errorf("plan lacks %q:\n%s", w, plan)
		}
	}

	_, errOut, err = runIn(creds, nil, rehostBin(), append([]string{"mirror", "--registry", dst, "--progress", "plain", manifest}, mirrors...)...)
	if err != nil {
		t.Fatalf("rehost mirror: %v\n%s", err, errOut)
	}
	if !bytes.Contains(errOut, []byte("7 copied, 0 skipped, 0 failed")) || !bytes.Contains(errOut, []byte("attachments: 1 copied")) {
		t.Errorf("summary:\n%s", errOut)
	}
	if w := "warning: " + origin + "/team/fresh:1: not in the source mirror (" + corp + "/cache/team/fresh:1): read from " + origin + "/team/fresh:1"; !bytes.Contains(errOut, []byte(w)) || bytes.Count(errOut, []byte("warning: ")) != 1 {
		t.Errorf("stderr lacks the one warning %q:\n%s", w, errOut)
	}
	for src, d := range want {
		if got := craneDigest(t, pairs[src]); got != d {
			t.Errorf("%s -> %s: %q in the target, want %s", src, pairs[src], got, d)
		}
	}
	if craneDigest(t, pairs["quay.io/jetstack/cert-manager-controller:v1.15.0"]) == decoy {
		t.Error("quay.io/jetstack was read from quay.io's mirror, not its own (the longest prefix)")
	}
	// The signature came from the mirror and verifies at the target.
	cs.verify(t, repoOf(pairs["docker.io/library/nginx:1.25"])+"@"+want["docker.io/library/nginx:1.25"], "--new-bundle-format=false")

	// Mirror only: the image the cache lacks fails, and says why; the
	// others are copied.
	dst2 := startRegistry(t)
	_, errOut, err = runIn(creds, nil, rehostBin(), append([]string{"mirror", "--registry", dst2, "--progress", "plain", "--source-mirror-only", manifest}, mirrors...)...)
	if err == nil || !bytes.Contains(errOut, []byte("6 copied, 0 skipped, 1 failed")) || !bytes.Contains(errOut, []byte("not in the source mirror ("+corp+"/cache/team/fresh:1: ")) || !bytes.Contains(errOut, []byte("(--source-mirror-only)")) {
		t.Errorf("--source-mirror-only: %v\n%s", err, errOut)
	}
	if craneDigest(t, dst2+"/team/fresh:1") != "" {
		t.Error("--source-mirror-only: the image the mirror lacks was copied")
	}

	// Without the mirror's credentials, without its CA, without naming
	// the plain mirror insecure: those images fail (their registries are
	// never tried instead); the failure names the mirror.
	for _, c := range []struct {
		drop, env []string
		src, want string
	}{
		{env: []string{"DOCKER_CONFIG=" + t.TempDir()}, src: "quay.io/jetstack/cert-manager-controller:v1.15.0", want: "UNAUTHORIZED"},
		{drop: []string{"--ca-file", ca}, env: creds, src: "registry.k8s.io/pause:3.9", want: "certificate"},
		{drop: []string{"--insecure-source", corp}, env: creds, src: "docker.io/bitnami/redis:7.2", want: "--insecure-source " + corp},
	} {
		var args []string
		for i := 0; i < len(mirrors); i++ {
			if i+1 < len(mirrors) && len(c.drop) == 2 && mirrors[i] == c.drop[0] && mirrors[i+1] == c.drop[1] {
				i++
				continue
			}
			args = append(args, mirrors[i])
		}
		d := startRegistry(t)
		_, errOut, err := runIn(c.env, nil, rehostBin(), append([]string{"mirror", "--registry", d, "--progress", "plain", manifest}, args...)...)
		line := "failed  " + c.src + " -> " + strings.Replace(pairs[c.src], dst, d, 1) + " from "
		if err == nil || !bytes.Contains(errOut, []byte(line)) || !bytes.Contains(errOut, []byte(c.want)) || bytes.Contains(errOut, []byte("s3cret-robot")) {
			t.Errorf("%s without %v: %v; want %q and %q:\n%s", c.src, c.drop, err, line, c.want, errOut)
		}
	}

	// Across the gap: the archive names the sources, never the mirrors,
	// and pushes the same digests to the same targets.
	bundle := filepath.Join(dir, "bundle.tar")
	_, errOut, err = runIn(creds, nil, rehostBin(), append([]string{"mirror", "--to-archive", bundle, "--progress", "plain", manifest}, mirrors...)...)
	if err != nil {
		t.Fatalf("--to-archive: %v\n%s", err, errOut)
	}
	index := run(t, nil, "tar", "-xOf", bundle, "index.json")
	for _, host := range []string{corp, jetstack, k8s} {
		if bytes.Contains(index, []byte(host)) {
			t.Errorf("the archive's index.json names the mirror %s:\n%s", host, index)
		}
	}
	if !bytes.Contains(index, []byte(`"docker.io/library/nginx:1.25"`)) || !bytes.Contains(index, []byte(`"docker.io/library/nginx:sha256-`)) {
		t.Errorf("the archive's index.json does not name the sources:\n%s", index)
	}
	dst3 := startRegistry(t)
	mustMirror(t, "--from-archive", bundle, "--registry", dst3, "--progress", "plain")
	for src, d := range want {
		if got := craneDigest(t, strings.Replace(pairs[src], dst, dst3, 1)); got != d {
			t.Errorf("after the archive, %s: %q, want %s", src, got, d)
		}
	}
}
