package mirror

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/pkg/rewrite"
)

// archiveFixture is the fixture's images (three, two of them indexes), a
// larger image (about 1.2 MB, so that 1 MiB parts make two), a cosign
// signature and an attestation referrer of the first index, and a chart
// relocated for sea.hub:5000.
type archiveFixture struct {
	*fixture
	jobs []Job
	big  string // the larger image's source
}

func newArchiveFixture(t *testing.T) *archiveFixture {
	t.Helper()
	f := &archiveFixture{fixture: newFixture(t)}
	f.big = f.src.host + "/team/big:1"
	f.digests[f.big] = push(t, f.big, randomImage(t, 400<<10, 3))
	f.sources = append(f.sources, f.big)
	app := f.src.host + "/team/app"
	tagAttach(t, app, f.digests[app+":1.0"], "sig")
	referrer(t, app, f.digests[app+":1.0"], bundleType, map[string]string{sigstorePredicateType: "https://slsa.dev/provenance/v1"})
	mp := mapper(t, rewrite.Config{Registry: "sea.hub:5000"})
	c := newChart(t, shopArchive(t), nil)
	c.Relocated = RelocationFor(mp)
	f.jobs = append(f.fixture.jobs(t, rewrite.Config{Registry: "sea.hub:5000"}), ChartJob("charts/shop", c, mp.ChartsRepository()))
	f.src.resetLog()
	return f
}

// files lists the regular files under dir with their content.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// archiveBytes is the concatenation of the files an archive's checksum
// file lists, in order.
func archiveBytes(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(checksumName(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		_, name, _ := strings.Cut(l, "  ")
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// untar extracts a trusted archive (regular files and directories) into
// dir, and returns its headers in order.
func untar(t *testing.T, data []byte, dir string) []*tar.Header {
	t.Helper()
	var hs []*tar.Header
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hs
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, b)
		default:
			t.Fatalf("entry %s of type %c", h.Name, h.Typeflag)
		}
	}
}

// sha256sum checks an archive's checksum file as sha256sum -c would:
// every line's file beside it has that SHA-256.
func sha256sum(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(checksumName(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok || strings.Contains(name, "/") {
			t.Fatalf("checksum line %q", l)
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: checksum does not match", name)
		}
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestArchiveRoundTrip: ExportArchive in 1 MiB parts writes exactly what
// Export writes into a directory (extracted, every file is the same), in
// a fixed order with fixed metadata, with a checksum file that checks;
// ImportArchive pushes it, attachments and chart included, and a second
// run skips everything.
func TestArchiveRoundTrip(t *testing.T) {
	f := newArchiveFixture(t)
	dir := t.TempDir()
	layoutDir := filepath.Join(dir, "layout")
	s, err := newMirror(t, Options{}).Export(context.Background(), f.jobs, layoutDir)
	if err != nil || s.Err() != nil {
		t.Fatal(err, s.Err())
	}
	path := filepath.Join(dir, "bundle.tar")
	ev := &partEvents{}
	// Manifests and configs over 100 KiB go to the spill file.
	defer func(m int64) { memBlob = m }(memBlob)
	memBlob = 100 << 10
	s, err = newMirror(t, Options{Reporter: ev}).ExportArchive(context.Background(), f.jobs, path, ArchiveOptions{PartSize: MinPartSize})
	if err != nil || s.Err() != nil || s.Copied != 4 || s.Charts.Copied != 1 || s.Attachments.Copied != 2 {
		t.Fatalf("export: %d copied, charts %+v, attachments %+v: %v %v", s.Copied, s.Charts, s.Attachments, err, s.Err())
	}
	for _, r := range s.Results {
		if r.Destination != "oci-archive:"+path {
			t.Errorf("destination %q", r.Destination)
		}
	}
	if got, want := dirNames(t, dir), []string{"bundle.tar.part000", "bundle.tar.part001", "bundle.tar.sha256", "layout"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v (no spill file, no temporary file, no bundle.tar)", got, want)
	}
	for _, p := range []string{"bundle.tar.part000", "bundle.tar.part001"} {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.Size() > MinPartSize {
			t.Errorf("%s: %v, %v bytes", p, err, st.Size())
		}
	}
	if want := []string{path + ".part000", path + ".part001", path + ".sha256"}; strings.Join(ev.written, " ") != strings.Join(want, " ") {
		t.Errorf("parts reported %v, want %v", ev.written, want)
	}
	sha256sum(t, path)

	data := archiveBytes(t, path)
	out := t.TempDir()
	hs := untar(t, data, out)
	if got, want := files(t, out), files(t, layoutDir); len(got) != len(want) {
		t.Errorf("%d files extracted, Export wrote %d", len(got), len(want))
	} else {
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("%s differs from Export's", name)
			}
		}
	}
	// Fixed order and metadata.
	if hs[0].Name != "oci-layout" || hs[1].Name != "blobs/" || hs[2].Name != "blobs/sha256/" || hs[len(hs)-1].Name != "index.json" {
		t.Errorf("entries begin %s %s %s and end %s", hs[0].Name, hs[1].Name, hs[2].Name, hs[len(hs)-1].Name)
	}
	for _, h := range hs {
		mode := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			mode = 0o755
		}
		if !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.Mode != mode {
			t.Errorf("%s: mtime %v, owner %d:%d %q:%q, mode %o", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, h.Mode)
		}
	}
	// go-containerregistry reads the extracted layout: its images
	// validate, and every blob matches its name.
	validateLayout(t, out)

	// Pushed as it is, into another registry: the digests are the
	// sources'.
	mp := mapper(t, rewrite.Config{Registry: "sea.hub:5000"})
	push := &PushRegistry{Name: mp.Root(), Address: f.dst.host}
	s, err = newMirror(t, Options{PushRegistry: push, Reporter: ev}).ImportArchive(context.Background(), path, mp)
	if err != nil || s.Err() != nil || s.Copied != 4 || s.Charts.Copied != 1 || s.Attachments.Copied != 2 {
		t.Fatalf("import: %d copied, charts %+v, attachments %+v: %v %v", s.Copied, s.Charts, s.Attachments, err, s.Err())
	}
	for src, d := range f.digests {
		at := f.dst.host + strings.TrimPrefix(src, f.src.host)
		if got := head(t, at); got != d {
			t.Errorf("%s: %q, want %s", at, got, d)
		}
	}
	if last := ev.checks[len(ev.checks)-1]; last.Checked != 2 || last.Files != 2 || last.Bytes != int64(len(data)) || last.Total != int64(len(data)) {
		t.Errorf("last check progress %+v", last)
	}
	s, err = newMirror(t, Options{PushRegistry: push}).ImportArchive(context.Background(), path, mp)
	if err != nil || s.Skipped != 4 || s.Charts.Skipped != 1 || s.Attachments.Skipped != 2 {
		t.Errorf("second import: %d skipped, charts %+v, attachments %+v, %v", s.Skipped, s.Charts, s.Attachments, err)
	}
}

