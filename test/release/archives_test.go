package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// extract returns the one file of an archive, its mode and time, and fails
// the test when the archive holds anything else or metadata that changes
// from build to build: a gzip name or time, owners other than 0, more than
// one entry, zip extra fields (uid, gid, precise times).
func extract(t *testing.T, r *release, a archive) (data []byte, mode os.FileMode, mtime time.Time) {
	t.Helper()
	raw, err := os.ReadFile(r.path(a.name))
	if err != nil {
		t.Fatal(err)
	}
	if a.format == "zip" {
		if a.goos != "windows" {
			t.Errorf("%s: a zip for %s (zip is for windows, tar.gz for the others)", a.name, a.goos)
		}
		zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		if len(zr.File) != 1 || zr.File[0].Name != a.exe() {
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
			}
			t.Fatalf("%s holds %v, want only %s", a.name, names, a.exe())
		}
		f := zr.File[0]
		if len(f.Extra) != 0 {
			t.Errorf("%s: %s has zip extra fields (%d bytes): they carry build-machine owners and times", a.name, f.Name, len(f.Extra))
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return data, f.Mode(), f.Modified
	}
	if a.goos == "windows" {
		t.Errorf("%s: a tar.gz for windows (zip is for windows)", a.name)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", a.name, err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: gzip header has name %q and time %v (gzip -n writes neither)", a.name, zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		t.Fatalf("%s: %v", a.name, err)
	}
	if h.Name != a.exe() || h.Typeflag != tar.TypeReg || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
		t.Errorf("%s: entry %q type %c owner %d:%d (%q:%q), want %s, a regular file owned by 0:0 without names", a.name, h.Name, h.Typeflag, h.Uid, h.Gid, h.Uname, h.Gname, a.exe())
	}
	if data, err = io.ReadAll(tr); err != nil {
		t.Fatal(err)
	}
	if h2, err := tr.Next(); err != io.EOF {
		t.Errorf("%s: more than one entry (%v, %v)", a.name, h2, err)
	}
	return data, h.FileInfo().Mode(), h.ModTime
}

// setting returns a build setting of the binary's build information.
func setting(bi *buildinfo.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// readBinary writes data to a file and reads its Go build information.
func readBinary(t *testing.T, name string, data []byte) (string, *buildinfo.BuildInfo) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p, bi
}

// headCommit is the checkout's commit and its time, which a release built
// from it carries.
func headCommit(t *testing.T) (string, time.Time) {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot(), "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	hash, ct, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return hash, time.Unix(sec, 0)
}

// TestArchives: each archive holds one binary, executable, with the time
// of the commit it was built from; the binary is the command's main
// package, for the archive's platform, built with -trimpath, without cgo
// and without VCS stamp, the version and commit linked in; on this
// machine's platform it prints them.
func TestArchives(t *testing.T) {
	r := needDist(t)
	head, headTime := headCommit(t)
	var commit string
	var mtime time.Time
	for _, a := range r.archives {
		t.Run(strings.TrimSuffix(strings.TrimSuffix(a.name, ".tar.gz"), ".zip"), func(t *testing.T) {
			data, mode, mt := extract(t, r, a)
			if mode.Perm() != 0o755 {
				t.Errorf("%s: mode %v, want 0755", a.name, mode)
			}
			if mtime.IsZero() {
				mtime = mt
			}
			// zip keeps MS-DOS times: two-second steps.
			if d := mt.Sub(mtime); d > 2*time.Second || d < -2*time.Second {
				t.Errorf("%s: time %v, another archive's %v: every file has the commit's time", a.name, mt, mtime)
			}
			p, bi := readBinary(t, a.exe(), data)
			want := map[string]string{"GOOS": a.goos, "GOARCH": a.goarch, "CGO_ENABLED": "0", "-trimpath": "true", "vcs": ""}
			for k, v := range want {
				if got := setting(bi, k); got != v {
					t.Errorf("%s: build setting %s=%q, want %q", a.exe(), k, got, v)
				}
			}
			if bi.Path != moduleRoot+"/cmd/"+a.cmd || bi.Main.Path != bi.Path {
				t.Errorf("%s: main package %s of module %s, want %s/cmd/%s", a.exe(), bi.Path, bi.Main.Path, moduleRoot, a.cmd)
			}
			// -ldflags is not recorded with -trimpath: look for the
			// values in the binary.
			if !bytes.Contains(data, []byte(r.version)) {
				t.Errorf("%s: the version %s is not linked in", a.exe(), r.version)
			}
			if commit == "" {
				commit = head
				if !bytes.Contains(data, []byte(head)) {
					commit = "" // built from another commit than this checkout's
				}
			}
			if commit != "" && !bytes.Contains(data, []byte(commit)) {
				t.Errorf("%s: the commit %s is not linked in", a.exe(), commit)
			}
			if a.platform() != runtime.GOOS+"/"+runtime.GOARCH {
				return
			}
			args := []string{"version"}
			if a.cmd == "rehost-fn" {
				args = []string{"--version"}
			}
			out := run(t, nil, nil, p, args...)
			if want := a.cmd + " " + r.version + " (commit "; !strings.HasPrefix(string(out), want) {
				t.Errorf("%s %s: %q, want %q…", a.cmd, args[0], out, want)
			}
		})
	}
	if commit == head && !mtime.Equal(headTime) && mtime.Sub(headTime).Abs() > 2*time.Second {
		t.Errorf("the archives' files have the time %v, the commit %s was made at %v", mtime, head, headTime)
	}
}

