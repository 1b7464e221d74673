package main

import (
	"bytes"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// TestFallbackRoots: on a system without root certificates (SSL_CERT_FILE
// and SSL_CERT_DIR naming nothing, as in the release's image), rehost
// mirror trusts x/crypto's fallback roots, and its --ca-file adds to them;
// rehost rewrite, which reaches no registry, does not load them. Each case
// runs in a process of its own: the roots are set once per process.
func TestFallbackRoots(t *testing.T) {
	if os.Getenv("REHOST_ROOTS_CASE") != "" {
		fallbackRootsCase(t, os.Getenv("REHOST_ROOTS_CASE"))
		return
	}
	for _, c := range []string{"mirror", "rewrite"} {
		t.Run(c, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackRoots$", "-test.v")
			empty := t.TempDir()
			cmd.Env = append(os.Environ(), "REHOST_ROOTS_CASE="+c, "REHOST_ROOTS_DIR="+t.TempDir(),
				"SSL_CERT_FILE="+filepath.Join(empty, "none.pem"), "SSL_CERT_DIR="+empty, "GODEBUG=")
			if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("--- PASS")) {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
}

func fallbackRootsCase(t *testing.T, c string) {
	dir := os.Getenv("REHOST_ROOTS_DIR")
	list := filepath.Join(dir, "imageList")
	if err := os.WriteFile(list, []byte("nginx:1.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"rewrite", list}
	if c == "mirror" {
		args = []string{"mirror", "--dry-run", "--attachments", "none", "--image-list", list}
	}
	if code := run(args, bytes.NewReader(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("rehost %v: exit %d\n%s", args, code, stderr.String())
	}
	want := x509.NewCertPool()
	n := 0
	for r := range bundle.Roots() {
		c, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			t.Fatal(err)
		}
		want.AddCertWithConstraint(c, r.Constraint)
		n++
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		t.Fatal(err)
	}
	switch c {
	case "mirror":
		if n < 100 || !pool.Equal(want) {
			t.Errorf("after rehost mirror, the system pool is not the %d fallback roots", n)
		}
	case "rewrite":
		if !pool.Equal(x509.NewCertPool()) {
			t.Errorf("after rehost rewrite, the system pool is not empty")
		}
	}
}