// validateLayout reads the layout at dir with go-containerregistry's
// layout package: every image (of index.json and of its indexes) has its
// config and layers, of their declared sizes, and every blob matches its
// digest.
func validateLayout(t *testing.T, dir string) {
	t.Helper()
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(ii v1.ImageIndex)
	images := 0
	walk = func(ii v1.ImageIndex) {
		im, err := ii.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range im.Manifests {
			switch {
			case d.MediaType.IsIndex():
				child, err := ii.ImageIndex(d.Digest)
				if err != nil {
					t.Fatal(err)
				}
				walk(child)
			case d.MediaType.IsImage():
				img, err := ii.Image(d.Digest)
				if err != nil {
					t.Fatal(err)
				}
				m, err := img.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				images++
				for _, b := range append([]v1.Descriptor{m.Config}, m.Layers...) {
					l, err := img.LayerByDigest(b.Digest)
					if err == nil && b.Digest == m.Config.Digest {
						_, err = img.RawConfigFile()
					} else if err == nil {
						var rc io.ReadCloser
						if rc, err = l.Compressed(); err == nil {
							var n int64
							n, err = io.Copy(io.Discard, rc)
							rc.Close()
							if err == nil && n != b.Size {
								err = fmt.Errorf("%d bytes, want %d", n, b.Size)
							}
						}
					}
					if err != nil {
						t.Errorf("image %s: blob %s: %v", d.Digest, b.Digest, err)
					}
				}
			}
		}
	}
	walk(ii)
	if images == 0 {
		t.Error("no image validated")
	}
	for name, b := range files(t, dir) {
		if hexd, ok := strings.CutPrefix(name, "blobs/sha256/"); ok {
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexd {
				t.Errorf("%s does not match its digest", name)
			}
		}
	}
}

// partEvents records what a PartReporter is told.
type partEvents struct {
	events
	checks    []CheckProgress
	written   []string
	notices   []string
	unchecked []string // Notice.Unchecked
}

func (p *partEvents) CheckProgress(c CheckProgress)    { p.checks = append(p.checks, c) }
func (p *partEvents) PartWritten(path string, _ int64) { p.written = append(p.written, path) }
func (p *partEvents) Notice(n Notice) {
	p.notices = append(p.notices, n.Msg)
	if n.Unchecked != "" {
		p.unchecked = append(p.unchecked, n.Unchecked)
	}
}