// cdx is the part of a CycloneDX SBOM the test reads.
type cdx struct {
	BOMFormat   string
	SpecVersion string
	Metadata    struct {
		Component  cdxComponent
		Properties []struct{ Name, Value string }
	}
	Components []cdxComponent
}

type cdxComponent struct {
	Name, Version, Purl string
	Hashes              []struct{ Alg, Content string }
}

// TestSBOMs: each archive has a CycloneDX SBOM beside it that names the
// command's module at the release version, the archive's platform, the
// SHA-256 of the binary in the archive and exactly the modules the binary
// links (its Go build information).
func TestSBOMs(t *testing.T) {
	r := needDist(t)
	for _, a := range r.archives {
		t.Run(strings.TrimSuffix(strings.TrimSuffix(a.name, ".tar.gz"), ".zip"), func(t *testing.T) {
			raw, err := os.ReadFile(r.path(a.name + ".sbom.cdx.json"))
			if err != nil {
				t.Fatalf("the SBOM of %s: %v", a.name, err)
			}
			var s cdx
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s.sbom.cdx.json: %v", a.name, err)
			}
			data, _, _ := extract(t, r, a)
			_, bi := readBinary(t, a.exe(), data)
			c := s.Metadata.Component
			if s.BOMFormat != "CycloneDX" || c.Name != bi.Main.Path || c.Version != r.version || !strings.Contains(c.Purl, "goos="+a.goos) || !strings.Contains(c.Purl, "goarch="+a.goarch) {
				t.Errorf("%s.sbom.cdx.json: format %q, component %s %s (%s), want CycloneDX, %s %s for %s", a.name, s.BOMFormat, c.Name, c.Version, c.Purl, bi.Main.Path, r.version, a.platform())
			}
			sum := sha256.Sum256(data)
			props := map[string]string{}
			for _, p := range s.Metadata.Properties {
				props[p.Name] = p.Value
			}
			if got := props["cdx:gomod:binary:hash:SHA-256"]; got != hex.EncodeToString(sum[:]) {
				t.Errorf("%s.sbom.cdx.json: binary SHA-256 %s, the archive's binary has %s", a.name, got, hex.EncodeToString(sum[:]))
			}
			listed := map[string]bool{}
			for _, m := range s.Components {
				listed[m.Name+"@"+m.Version] = true
			}
			linked := map[string]bool{}
			for _, d := range bi.Deps {
				if d.Replace != nil {
					d = d.Replace
				}
				linked[d.Path+"@"+d.Version] = true
				if !listed[d.Path+"@"+d.Version] {
					t.Errorf("%s.sbom.cdx.json does not list %s@%s, which the binary links", a.name, d.Path, d.Version)
				}
			}
			for m := range listed {
				if !linked[m] {
					t.Errorf("%s.sbom.cdx.json lists %s, which the binary does not link", a.name, m)
				}
			}
			if len(linked) == 0 {
				t.Errorf("%s links no module", a.exe())
			}
		})
	}
}
