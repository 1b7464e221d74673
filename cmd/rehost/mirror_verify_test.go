package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// verifyKeyFiles writes a public key, its private key, and files that
// are no key.
func verifyKeyFiles(t *testing.T) map[string]string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	priv, _ := x509.MarshalECPrivateKey(k)
	dir := writeFiles(t, map[string]string{
		"cosign.pub": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		"ec.key":     string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: priv})),
		"notes.txt":  "the key is on the wiki\n",
	})
	out := map[string]string{}
	for _, f := range []string{"cosign.pub", "ec.key", "notes.txt"} {
		out[f] = filepath.Join(dir, f)
	}
	out["missing"] = filepath.Join(dir, "missing.pub")
	return out
}

// TestMirrorVerifyBadInput: a --verify-key file that is not a public key,
// a --verify value not known, --verify=warn without a key: errors naming
// the flag and the file, and nothing is copied (not even asked).
func TestMirrorVerifyBadInput(t *testing.T) {
	noDockerConfig(t)
	src := loopbackRegistry(t, nil)
	dst := loopbackRegistry(t, nil)
	pushRandom(t, src+"/team/app:1")
	keys := verifyKeyFiles(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--verify-key", keys["notes.txt"]}, "--verify-key " + keys["notes.txt"] + ": not a PEM public key"},
		{[]string{"--verify-key", keys["ec.key"]}, "--verify-key " + keys["ec.key"] + `: a private key ("EC PRIVATE KEY"), not a public key: give the public key (cosign.pub, not cosign.key)`},
		{[]string{"--verify-key", keys["cosign.pub"], "--verify-key", keys["missing"]}, "--verify-key: open " + keys["missing"] + ": no such file or directory"},
		{[]string{"--verify-key", keys["cosign.pub"], "--verify", "strict"}, "--verify strict: want enforce or warn"},
		{[]string{"--verify=warn"}, "--verify=warn: no --verify-key given"},
	} {
		args := append([]string{"mirror", "--image-list", "-", "--registry", dst, "--insecure", "--insecure-source", src, "--progress", "plain"}, c.args...)
		out, errOut, code := rehost(t, src+"/team/app:1\n", args...)
		if code == 0 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("rehost %v: exit %d, stdout %q, stderr %q; want an error containing %q", c.args, code, out, errOut, c.want)
		}
		if strings.Contains(errOut, "copied") {
			t.Errorf("rehost %v: %s", c.args, errOut)
		}
	}
	if cat := catalog(t, dst); len(cat) != 0 {
		t.Errorf("the target holds %v after bad input", cat)
	}
}

// TestMirrorVerifyUnsigned: an unsigned image is not copied, is listed
// at the end with its reason, and the exit status is 1; --verify=warn
// copies it with a warning.
func TestMirrorVerifyUnsigned(t *testing.T) {
	noDockerConfig(t)
	src := loopbackRegistry(t, nil)
	dst := loopbackRegistry(t, nil)
	pushRandom(t, src+"/team/app:1")
	keys := verifyKeyFiles(t)
	args := []string{"mirror", "--image-list", "-", "--registry", dst, "--insecure", "--insecure-source", src, "--progress", "plain", "--verify-key", keys["cosign.pub"]}
	_, errOut, code := rehost(t, src+"/team/app:1\n", args...)
	for _, want := range []string{
		"0 copied, 0 skipped, 1 failed",
		"; signatures: 0 verified, 1 not",
		"mirror: 1 of 1 images failed:\n  " + src + "/team/app:1 -> " + dst + "/team/app:1: not copied: unsigned: no cosign signature of sha256:",
		"(--verify-key; --verify=warn copies it with a warning)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != 1 || len(catalog(t, dst)) != 0 {
		t.Errorf("exit %d, target %v: want 1 and nothing copied", code, catalog(t, dst))
	}
	_, errOut, code = rehost(t, src+"/team/app:1\n", append(args, "--verify=warn")...)
	if code != 0 || !strings.Contains(errOut, "warning: "+src+"/team/app:1: copied unverified: unsigned: no cosign signature of sha256:") || !strings.Contains(errOut, "1 copied, 0 skipped, 0 failed") || !strings.Contains(errOut, "signatures: 0 verified, 1 not") {
		t.Errorf("--verify=warn: exit %d:\n%s", code, errOut)
	}
	// A dry run verifies too: nothing would be copied.
	out, errOut, code := rehost(t, src+"/team/app:1\n", append(args[:len(args):len(args)], "--dry-run")...)
	if code != 1 || out != "" || !strings.Contains(errOut, "not copied: unsigned: no cosign signature of sha256:") || !hasFacts(errOut, "dry run: 0 images and 0 attachments", "1 failed", "signatures: 0 verified, 1 not") {
		t.Errorf("--dry-run: exit %d, stdout %q:\n%s", code, out, errOut)
	}
	// Into a layout without the signatures: said.
	_, errOut, _ = rehost(t, src+"/team/app:1\n", append(args[:len(args):len(args)], "--verify=warn", "--attachments", "none", "--to-oci", filepath.Join(t.TempDir(), "layout"))...)
	if !hasFacts(errOut, "rehost: warning: --attachments none", "signatures", "--verify-key", "--to-oci") {
		t.Errorf("--attachments none --to-oci:\n%s", errOut)
	}
	help, _, _ := rehost(t, "", "mirror", "--help")
	for _, want := range []string{"--verify-key FILE", "--verify string", "Verifying signatures"} {
		if !strings.Contains(help, want) {
			t.Errorf("mirror --help does not mention %q", want)
		}
	}
}

// catalog lists the repositories of a registry.
func catalog(t *testing.T, host string) []string {
	t.Helper()
	reg, err := name.NewRegistry(host)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(t.Context(), reg)
	if err != nil {
		t.Fatal(err)
	}
	return repos
}