// TestArchiveDeterministic: the same images give the same bytes, whatever
// order the jobs are given in and finish in (one at a time, or four, with
// the first image's blobs slowed down so that later ones finish first),
// and wherever the plan kept their manifests and configs (in memory, in
// the spill file, or both).
func TestArchiveDeterministic(t *testing.T) {
	f := newArchiveFixture(t)
	dir := t.TempDir()
	var first []byte
	defer func(b, m int64) { memBudget, memBlob = b, m }(memBudget, memBlob)
	for i, c := range []struct {
		jobs   int
		slow   bool
		budget int64 // of the plan in memory
	}{{1, false, memBudget}, {4, true, 0}, {2, false, 600 << 10}} {
		memBudget = c.budget
		jobs := append([]Job{}, f.jobs...)
		if i == 1 {
			for l, r := 0, len(jobs)-1; l < r; l, r = l+1, r-1 {
				jobs[l], jobs[r] = jobs[r], jobs[l]
			}
		}
		f.src.setInject(nil)
		if c.slow {
			f.src.delay = 0
			f.src.setInject(func(r *http.Request) int {
				if strings.Contains(r.URL.Path, "/library/base/blobs/") {
					time.Sleep(20 * time.Millisecond)
				}
				return 0
			})
		}
		path := filepath.Join(dir, fmt.Sprintf("bundle%d.tar", i))
		s, err := newMirror(t, Options{Jobs: c.jobs}).ExportArchive(context.Background(), jobs, path, ArchiveOptions{})
		if err != nil || s.Err() != nil {
			t.Fatal(err, s.Err())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Errorf("run %d (%d jobs): the archive differs", i, c.jobs)
		}
	}
	f.src.setInject(nil)
}

// TestArchiveSingleFile: without a part size, FILE and FILE.sha256 with
// one line.
func TestArchiveSingleFile(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tar")
	s, err := newMirror(t, Options{}).ExportArchive(context.Background(), f.jobs(t, rewrite.Config{}), path, ArchiveOptions{})
	if err != nil || s.Err() != nil {
		t.Fatal(err, s.Err())
	}
	if got := dirNames(t, dir); strings.Join(got, " ") != "b.tar b.tar.sha256" {
		t.Errorf("files %v", got)
	}
	raw, _ := os.ReadFile(path + ".sha256")
	sum := sha256.Sum256(archiveBytes(t, path))
	if want := hex.EncodeToString(sum[:]) + "  b.tar\n"; string(raw) != want {
		t.Errorf("checksum file %q, want %q", raw, want)
	}
}

// TestArchiveNeverOverwrites: an archive, its checksum file or a part at
// the path stops ExportArchive before anything is read; Force replaces
// them all, old parts included.
func TestArchiveNeverOverwrites(t *testing.T) {
	f := newFixture(t)
	jobs := f.jobs(t, rewrite.Config{})
	for _, existing := range []string{"b.tar", "b.tar.sha256", "b.tar.part003"} {
		t.Run(existing, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "b.tar")
			writeFile(t, filepath.Join(dir, existing), []byte("precious"))
			f.src.resetLog()
			_, err := newMirror(t, Options{}).ExportArchive(context.Background(), jobs, path, ArchiveOptions{})
			var ee *ExistsError
			if !errors.As(err, &ee) || len(ee.Paths) != 1 || ee.Paths[0] != filepath.Join(dir, existing) {
				t.Fatalf("error %v, want an ExistsError naming %s", err, existing)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, existing)); string(b) != "precious" {
				t.Error("the existing file changed")
			}
			if got := dirNames(t, dir); len(got) != 1 {
				t.Errorf("files %v", got)
			}
			if n := len(f.src.methods()); n != 0 {
				t.Errorf("the sources were read: %v", f.src.methods())
			}
			s, err := newMirror(t, Options{}).ExportArchive(context.Background(), jobs, path, ArchiveOptions{Force: true})
			if err != nil || s.Err() != nil {
				t.Fatal(err, s.Err())
			}
			if got := dirNames(t, dir); strings.Join(got, " ") != "b.tar b.tar.sha256" {
				t.Errorf("after Force: %v", got)
			}
			sha256sum(t, path)
		})
	}
	if _, err := newMirror(t, Options{}).ExportArchive(context.Background(), jobs, filepath.Join(t.TempDir(), "x"), ArchiveOptions{PartSize: MinPartSize - 1}); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("part size below the minimum: %v", err)
	}
}

