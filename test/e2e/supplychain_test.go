package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// cosignEnv is a private home for cosign: its config, caches, TUF root
// and Docker config live in a temporary directory, never the user's, and
// the key password is empty.
type cosignEnv struct {
	bin  string
	dir  string // keys and predicates
	home string
}

func newCosign(t *testing.T) *cosignEnv {
	t.Helper()
	c := &cosignEnv{bin: needTool(t, "cosign"), dir: t.TempDir(), home: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(c.home, ".docker"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.home, ".docker", "config.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.run(t, "generate-key-pair")
	for _, f := range []string{"cosign.key", "cosign.pub"} {
		if _, err := os.Stat(filepath.Join(c.dir, f)); err != nil {
			t.Fatalf("cosign generate-key-pair: %v", err)
		}
	}
	return c
}

func (c *cosignEnv) env() []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if k == "HOME" || k == "DOCKER_CONFIG" || strings.HasPrefix(k, "COSIGN_") || strings.HasPrefix(k, "SIGSTORE_") || strings.HasPrefix(k, "TUF_") || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, e)
	}
	return append(env,
		"HOME="+c.home,
		"DOCKER_CONFIG="+filepath.Join(c.home, ".docker"),
		"XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(c.home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(c.home, ".local", "share"),
		"TUF_ROOT="+filepath.Join(c.home, ".sigstore", "root"),
		"SIGSTORE_NO_CACHE=true",
		"COSIGN_PASSWORD=",
		"COSIGN_YES=true",
	)
}

