// Package release checks a release directory that make release or make
// release-snapshot wrote (make release-verify runs it with -dist): every
// artifact listed in checksums.txt with its SHA-256, the signature of
// checksums.txt, one SBOM per archive that names what the binary links,
// archives with fixed metadata, binaries built as the release builds them,
// the same bytes from a second build with an empty build cache, the
// images (rehost-fn, rehost) in a loopback registry (platforms, user,
// entrypoint, labels, the binary inside runs), and the Helm 4 plugin
// installed from its tarball by the real Helm 4.
//
// Without -dist every test skips: the directory is made by make, which
// this module does not run except to rebuild for the reproducibility check.
// Tools are looked up on PATH (cosign, registry, Helm 4 as HELM4 or
// helm4); a missing one skips its test, or fails it in CI.
package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

var (
	distFlag   = flag.String("dist", "", "the release directory to check (make release-verify passes DIST)")
	cosignPub  = flag.String("cosign-pub", "", "the public key that verifies checksums.txt.sigstore.json (empty: checksums.txt must be unsigned)")
	reproFlag  = flag.String("repro", "linux/arm64/rehost-fn", "OS/ARCH/COMMAND targets to rebuild with an empty build cache and compare, space-separated")
	commands   = []string{"rehost", "rehost-fn", "rehost-helm"}
	archiveRe  = regexp.MustCompile(`^(rehost|rehost-fn|rehost-helm)_(v[^_]+)_([a-z0-9]+)_([a-z0-9]+)\.(tar\.gz|zip)$`)
	hexCommit  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	moduleRoot = "github.com/rehost/rehost"
)

// archive is one binary's archive in the release directory.
type archive struct {
	name, cmd, version, goos, goarch, format string
}

// platform is OS/ARCH.
func (a archive) platform() string { return a.goos + "/" + a.goarch }

// exe is the binary's name in the archive.
func (a archive) exe() string {
	if a.goos == "windows" {
		return a.cmd + ".exe"
	}
	return a.cmd
}

// release is what the release directory holds.
type release struct {
	dir       string
	version   string
	archives  []archive
	checksums map[string]string // file -> sha256 hex
	plugin    string            // the Helm plugin tarball
}

// needDist returns the release directory, or skips the test without -dist.
func needDist(t *testing.T) *release {
	t.Helper()
	if *distFlag == "" {
		t.Skip("no -dist: make release-snapshot (or make release) then make release-verify checks the release directory")
	}
	r := &release{dir: *distFlag, checksums: map[string]string{}}
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if m := archiveRe.FindStringSubmatch(e.Name()); m != nil {
			r.archives = append(r.archives, archive{name: e.Name(), cmd: m[1], version: m[2], goos: m[3], goarch: m[4], format: m[5]})
		}
		if strings.HasPrefix(e.Name(), "rehost-") && strings.HasSuffix(e.Name(), ".tgz") {
			r.plugin = e.Name()
		}
	}
	if len(r.archives) == 0 {
		t.Fatalf("%s: no archive (CMD_VERSION_OS_ARCH.tar.gz or .zip)", r.dir)
	}
	r.version = r.archives[0].version
	for _, a := range r.archives {
		if a.version != r.version {
			t.Fatalf("%s: archives of two versions: %s and %s", r.dir, r.version, a.version)
		}
	}
	f, err := os.Open(filepath.Join(r.dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt: line %q is not <sha256>  <name>", sc.Text())
		}
		r.checksums[name] = sum
	}
	return r
}

// path is the path of a file of the release directory.
func (r *release) path(name string) string { return filepath.Join(r.dir, name) }

// find returns the archive of a command and platform.
func (r *release) find(cmd, platform string) (archive, bool) {
	for _, a := range r.archives {
		if a.cmd == cmd && a.platform() == platform {
			return a, true
		}
	}
	return archive{}, false
}