// TestArchiveIncompleteRemoved: when a job fails, or the run is
// cancelled, nothing is left: no part, no checksum file, no spill file.
func TestArchiveIncompleteRemoved(t *testing.T) {
	f := newArchiveFixture(t)
	for _, c := range []string{"missing image", "canceled", "blob cut"} {
		t.Run(c, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "b.tar")
			jobs := append([]Job{}, f.jobs...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch c {
			case "missing image":
				jobs = append(jobs, Job{Source: f.src.host + "/no/such:1", Target: "sea.hub:5000/no/such:1"})
			case "canceled":
				f.src.setInject(func(r *http.Request) int {
					if strings.Contains(r.URL.Path, "/team/big/blobs/") {
						cancel()
					}
					return 0
				})
			case "blob cut":
				f.src.setInject(func(r *http.Request) int {
					if strings.Contains(r.URL.Path, "/team/big/blobs/") {
						return http.StatusBadRequest
					}
					return 0
				})
			}
			defer f.src.setInject(nil)
			s, err := newMirror(t, Options{}).ExportArchive(ctx, jobs, path, ArchiveOptions{PartSize: MinPartSize})
			if err != nil {
				t.Fatal(err)
			}
			if s.Failed == 0 {
				t.Errorf("no failure reported")
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("left behind: %v", got)
			}
		})
	}
}

// writeParts writes data as the archive at path: in parts of size bytes
// (0: one file) and its checksum file.
func writeParts(t *testing.T, path string, data []byte, size int) {
	t.Helper()
	var sums strings.Builder
	add := func(p string, b []byte) {
		writeFile(t, p, b)
		s := sha256.Sum256(b)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(s[:]), filepath.Base(p))
	}
	if size == 0 {
		add(path, data)
	} else {
		for i := 0; len(data) > 0; i++ {
			n := min(size, len(data))
			add(partName(path, i), data[:n])
			data = data[n:]
		}
	}
	writeFile(t, checksumName(path), []byte(sums.String()))
}

// partsBundle is an archive of the bundle's layout in three parts.
func partsBundle(t *testing.T) (*bundle, string, []byte) {
	t.Helper()
	b := newBundle(t)
	data := tarDir(t, b.dir)
	path := filepath.Join(t.TempDir(), "b.tar")
	writeParts(t, path, data, len(data)/3+1)
	return b, path, data
}

// tarDir is a tar of the files under dir (as tar -C dir -cf - . writes).
func tarDir(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := "./" + filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimSuffix(name, "/.") + "/", Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(b)), Mode: 0o644}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// importArchive pushes the archive at path into the bundle's registry.
func (b *bundle) importArchive(t *testing.T, path string, o Options) (s Summary, err error) {
	t.Helper()
	m := newMirror(t, o)
	mp := mapper(t, rewrite.Config{Registry: b.dst.host})
	within(t, hang, func() { s, err = m.ImportArchive(context.Background(), path, mp) })
	return s, err
}

// TestImportArchiveDamagedParts: a part missing, truncated, altered, in
// the place of another, or left over, and checksum files that are
// missing, malformed or name files elsewhere: the run fails before
// anything is read, naming the part, and nothing is pushed.
func TestImportArchiveDamagedParts(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, path string)
		target error
		names  []string
	}{
		{"missing", func(t *testing.T, path string) { os.Remove(partName(path, 1)) }, ErrPartMissing, []string{".part001"}},
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(partName(path, 2), 100); err != nil {
				t.Fatal(err)
			}
		}, ErrPartMismatch, []string{".part002", "it is sha256:"}},
		{"altered", func(t *testing.T, path string) {
			b, _ := os.ReadFile(partName(path, 0))
			b[700] ^= 1
			writeFile(t, partName(path, 0), b)
		}, ErrPartMismatch, []string{".part000"}},
		{"reordered", func(t *testing.T, path string) {
			os.Rename(partName(path, 0), path+".tmp")
			os.Rename(partName(path, 1), partName(path, 0))
			os.Rename(path+".tmp", partName(path, 1))
		}, ErrPartMismatch, []string{".part000", ".part001"}},
		{"left over", func(t *testing.T, path string) { writeFile(t, partName(path, 3), []byte("old")) }, ErrPartUnlisted, []string{".part003"}},
		{"a link", func(t *testing.T, path string) {
			os.Rename(partName(path, 1), path+".elsewhere")
			symlink(t, path+".elsewhere", partName(path, 1))
		}, ErrSymlink, []string{".part001"}},
		{"no checksum file", func(t *testing.T, path string) { os.Remove(checksumName(path)) }, nil, []string{"b.tar.sha256: missing"}},
		{"slash", func(t *testing.T, path string) {
			appendLine(t, checksumName(path), strings.Repeat("0", 64)+"  ../b.tar.part003")
		}, nil, []string{"b.tar.sha256:4:", `names ../b.tar.part003`}},
		{"dot dot", func(t *testing.T, path string) { appendLine(t, checksumName(path), strings.Repeat("0", 64)+"  ..") }, nil, []string{"b.tar.sha256:4:", "not a file of the archive's folder"}},
		{"absolute", func(t *testing.T, path string) {
			appendLine(t, checksumName(path), strings.Repeat("0", 64)+"  /etc/passwd")
		}, nil, []string{"b.tar.sha256:4:", "/etc/passwd"}},
		{"another file", func(t *testing.T, path string) {
			appendLine(t, checksumName(path), strings.Repeat("0", 64)+"  other.tar")
		}, nil, []string{"b.tar.sha256:4:", "neither b.tar nor one of its parts"}},
		{"gap", func(t *testing.T, path string) {
			raw, _ := os.ReadFile(checksumName(path))
			lines := strings.Split(string(raw), "\n")
			writeFile(t, checksumName(path), []byte(lines[0]+"\n"+lines[2]+"\n"))
		}, nil, []string{"no b.tar.part001"}},
		{"malformed", func(t *testing.T, path string) { appendLine(t, checksumName(path), "xyz b.tar.part003") }, nil, []string{"b.tar.sha256:4: not a sha256sum line"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, path, _ := partsBundle(t)
			c.damage(t, path)
			s, err := b.importArchive(t, path, Options{Attachments: AttachmentsNone})
			wantErr(t, err, c.target, c.names...)
			var pe *PartError
			var ce *ChecksumFileError
			if !errors.As(err, &pe) && !errors.As(err, &ce) {
				t.Errorf("%T is neither a *PartError nor a *ChecksumFileError", err)
			}
			if len(s.Results) != 0 || len(b.dst.methods()) != 0 {
				t.Errorf("%d results, requests %v: something was pushed", len(s.Results), b.dst.methods())
			}
		})
	}
}