// run runs cosign in its key directory and returns its output; it fails
// the test when cosign fails.
func (c *cosignEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.try(args...)
	if err != nil {
		t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cosignEnv) try(args ...string) (string, error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	cmd.Env = c.env()
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// offline are the flags that keep cosign off the transparency log and
// the public-good signing config, for a loopback registry.
var offline = []string{"--tlog-upload=false", "--use-signing-config=false", "--allow-insecure-registry", "-y"}

func (c *cosignEnv) sign(t *testing.T, ref string, extra ...string) {
	t.Helper()
	c.run(t, append(append([]string{"sign", "--key", "cosign.key"}, offline...), append(extra, ref)...)...)
}

func (c *cosignEnv) attest(t *testing.T, ref string, extra ...string) {
	t.Helper()
	pred := filepath.Join(c.dir, "predicate.json")
	if err := os.WriteFile(pred, []byte(`{"buildType":"https://example.com/rehost-e2e","builder":{"id":"rehost"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c.run(t, append(append([]string{"attest", "--key", "cosign.key", "--type", "slsaprovenance", "--predicate", pred}, offline...), append(extra, ref)...)...)
}

// verify checks the signature of ref with cosign verify, offline.
func (c *cosignEnv) verify(t *testing.T, ref string, extra ...string) {
	t.Helper()
	args := append([]string{"verify", "--key", "cosign.pub", "--insecure-ignore-tlog", "--allow-insecure-registry"}, extra...)
	if out, err := c.try(append(args, ref)...); err != nil {
		t.Errorf("cosign verify %s %s: %v\n%s", strings.Join(extra, " "), ref, err, out)
	}
}

func (c *cosignEnv) verifyAttestation(t *testing.T, ref string, extra ...string) {
	t.Helper()
	args := append([]string{"verify-attestation", "--key", "cosign.pub", "--type", "slsaprovenance", "--insecure-ignore-tlog", "--allow-insecure-registry"}, extra...)
	if out, err := c.try(append(args, ref)...); err != nil {
		t.Errorf("cosign verify-attestation %s %s: %v\n%s", strings.Join(extra, " "), ref, err, out)
	}
}

// tagDigest resolves a tag; "" when it does not resolve.
func tagDigest(t *testing.T, ref string) string { return digestOf(t, ref) }

// TestMirrorSupplyChain signs and attests images with the real cosign in a
// source registry (the new bundle format, stored as OCI 1.1 referrers, and
// the legacy .sig/.att tags; a per-platform signature; a signature of a
// signature), mirrors them with rehost, and verifies the rewritten
// references in the target with cosign; then again after --to-oci and
// --from-oci into a third registry.
func TestMirrorSupplyChain(t *testing.T) {
	cs := newCosign(t)
	src, dst, third := startRegistry(t), startRegistry(t), startRegistry(t)

	// A multi-platform index, signed and attested in the new bundle
	// format (referrers), and one of its platforms signed in the legacy
	// format (a .sig tag on the platform manifest).
	index := seedIndex(t, src+"/team/app:1.0", "linux/amd64", "linux/arm64")
	child := children(t, src+"/team/app:1.0")[1].String()
	cs.sign(t, src+"/team/app@"+index)
	cs.attest(t, src+"/team/app@"+index)
	cs.sign(t, src+"/team/app@"+child, "--new-bundle-format=false")
	// A single image with legacy .sig and .att tags, and a signature of
	// its signature manifest.
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	single := seed(t, src+"/tools/single:0.1", img)
	cs.sign(t, src+"/tools/single@"+single, "--new-bundle-format=false")
	cs.attest(t, src+"/tools/single@"+single, "--new-bundle-format=false")
	sigTag := "sha256-" + strings.TrimPrefix(single, "sha256:") + ".sig"
	sigOfSingle := tagDigest(t, src+"/tools/single:"+sigTag)
	if sigOfSingle == "" {
		t.Fatalf("cosign wrote no %s tag", sigTag)
	}
	cs.sign(t, src+"/tools/single@"+sigOfSingle, "--new-bundle-format=false")
	// The source verifies, in both formats: the test would prove nothing
	// otherwise.
	cs.verify(t, src+"/team/app@"+index)
	cs.verifyAttestation(t, src+"/team/app@"+index)
	cs.verify(t, src+"/team/app@"+child, "--new-bundle-format=false")
	cs.verify(t, src+"/tools/single@"+single, "--new-bundle-format=false")
	cs.verifyAttestation(t, src+"/tools/single@"+single, "--new-bundle-format=false")
	if t.Failed() {
		t.FailNow()
	}

	dir := t.TempDir()
	manifest := filepath.Join(dir, "deploy.yaml")
	doc := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - name: app\n    image: %s/team/app:1.0\n  - name: single\n    image: %s/tools/single:0.1\n", src, src)
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}

	// The dry run lists the attachments on stdout.
	plan, errOut := mustMirror(t, manifest, "--registry", dst, "--dry-run", "--progress", "plain")
	for _, want := range []string{
		"would copy " + src + "/team/app:1.0 -> " + dst + "/team/app:1.0\n",
		"  would copy signature " + src + "/team/app@sha256:",
		"  would copy attestation " + src + "/team/app@sha256:",
		"  would copy signature " + src + "/team/app:sha256-" + strings.TrimPrefix(child, "sha256:") + ".sig -> " + dst + "/team/app:sha256-",
		"  would copy signature " + src + "/tools/single:" + sigTag + " -> " + dst + "/tools/single:" + sigTag + "\n",
		"  would copy attestation " + src + "/tools/single:sha256-" + strings.TrimPrefix(single, "sha256:") + ".att",
		"  would copy signature " + src + "/tools/single:sha256-" + strings.TrimPrefix(sigOfSingle, "sha256:") + ".sig",
	} {
		if !strings.Contains(string(plan), want) {
			t.Errorf("dry-run plan lacks %q:\n%s\nstderr:\n%s", want, plan, errOut)
		}
	}
	if digestOf(t, dst+"/team/app:1.0") != "" {
		t.Fatal("the dry run copied")
	}

	// Mirror, then verify the rewritten references in the target.
	_, errOut = mustMirror(t, manifest, "--registry", dst, "--progress", "plain")
	if !regexp.MustCompile(`2 copied, 0 skipped, 0 failed, .*; attachments: 6 copied, 0 skipped, 0 failed`).Match(errOut) {
		t.Errorf("summary: want 2 images and 6 attachments copied:\n%s", errOut)
	}
	verifyAll := func(reg string) {
		t.Helper()
		cs.verify(t, reg+"/team/app@"+index)
		cs.verifyAttestation(t, reg+"/team/app@"+index)
		cs.verify(t, reg+"/team/app@"+child, "--new-bundle-format=false")
		cs.verify(t, reg+"/tools/single@"+single, "--new-bundle-format=false")
		cs.verifyAttestation(t, reg+"/tools/single@"+single, "--new-bundle-format=false")
		cs.verify(t, reg+"/tools/single@"+sigOfSingle, "--new-bundle-format=false")
		// The rewritten tag resolves to the signed digest.
		for ref, want := range map[string]string{reg + "/team/app:1.0": index, reg + "/tools/single:0.1": single} {
			if got := digestOf(t, ref); got != want {
				t.Errorf("%s: %q, want %s", ref, got, want)
			}
		}
	}
	verifyAll(dst)

	// A re-run skips the images and their attachments.
	_, errOut = mustMirror(t, manifest, "--registry", dst, "--progress", "plain")
	if !bytes.Contains(errOut, []byte("0 copied, 2 skipped, 0 failed, 0 B")) || !bytes.Contains(errOut, []byte("attachments: 0 copied, 6 skipped, 0 failed")) {
		t.Errorf("re-run:\n%s", errOut)
	}

	// Across the air gap: a layout, then a third registry.
	bundle := filepath.Join(dir, "bundle")
	_, errOut = mustMirror(t, manifest, "--to-oci", bundle, "--progress", "plain")
	if !bytes.Contains(errOut, []byte("attachments: 6 copied")) {
		t.Errorf("--to-oci:\n%s", errOut)
	}
	_, errOut = mustMirror(t, "--from-oci", bundle, "--registry", third+"/offline", "--progress", "plain")
	if !bytes.Contains(errOut, []byte("2 copied, 0 skipped, 0 failed")) || !bytes.Contains(errOut, []byte("attachments: 6 copied, 0 skipped, 0 failed")) {
		t.Errorf("--from-oci:\n%s", errOut)
	}
	verifyAll(third + "/offline")

	// Nothing was lost in the third registry either: its tags are the
	// source's, under the prefix.
	for _, repo := range []string{"team/app", "tools/single"} {
		want := listTags(t, src+"/"+repo)
		if got := listTags(t, third+"/offline/"+repo); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: tags %v after the round trip, want the source's %v", repo, got, want)
		}
	}
}

func listTags(t *testing.T, repo string) []string {
	t.Helper()
	r, err := name.NewRepository(repo)
	if err != nil {
		t.Fatal(err)
	}
	tags, err := remote.List(r)
	if err != nil {
		t.Fatalf("tags of %s: %v", repo, err)
	}
	return tags
}