// repoRoot is the repository's top directory.
func repoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(here), "..", ".."))
}

// needTool returns the path of a tool on PATH; it skips the test when the
// tool is missing, or fails it in CI, where .ci/run installs every tool.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found on PATH: .ci/run installs it; CI must not skip the release checks", name)
	}
	t.Skipf("%s not found on PATH: install it (see .ci/run) to run this check", name)
	return ""
}

// run runs a command with env (nil: the test's) and returns its stdout; it
// fails the test, showing stderr, when the command fails.
func run(t *testing.T, env []string, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	out, errOut, err := runErr(env, stdin, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", name, args, err, errOut)
	}
	return out
}

func runErr(env []string, stdin []byte, name string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

func sha256File(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestChecksums: checksums.txt lists every artifact, each once, with its
// SHA-256, and nothing else; sha256sum -c, which users run, agrees.
func TestChecksums(t *testing.T) {
	r := needDist(t)
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		switch n := e.Name(); {
		case e.IsDir(), n == "checksums.txt", n == "checksums.txt.sigstore.json":
		default:
			want = append(want, n)
		}
	}
	var listed []string
	for n, sum := range r.checksums {
		listed = append(listed, n)
		if got := sha256File(t, r.path(n)); got != sum {
			t.Errorf("checksums.txt: %s %s, the file's SHA-256 is %s", n, sum, got)
		}
	}
	sort.Strings(listed)
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Errorf("checksums.txt lists\n\t%s\nthe release directory has\n\t%s", strings.Join(listed, "\n\t"), strings.Join(want, "\n\t"))
	}
	kinds := map[string]bool{}
	for _, n := range listed {
		switch {
		case archiveRe.MatchString(n):
			kinds["archive"] = true
		case strings.HasSuffix(n, ".sbom.cdx.json"):
			kinds["sbom"] = true
		case n == r.plugin:
			kinds["plugin"] = true
		case strings.HasSuffix(n, "_image-digest.txt"):
			kinds["image digest"] = true
		default:
			t.Errorf("%s: not an artifact of a release", n)
		}
	}
	for _, k := range []string{"archive", "sbom", "plugin", "image digest"} {
		if !kinds[k] {
			t.Errorf("checksums.txt lists no %s", k)
		}
	}
	cmd := exec.Command(needTool(t, "sha256sum"), "-c", "--strict", "checksums.txt")
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c checksums.txt: %v\n%s", err, out)
	}
}

// TestSignature: cosign verify-blob checks checksums.txt against its
// signature bundle with the release's public key, offline, and rejects a
// checksums.txt changed by one byte.
func TestSignature(t *testing.T) {
	r := needDist(t)
	bundle := r.path("checksums.txt.sigstore.json")
	if *cosignPub == "" {
		if _, err := os.Stat(bundle); err == nil {
			t.Fatal("checksums.txt.sigstore.json exists but no -cosign-pub (COSIGN_PUB) was given to verify it")
		}
		t.Skip("no -cosign-pub (COSIGN_PUB): the release is unsigned")
	}
	cosign := needTool(t, "cosign")
	verify := func(blob string) ([]byte, error) {
		cmd := exec.Command(cosign, "verify-blob", "--key", *cosignPub, "--bundle", bundle, "--insecure-ignore-tlog", blob)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TUF_ROOT="+t.TempDir())
		return cmd.CombinedOutput()
	}
	if out, err := verify(r.path("checksums.txt")); err != nil {
		t.Fatalf("cosign verify-blob checksums.txt: %v\n%s", err, out)
	}
	data, err := os.ReadFile(r.path("checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 1
	tampered := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(tampered, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := verify(tampered); err == nil {
		t.Errorf("cosign verify-blob accepted a changed checksums.txt:\n%s", out)
	}
}

// versionOf is the version without its leading v, as plugin.yaml has it.
func versionOf(v string) string { return strings.TrimPrefix(v, "v") }