func appendLine(t *testing.T, p, line string) {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, append(raw, line+"\n"...))
}

// TestImportArchiveFiles: an archive as one file with or without its
// checksum file (then a notice), the tar of a layout directory made by
// hand ("./" names), and a name with nothing behind it.
func TestImportArchiveFiles(t *testing.T) {
	b := newBundle(t)
	data := tarDir(t, b.dir)
	dir := t.TempDir()
	path := filepath.Join(dir, "one.tar")
	writeParts(t, path, data, 0)
	ev := &partEvents{}
	s, err := b.importArchive(t, path, Options{Attachments: AttachmentsNone, Reporter: ev})
	if err != nil || s.Err() != nil || s.Copied != 2 {
		t.Fatalf("%d copied: %v %v", s.Copied, err, s.Err())
	}
	if n := strings.Join(ev.notices, "\n"); strings.Contains(n, "checksum") {
		t.Errorf("notices %q", ev.notices)
	}
	os.Remove(checksumName(path))
	ev = &partEvents{}
	s, err = b.importArchive(t, path, Options{Attachments: AttachmentsNone, Reporter: ev})
	if err != nil || s.Err() != nil || s.Skipped != 2 {
		t.Fatalf("without checksums: %d skipped: %v %v", s.Skipped, err, s.Err())
	}
	if len(ev.notices) == 0 || ev.notices[0] != path+" has no checksum file "+path+".sha256: only the digests of its blobs check it" || len(ev.unchecked) != 1 || ev.unchecked[0] != path {
		t.Errorf("notices %q, unchecked %q", ev.notices, ev.unchecked)
	}
	_, err = b.importArchive(t, filepath.Join(dir, "none.tar"), Options{})
	var ne *NoArchiveError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "none.tar.part000") {
		t.Errorf("no archive: %v", err)
	}
	writeFile(t, filepath.Join(dir, "junk.tar"), []byte("not a tar at all, not even close; "+strings.Repeat("x", 600)))
	if _, err := b.importArchive(t, filepath.Join(dir, "junk.tar"), Options{}); err == nil || !strings.Contains(err.Error(), "not a tar archive") {
		t.Errorf("junk: %v", err)
	}
	empty := tarDir(t, t.TempDir())
	writeParts(t, filepath.Join(dir, "empty.tar"), empty, 0)
	if _, err := b.importArchive(t, filepath.Join(dir, "empty.tar"), Options{}); err == nil || !strings.Contains(err.Error(), "neither an OCI image layout") {
		t.Errorf("empty: %v", err)
	}
}

// craft writes a tar of the given entries (name, type, content, link),
// each header fixed by fix when given.
type entry struct {
	name, content, link string
	typ                 byte
}

func craft(t *testing.T, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Size: int64(len(e.content)), Mode: 0o644, Linkname: e.link}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(e.content))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// TestImportArchiveHostileEntries: a crafted tar per kind of hostile
// entry fails the run with an *EntryError naming it, before anything is
// pushed; so do an entry cut short and too many entries.
func TestImportArchiveHostileEntries(t *testing.T) {
	b := newBundle(t)
	layoutFiles := files(t, b.dir)
	var good []entry
	var names []string
	for n := range layoutFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		good = append(good, entry{name: n, content: string(layoutFiles[n]), typ: tar.TypeReg})
	}
	with := func(extra ...entry) []byte { return craft(t, append(append([]entry{}, good...), extra...)) }
	for _, c := range []struct {
		name   string
		data   []byte
		target error
		entry  string
	}{
		{"dot dot", with(entry{name: "blobs/../../evil", content: "x", typ: tar.TypeReg}), ErrUnsafeName, "blobs/../../evil"},
		{"absolute", with(entry{name: "/etc/evil", content: "x", typ: tar.TypeReg}), ErrUnsafeName, "/etc/evil"},
		{"symlink", with(entry{name: "blobs/sha256/link", link: "/etc/shadow", typ: tar.TypeSymlink}), ErrLinkEntry, "/etc/shadow"},
		{"hard link", with(entry{name: "blobs/sha256/hard", link: "index.json", typ: tar.TypeLink}), ErrLinkEntry, "blobs/sha256/hard"},
		{"device", with(entry{name: "dev", typ: tar.TypeChar}), ErrSpecialEntry, "a device"},
		{"block device", with(entry{name: "disk", typ: tar.TypeBlock}), ErrSpecialEntry, "a device"},
		{"fifo", with(entry{name: "fifo", typ: tar.TypeFifo}), ErrSpecialEntry, "a FIFO"},
		{"duplicate", with(entry{name: "./index.json", content: `{"schemaVersion":2,"manifests":[]}`, typ: tar.TypeReg}), ErrDuplicateEntry, "./index.json"},
		{"duplicate directory", with(entry{name: "blobs/sha256/", typ: tar.TypeDir}, entry{name: "blobs/sha256", content: "x", typ: tar.TypeReg}), ErrDuplicateEntry, "blobs/sha256"},
		{"sparse", sparse(t, with()), ErrSpecialEntry, "a sparse file"},
		{"past the end", with(entry{name: "big", content: strings.Repeat("x", 5000), typ: tar.TypeReg})[:len(with())+512+1000], ErrPastEnd, "big"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h.tar")
			writeParts(t, path, c.data, 0)
			s, err := b.importArchive(t, path, Options{Attachments: AttachmentsNone})
			wantErr(t, err, c.target, path, c.entry)
			var ee *EntryError
			if !errors.As(err, &ee) {
				t.Errorf("%T is not an *EntryError", err)
			}
			if len(s.Results) != 0 || len(b.dst.methods()) != 0 {
				t.Errorf("something was pushed: %v", b.dst.methods())
			}
		})
	}
	t.Run("too many entries", func(t *testing.T) {
		defer func(n int) { maxEntries = n }(maxEntries)
		maxEntries = len(good) + 3
		var many []entry
		for i := 0; i < 5; i++ {
			many = append(many, entry{name: fmt.Sprintf("extra%d", i), typ: tar.TypeReg})
		}
		path := filepath.Join(t.TempDir(), "h.tar")
		writeParts(t, path, with(many...), 0)
		_, err := b.importArchive(t, path, Options{})
		wantErr(t, err, ErrTooManyEntries, "extra3")
	})
	// The good entries alone are a layout that pushes.
	path := filepath.Join(t.TempDir(), "g.tar")
	writeParts(t, path, with(), 0)
	if s, err := b.importArchive(t, path, Options{Attachments: AttachmentsNone}); err != nil || s.Copied != 2 {
		t.Errorf("the good entries: %d copied, %v %v", s.Copied, err, s.Err())
	}
}

// sparse turns the last entry of a tar into a GNU sparse file: its type
// flag, and the header's checksum.
func sparse(t *testing.T, data []byte) []byte {
	t.Helper()
	data = append([]byte{}, data...)
	// The last header: before its data and the two end blocks.
	off := -1
	tr := tar.NewReader(bytes.NewReader(data))
	pos := int64(0)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		off = int(pos)
		pos += 512 + (h.Size+511)/512*512
	}
	blk := data[off : off+512]
	blk[156] = tar.TypeGNUSparse
	copy(blk[257:265], "ustar  \x00") // the GNU format's magic
	copy(blk[148:156], "        ")
	sum := 0
	for _, c := range blk {
		sum += int(c)
	}
	copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return data
}

// TestImportArchiveLayoutChecks: what Import checks in a layout directory
// it checks in an archive: a blob that does not match its digest fails its
// image, naming the entry, and the other image goes on.
func TestImportArchiveLayoutChecks(t *testing.T) {
	b := newBundle(t)
	d := b.desc(t, b.image)
	layer := b.manifest(t, d).Layers[0].Digest
	p := b.path(blobPath(layer))
	raw, _ := os.ReadFile(p)
	raw[0] ^= 1
	writeFile(t, p, raw)
	path := filepath.Join(t.TempDir(), "b.tar")
	writeParts(t, path, tarDir(t, b.dir), 0)
	s, err := b.importArchive(t, path, Options{Attachments: AttachmentsNone})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Err(), ErrDigestMismatch, path+" (entry blobs/sha256/"+layer.Hex+")")
	if s.Copied != 1 || s.Failed != 1 {
		t.Errorf("%d copied, %d failed", s.Copied, s.Failed)
	}
	if head(t, b.dst.host+"/team/app:1") != "" {
		t.Error("the damaged image was pushed")
	}
}

// TestImportArchiveDryRun lists what the archive holds, pushing nothing.
func TestImportArchiveDryRun(t *testing.T) {
	b, path, _ := partsBundle(t)
	s, err := b.importArchive(t, path, Options{DryRun: true})
	if err != nil || s.Planned != 2 {
		t.Fatalf("%d planned, %v", s.Planned, err)
	}
	planned := false
	for _, r := range s.Results {
		planned = planned || r.Status == Planned && r.Source == b.image && r.Destination == b.dst.host+"/team/app:1"
	}
	if !planned || !s.DryRun {
		t.Errorf("plan (dry run %v): %+v", s.DryRun, s.Results)
	}
	if len(b.dst.methods()) != 0 {
		t.Errorf("a dry run asked the target: %v", b.dst.methods())
	}
}

// TestImportArchiveDocker: an archive in docker save's format (as
// go-containerregistry's tarball package and crane pull --format tarball
// write it) pushes each RepoTags entry to its target; one the mapping
// excludes is named in a warning, an image without RepoTags fails, and
// the digests are those of the images the archive holds.
func TestImportArchiveDocker(t *testing.T) {
	dst := newTestRegistry(t)
	one, two, anon := randomImage(t, 2048, 2), randomImage(t, 1024, 1), randomImage(t, 512, 1)
	refs := map[name.Reference]v1.Image{}
	for ref, img := range map[string]v1.Image{"quay.io/team/one:1": one, "quay.io/team/one:latest": one, "nginx:1.25": two, "excluded.example/x:1": two} {
		r, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		refs[r] = img
	}
	anonDigest, _ := anon.Digest()
	d, _ := name.NewDigest("quay.io/team/anon@" + anonDigest.String())
	refs[d] = anon
	path := filepath.Join(t.TempDir(), "saved.tar")
	if err := tarball.MultiRefWriteToFile(path, refs); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, tag := range []string{"quay.io/team/one:1", "nginx:1.25"} {
		tg, _ := name.NewTag(tag)
		img, err := tarball.ImageFromPath(path, &tg)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := img.Digest()
		want[tag] = h.String()
	}
	mp := mapper(t, rewrite.Config{Registry: "sea.hub:5000", Exclude: []string{"excluded.example"}})
	ev := &partEvents{}
	s, err := newMirror(t, Options{Reporter: ev, PushRegistry: &PushRegistry{Name: "sea.hub:5000", Address: dst.host}}).ImportArchive(context.Background(), path, mp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Copied != 3 || s.Failed != 1 {
		t.Errorf("%d copied, %d failed: %v", s.Copied, s.Failed, s.Err())
	}
	wantErr(t, s.Err(), nil, "manifest.json[", "no RepoTags")
	for target, w := range map[string]string{"/team/one:1": want["quay.io/team/one:1"], "/team/one:latest": want["quay.io/team/one:1"], "/library/nginx:1.25": want["nginx:1.25"]} {
		if got := head(t, dst.host+target); got != w {
			t.Errorf("%s: %q, want %s", target, got, w)
		}
	}
	for _, r := range s.Results {
		if r.Status == Copied && (!strings.HasPrefix(r.Target, "sea.hub:5000/") || r.Via != dst.host) {
			t.Errorf("%s -> %s via %s", r.Source, r.Target, r.Via)
		}
	}
	if !strings.Contains(strings.Join(ev.warnings, "\n"), "excluded.example/x:1: not pushed: the mapping leaves it where it is (excluded)") {
		t.Errorf("warnings %q", ev.warnings)
	}
	if len(ev.notices) == 0 || !strings.Contains(ev.notices[0], "has no checksum file") {
		t.Errorf("notices %q", ev.notices)
	}
	s, err = newMirror(t, Options{PushRegistry: &PushRegistry{Name: "sea.hub:5000", Address: dst.host}}).ImportArchive(context.Background(), path, mp)
	if err != nil || s.Skipped != 3 {
		t.Errorf("second run: %d skipped, %v", s.Skipped, err)
	}
}

// TestArchiveSharedBlobs: images that share a layer, copied at once, put
// it in the archive once, in the same bytes as one at a time; when one of
// them fails while the layer is being written, the others still get it
// (and the run, failed, leaves nothing).
func TestArchiveSharedBlobs(t *testing.T) {
	src := newTestRegistry(t)
	shared, err := random.Layer(300<<10, types.OCILayer)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	for i := 0; i < 6; i++ {
		own, err := random.Layer(1000, types.OCILayer)
		if err != nil {
			t.Fatal(err)
		}
		img, err := mutate.AppendLayers(empty.Image, shared, own)
		if err != nil {
			t.Fatal(err)
		}
		ref := fmt.Sprintf("%s/team/app%d:1", src.host, i)
		push(t, ref, img)
		jobs = append(jobs, Job{Source: ref, Target: fmt.Sprintf("sea.hub:5000/team/app%d:1", i)})
	}
	h, _ := shared.Digest()
	dir := t.TempDir()
	defer func(m int64) { memBlob = m }(memBlob)
	var archives [][]byte
	for i, c := range []struct {
		jobs int
		mem  int64
	}{{1, 4 << 20}, {6, 4 << 20}, {6, 0}} {
		memBlob = c.mem
		path := filepath.Join(dir, fmt.Sprintf("s%d.tar", i))
		s, err := newMirror(t, Options{Jobs: c.jobs, Attachments: AttachmentsNone}).ExportArchive(context.Background(), jobs, path, ArchiveOptions{})
		if err != nil || s.Err() != nil {
			t.Fatal(err, s.Err())
		}
		b, _ := os.ReadFile(path)
		archives = append(archives, b)
		n := 0
		for _, hd := range untar(t, b, t.TempDir()) {
			if hd.Name == blobPath(h) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("run %d: the shared layer is in the archive %d times", i, n)
		}
	}
	if !bytes.Equal(archives[0], archives[1]) || !bytes.Equal(archives[0], archives[2]) {
		t.Error("the archives differ")
	}

	// The shared layer is slow, and one image's own layer fails meanwhile.
	own := map[string]bool{}
	for i := range jobs {
		r, _ := name.ParseReference(jobs[i].Source)
		img, _ := remote.Image(r)
		ls, _ := img.Layers()
		d, _ := ls[1].Digest()
		own[d.String()] = i == 0
	}
	src.setInject(func(r *http.Request) int {
		switch {
		case strings.Contains(r.URL.Path, "/manifests/") && !strings.Contains(r.URL.Path, "/app0/"):
			time.Sleep(20 * time.Millisecond) // app0 records the shared layer first
		case strings.HasSuffix(r.URL.Path, h.String()):
			time.Sleep(50 * time.Millisecond)
		case strings.Contains(r.URL.Path, "/blobs/sha256:"):
			if own[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]] {
				return http.StatusBadRequest
			}
		}
		return 0
	})
	defer src.setInject(nil)
	for _, mem := range []int64{4 << 20, 0} {
		memBlob = mem
		out := t.TempDir()
		var s Summary
		within(t, hang, func() {
			s, err = newMirror(t, Options{Jobs: 6, Attachments: AttachmentsNone}).ExportArchive(context.Background(), jobs, filepath.Join(out, "f.tar"), ArchiveOptions{})
		})
		if err != nil || s.Failed != 1 || s.Copied != 5 {
			t.Errorf("memBlob %d: %d copied, %d failed, %v", mem, s.Copied, s.Failed, err)
		}
		if got := dirNames(t, out); len(got) != 0 {
			t.Errorf("left behind: %v", got)
		}
	}
}

// TestArchivePathErrors: a folder that does not exist, or a directory at
// the archive's path (even with Force), stop ExportArchive with a clear
// error.
func TestArchivePathErrors(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d.tar"), 0o755)
	for p, want := range map[string]string{
		filepath.Join(dir, "none", "b.tar"): "its folder " + filepath.Join(dir, "none") + " is not a directory that exists",
		filepath.Join(dir, "d.tar"):         "a directory, not a file an archive can be written to",
	} {
		_, err := newMirror(t, Options{}).ExportArchive(context.Background(), nil, p, ArchiveOptions{Force: true})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "d.tar")); err != nil {
		t.Errorf("the directory was removed: %v", err)
	}
}
