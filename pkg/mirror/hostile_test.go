package mirror

// The hostile-input suite: crafted OCI layouts (links, cycles, wrong
// digests, lying and huge sizes, escapes in annotations) and hostile
// registries on loopback (secrets echoed in error bodies, stalled,
// trickled and truncated responses). Each case must end within seconds
// with an error naming its input, and write nothing outside the output.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/pkg/rewrite"
)

// outside is a directory beside the layout, holding a canary file and an
// empty directory: a hostile layout points links here, and rehost must
// leave it as it was.
type outside struct {
	dir, victim, elsewhere string
	want                   []string // the listing check expects
}

const canaryContent = "canary: rehost must not write here\n"

func newOutside(t *testing.T) *outside {
	t.Helper()
	o := &outside{dir: t.TempDir()}
	o.victim = filepath.Join(o.dir, "victim")
	o.elsewhere = filepath.Join(o.dir, "elsewhere")
	if err := os.WriteFile(o.victim, []byte(canaryContent), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(o.elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	o.seal(t)
	return o
}

// seal records what is outside now, once a test has put things there.
func (o *outside) seal(t *testing.T) { o.want = tree(t, o.dir) }

// check asserts that the canary is intact and that nothing was added or
// removed since seal.
func (o *outside) check(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(o.victim)
	if err != nil || string(b) != canaryContent {
		t.Errorf("the canary file outside the layout changed: %q, %v", b, err)
	}
	want := o.want
	if got := tree(t, o.dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("files outside the layout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// tree lists the paths under dir (links not followed), sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out
}

// within runs f and fails the test if it has not returned after d: a
// generous bound that tells a hang from an error, not a timing assertion.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %s: hung", d)
	}
}

// hang is the generous bound of within.
const hang = 30 * time.Second

// allocated returns the bytes allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bundle is a layout written by Export from a loopback registry: an image
// and a two-platform index, with the registry to import them into.
type bundle struct {
	dir      string
	src, dst *testRegistry
	image    string // source of the image
	index    string // source of the index
}

func newBundle(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{dir: filepath.Join(t.TempDir(), "bundle"), src: newTestRegistry(t), dst: newTestRegistry(t)}
	b.image = b.src.host + "/team/app:1"
	b.index = b.src.host + "/team/multi:1"
	push(t, b.image, randomImage(t, 300, 2))
	push(t, b.index, randomIndex(t, 300, 1, "linux/amd64", "linux/arm64"))
	jobs := []Job{{Source: b.image, Target: "sea.hub:5000/team/app:1"}, {Source: b.index, Target: "sea.hub:5000/team/multi:1"}}
	s, err := newMirror(t, Options{Attachments: AttachmentsNone}).Export(context.Background(), jobs, b.dir)
	if err != nil || s.Err() != nil {
		t.Fatalf("export: %v, %v", err, s.Err())
	}
	return b
}

func (b *bundle) path(rel string) string { return filepath.Join(b.dir, filepath.FromSlash(rel)) }

// index returns index.json.
func (b *bundle) indexJSON(t *testing.T) v1.IndexManifest {
	t.Helper()
	raw, err := os.ReadFile(b.path("index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		t.Fatal(err)
	}
	return im
}

func (b *bundle) writeIndexJSON(t *testing.T, im v1.IndexManifest) {
	t.Helper()
	raw, err := json.Marshal(im)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, b.path("index.json"), raw)
}

// desc is the index.json descriptor of source.
func (b *bundle) desc(t *testing.T, source string) v1.Descriptor {
	t.Helper()
	for _, d := range b.indexJSON(t).Manifests {
		if d.Annotations[AnnotationSource] == source {
			return d
		}
	}
	t.Fatalf("%s not in index.json", source)
	return v1.Descriptor{}
}

// setDesc replaces the index.json descriptor of source.
func (b *bundle) setDesc(t *testing.T, source string, f func(*v1.Descriptor)) {
	t.Helper()
	im := b.indexJSON(t)
	for i := range im.Manifests {
		if im.Manifests[i].Annotations[AnnotationSource] == source {
			f(&im.Manifests[i])
		}
	}
	b.writeIndexJSON(t, im)
}

// manifest returns the image manifest of a descriptor.
func (b *bundle) manifest(t *testing.T, d v1.Descriptor) *v1.Manifest {
	t.Helper()
	raw, err := os.ReadFile(b.path(blobPath(d.Digest)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// importInto pushes the bundle into its destination registry, and fails
// the test if that hangs.
func (b *bundle) importInto(t *testing.T, o Options) (s Summary, err error) {
	t.Helper()
	m := newMirror(t, o)
	mp := mapper(t, rewrite.Config{Registry: b.dst.host})
	within(t, hang, func() { s, err = m.Import(context.Background(), b.dir, mp) })
	return s, err
}

// pushedManifests counts the manifests the destination received.
func (b *bundle) pushedManifests() int { return b.dst.count(http.MethodPut, `/manifests/`) }

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, to, at string) {
	t.Helper()
	if err := os.Symlink(to, at); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies a directory (regular files and directories only).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// failure is the error of a run: the returned error, else the summary's.
func failure(s Summary, err error) error {
	if err != nil {
		return err
	}
	return s.Err()
}

// wantErr checks that err is target and names every one of names.
func wantErr(t *testing.T, err, target error, names ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %q is not %q", err, target)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
}

// TestHostileExportLinks: links planted in the layout directory make
// Export fail with an error naming the link, and nothing is written
// where they point: not the canary file (oci-layout), not a file that did
// not exist (index.json), not a directory elsewhere (blobs,
// blobs/sha256, a blob).
func TestHostileExportLinks(t *testing.T) {
	src := newTestRegistry(t)
	ref := src.host + "/team/app:1"
	img := randomImage(t, 300, 2)
	push(t, ref, img)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	layer, _ := layers[0].Digest()
	jobs := []Job{{Source: ref, Target: "sea.hub:5000/team/app:1"}}

	for _, c := range []struct {
		link  string
		plant func(t *testing.T, dir string, o *outside)
	}{
		{"oci-layout", func(t *testing.T, dir string, o *outside) {
			symlink(t, o.victim, filepath.Join(dir, "oci-layout"))
		}},
		{"index.json", func(t *testing.T, dir string, o *outside) {
			symlink(t, filepath.Join(o.dir, "created-by-rehost.json"), filepath.Join(dir, "index.json"))
		}},
		{"blobs", func(t *testing.T, dir string, o *outside) {
			symlink(t, o.elsewhere, filepath.Join(dir, "blobs"))
		}},
		{"blobs/sha256", func(t *testing.T, dir string, o *outside) {
			os.Mkdir(filepath.Join(dir, "blobs"), 0o755)
			symlink(t, o.elsewhere, filepath.Join(dir, "blobs", "sha256"))
		}},
		{"blobs/sha256/" + layer.Hex, func(t *testing.T, dir string, o *outside) {
			os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755)
			symlink(t, o.victim, filepath.Join(dir, "blobs", "sha256", layer.Hex))
		}},
		{"index.json (relative link inside)", func(t *testing.T, dir string, o *outside) {
			writeFile(t, filepath.Join(dir, "other.json"), []byte(`{"schemaVersion":2,"manifests":[]}`))
			symlink(t, "other.json", filepath.Join(dir, "index.json"))
		}},
	} {
		t.Run(c.link, func(t *testing.T) {
			o := newOutside(t)
			dir := filepath.Join(t.TempDir(), "bundle")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			c.plant(t, dir, o)
			var s Summary
			var err error
			within(t, hang, func() {
				s, err = newMirror(t, Options{Attachments: AttachmentsNone}).Export(context.Background(), jobs, dir)
			})
			link, _, _ := strings.Cut(c.link, " ")
			wantErr(t, failure(s, err), ErrSymlink, filepath.Join(dir, filepath.FromSlash(link)))
			if s.Copied != 0 {
				t.Errorf("%d images reported copied", s.Copied)
			}
			o.check(t)
		})
	}
}

// TestHostileExportHardLinks: a file of the layout that is a hard link to a
// file elsewhere is replaced, never written through.
func TestHostileExportHardLinks(t *testing.T) {
	b := newBundle(t)
	o := newOutside(t)
	// index.json becomes a hard link to a file outside holding the same
	// index: a new export changes index.json, not that file.
	shared := filepath.Join(o.dir, "shared.json")
	orig, err := os.ReadFile(b.path("index.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, shared, orig)
	o.seal(t)
	os.Remove(b.path("index.json"))
	if err := os.Link(shared, b.path("index.json")); err != nil {
		t.Skipf("hard links: %v", err)
	}
	ref := b.src.host + "/team/new:1"
	push(t, ref, randomImage(t, 100, 1))
	s, err := newMirror(t, Options{Attachments: AttachmentsNone}).Export(context.Background(), []Job{{Source: ref, Target: "sea.hub:5000/team/new:1"}}, b.dir)
	if err != nil || s.Copied != 1 {
		t.Fatalf("export: %d copied, %v, %v", s.Copied, err, s.Err())
	}
	if got, _ := os.ReadFile(shared); !bytes.Equal(got, orig) {
		t.Error("the file hard-linked as index.json was written through")
	}
	if len(b.indexJSON(t).Manifests) != 3 {
		t.Errorf("index.json has %d images, want 3", len(b.indexJSON(t).Manifests))
	}
	o.check(t)
}

// TestHostileImportLinks: a layout with a link at oci-layout, index.json,
// blobs, blobs/sha256 or a blob is refused, naming the link, even when the
// link leads to a valid copy of what it replaces; nothing is pushed.
func TestHostileImportLinks(t *testing.T) {
	for _, link := range []string{"oci-layout", "index.json", "blobs", "blobs/sha256", "manifest", "layer"} {
		t.Run(link, func(t *testing.T) {
			b := newBundle(t)
			o := newOutside(t)
			rel := link
			d := b.desc(t, b.image)
			switch link {
			case "manifest":
				rel = blobPath(d.Digest)
			case "layer":
				rel = blobPath(b.manifest(t, d).Layers[0].Digest)
			}
			p := b.path(rel)
			moved := filepath.Join(o.elsewhere, "moved")
			if err := os.Rename(p, moved); err != nil {
				t.Fatal(err)
			}
			symlink(t, moved, p)
			o.seal(t)
			s, err := b.importInto(t, Options{Attachments: AttachmentsNone})
			wantErr(t, failure(s, err), ErrSymlink, p)
			if s.Copied != 0 && link != "layer" && link != "manifest" {
				t.Errorf("%d images copied", s.Copied)
			}
			if link == "manifest" || link == "layer" {
				// The other image of the layout is pushed; this one is not.
				if s.Failed != 1 || head(t, b.dst.host+"/team/app:1") != "" {
					t.Errorf("%d failed; the image was pushed: %q", s.Failed, head(t, b.dst.host+"/team/app:1"))
				}
			} else if n := b.pushedManifests(); n != 0 {
				t.Errorf("%d manifests pushed", n)
			}
			o.check(t)
		})
	}
}

// fakeDigest is a digest that is not its content's, for crafted blobs.
func fakeDigest(seed string) v1.Hash {
	sum := sha256.Sum256([]byte(seed))
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// indexListing is an OCI index listing one child index, declared with the
// size that such a listing has (each crafted index then has the size its
// parent declares, and only its digest is wrong).
func indexListing(child v1.Hash) []byte {
	size := 0
	for {
		b := fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":%q,"size":%d}]}`, child, size)
		if len(b) == size {
			return b
		}
		size = len(b)
	}
}

// plantIndex writes content as the blob named h and makes index.json list
// it as the source docker.io/evil/app:1.
func (b *bundle) plantIndex(t *testing.T, h v1.Hash, content []byte, list bool) {
	t.Helper()
	writeFile(t, b.path(blobPath(h)), content)
	if !list {
		return
	}
	im := b.indexJSON(t)
	im.Manifests = []v1.Descriptor{{
		MediaType: types.OCIImageIndex, Digest: h, Size: int64(len(content)),
		Annotations: map[string]string{AnnotationSource: "docker.io/evil/app:1"},
	}}
	b.writeIndexJSON(t, im)
}

// TestHostileImportCycles: an index blob that lists itself, or two that
// list each other, used to deadlock go-containerregistry's pusher (at 0%
// CPU, deaf to signals), with or without attachments. Import walks the
// graph first and fails naming the chain of digests; nothing is pushed.
func TestHostileImportCycles(t *testing.T) {
	self, a, c := fakeDigest("self"), fakeDigest("a"), fakeDigest("c")
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, b *bundle)
		chain string
	}{
		{"self", func(t *testing.T, b *bundle) {
			b.plantIndex(t, self, indexListing(self), true)
		}, self.String() + " → " + self.String()},
		{"mutual", func(t *testing.T, b *bundle) {
			b.plantIndex(t, a, indexListing(c), true)
			b.plantIndex(t, c, indexListing(a), false)
		}, a.String() + " → " + c.String() + " → " + a.String()},
	} {
		for _, att := range []Attachments{AttachmentsAll, AttachmentsNone} {
			t.Run(tc.name+"/attachments="+string(att), func(t *testing.T) {
				b := newBundle(t)
				tc.plant(t, b)
				s, err := b.importInto(t, Options{Attachments: att})
				if err != nil {
					t.Fatal(err)
				}
				wantErr(t, s.Err(), ErrCycle, tc.chain, "docker.io/evil/app:1")
				if n := b.pushedManifests(); n != 0 {
					t.Errorf("%d manifests pushed", n)
				}
			})
		}
	}
}

// TestHostileImportDepth: indexes nested deeper than MaxIndexDepth, each
// with the right digest, are refused before anything is pushed.
func TestHostileImportDepth(t *testing.T) {
	b := newBundle(t)
	// The innermost index lists the bundle's real index; each one above
	// lists the one below.
	child := b.desc(t, b.index)
	child.Annotations = nil
	var chain []v1.Hash
	for i := 0; i < MaxIndexDepth; i++ { // with the real index: one too many
		raw, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{child}})
		if err != nil {
			t.Fatal(err)
		}
		h, n, _ := v1.SHA256(bytes.NewReader(raw))
		writeFile(t, b.path(blobPath(h)), raw)
		child = v1.Descriptor{MediaType: types.OCIImageIndex, Digest: h, Size: n}
		chain = append(chain, h)
	}
	b.setDesc(t, b.index, func(d *v1.Descriptor) { d.Digest, d.Size = child.Digest, child.Size })
	s, err := b.importInto(t, Options{Attachments: AttachmentsNone})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Err(), ErrTooDeep, chain[len(chain)-1].String(), b.index)
	if s.Copied != 1 || s.Failed != 1 {
		t.Errorf("%d copied, %d failed; want the image copied and the deep index failed", s.Copied, s.Failed)
	}
	if head(t, b.dst.host+"/team/multi:1") != "" {
		t.Error("the index nested too deep was pushed")
	}
	// MaxIndexDepth levels are fine: a bound, not a ban on nesting.
	b.setDesc(t, b.index, func(d *v1.Descriptor) {
		d.Digest = chain[len(chain)-2]
		d.Size = fileSize(t, b.path(blobPath(chain[len(chain)-2])))
	})
	s, err = b.importInto(t, Options{Attachments: AttachmentsNone})
	if err != nil || s.Err() != nil {
		t.Errorf("nested %d deep: %v, %v", MaxIndexDepth, err, s.Err())
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestHostileImportTampered: blobs edited in place under their old names,
// or whose size differs from the declared one, fail their image naming
// the blob; the image is not pushed, the other image of the layout is.
func TestHostileImportTampered(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, b *bundle) string // returns the blob path
		want   error
	}{
		{"manifest edited, declared size updated", func(t *testing.T, b *bundle) string {
			d := b.desc(t, b.image)
			p := b.path(blobPath(d.Digest))
			raw, _ := os.ReadFile(p)
			raw = append(raw, ' ')
			writeFile(t, p, raw)
			b.setDesc(t, b.image, func(d *v1.Descriptor) { d.Size++ })
			return p
		}, ErrDigestMismatch},
		{"manifest edited, same size", func(t *testing.T, b *bundle) string {
			d := b.desc(t, b.image)
			p := b.path(blobPath(d.Digest))
			raw, _ := os.ReadFile(p)
			writeFile(t, p, bytes.Replace(raw, []byte(`"schemaVersion":2`), []byte(`"schemaVersion":3`), 1))
			return p
		}, ErrDigestMismatch},
		{"manifest longer than declared", func(t *testing.T, b *bundle) string {
			d := b.desc(t, b.image)
			p := b.path(blobPath(d.Digest))
			raw, _ := os.ReadFile(p)
			writeFile(t, p, append(raw, '\n'))
			return p
		}, ErrSizeMismatch},
		{"config edited", func(t *testing.T, b *bundle) string {
			m := b.manifest(t, b.desc(t, b.image))
			p := b.path(blobPath(m.Config.Digest))
			raw, _ := os.ReadFile(p)
			writeFile(t, p, bytes.Replace(raw, []byte(`"`), []byte(`'`), 1))
			return p
		}, ErrDigestMismatch},
		{"layer shorter than declared", func(t *testing.T, b *bundle) string {
			m := b.manifest(t, b.desc(t, b.image))
			p := b.path(blobPath(m.Layers[1].Digest))
			raw, _ := os.ReadFile(p)
			writeFile(t, p, raw[:len(raw)-1])
			return p
		}, ErrSizeMismatch},
		{"layer edited, same size", func(t *testing.T, b *bundle) string {
			m := b.manifest(t, b.desc(t, b.image))
			p := b.path(blobPath(m.Layers[1].Digest))
			raw, _ := os.ReadFile(p)
			raw[len(raw)/2] ^= 0xff
			writeFile(t, p, raw)
			return p
		}, ErrDigestMismatch},
		{"index child edited", func(t *testing.T, b *bundle) string {
			d := b.desc(t, b.index)
			raw, _ := os.ReadFile(b.path(blobPath(d.Digest)))
			var im v1.IndexManifest
			json.Unmarshal(raw, &im)
			p := b.path(blobPath(im.Manifests[1].Digest))
			raw, _ = os.ReadFile(p)
			writeFile(t, p, bytes.Replace(raw, []byte(`"schemaVersion":2`), []byte(`"schemaVersion":3`), 1))
			return p
		}, ErrDigestMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBundle(t)
			p := c.tamper(t, b)
			s, err := b.importInto(t, Options{Attachments: AttachmentsNone})
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, s.Err(), c.want, p)
			if s.Failed != 1 || s.Copied != 1 {
				t.Errorf("%d failed, %d copied; want 1, 1", s.Failed, s.Copied)
			}
			tampered := b.image
			if strings.HasPrefix(c.name, "index") {
				tampered = b.index
			}
			if d := head(t, b.dst.host+strings.TrimPrefix(tampered, b.src.host)); d != "" {
				t.Errorf("the tampered image was pushed: %s", d)
			}
		})
	}
}

// TestHostileImportHugeSizes: huge declared sizes and huge (sparse) files
// are refused from their size alone, before anything is read: index.json,
// a manifest, an index, a config. Bounds are asserted on the bytes
// allocated, not on time.
func TestHostileImportHugeSizes(t *testing.T) {
	const huge = 3 << 30
	sparse := func(t *testing.T, p string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(huge); err != nil {
			t.Skipf("sparse file: %v", err)
		}
	}
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, b *bundle) string
	}{
		{"index.json sparse", func(t *testing.T, b *bundle) string {
			p := b.path("index.json")
			sparse(t, p)
			return p
		}},
		{"manifest declared huge", func(t *testing.T, b *bundle) string {
			b.setDesc(t, b.image, func(d *v1.Descriptor) { d.Size = huge })
			return b.path(blobPath(b.desc(t, b.image).Digest))
		}},
		{"manifest sparse and declared huge", func(t *testing.T, b *bundle) string {
			p := b.path(blobPath(b.desc(t, b.image).Digest))
			sparse(t, p)
			b.setDesc(t, b.image, func(d *v1.Descriptor) { d.Size = huge })
			return p
		}},
		{"index sparse and declared huge", func(t *testing.T, b *bundle) string {
			p := b.path(blobPath(b.desc(t, b.index).Digest))
			sparse(t, p)
			b.setDesc(t, b.index, func(d *v1.Descriptor) { d.Size = huge })
			return p
		}},
		{"config declared huge", func(t *testing.T, b *bundle) string {
			d := b.desc(t, b.image)
			mp := b.path(blobPath(d.Digest))
			m := b.manifest(t, d)
			p := b.path(blobPath(m.Config.Digest))
			sparse(t, p)
			m.Config.Size = huge
			raw, _ := json.Marshal(m)
			h, n, _ := v1.SHA256(bytes.NewReader(raw))
			os.Remove(mp)
			writeFile(t, b.path(blobPath(h)), raw)
			b.setDesc(t, b.image, func(d *v1.Descriptor) { d.Digest, d.Size = h, n })
			return p
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBundle(t)
			p := c.tamper(t, b)
			m := newMirror(t, Options{Attachments: AttachmentsNone})
			mp := mapper(t, rewrite.Config{Registry: b.dst.host})
			var s Summary
			var err error
			n := allocated(func() { s, err = m.Import(context.Background(), b.dir, mp) })
			wantErr(t, failure(s, err), ErrTooLarge, p)
			t.Logf("refused with %d bytes allocated: %v", n, failure(s, err))
			// Under half of what reading up to the 4 MiB limit would take
			// (the run also makes a request to the destination).
			if n > 2<<20 {
				t.Errorf("refusing a %d-byte input allocated %d bytes, want under 2 MiB", huge, n)
			}
		})
	}
}

// evil strings: terminal escapes (title, clear screen, colour), bell,
// carriage return and newline (a fake line), a bidirectional override.
const evil = "\x1b]0;owned\x07\x1b[2J\x1b[31m\r\nfailed  fake line\u202e"

// TestHostileImportEscapes: escapes and newlines in a layout's annotations
// (the source, an attachment's kind and subject) are printed quoted, never
// raw, in the report lines and in the errors.
func TestHostileImportEscapes(t *testing.T) {
	b := newBundle(t)
	img := b.desc(t, b.image)
	im := b.indexJSON(t)
	im.Manifests = append(im.Manifests,
		v1.Descriptor{MediaType: img.MediaType, Digest: img.Digest, Size: img.Size,
			Annotations: map[string]string{AnnotationSource: "docker.io/evil/app:1" + evil}},
		v1.Descriptor{MediaType: img.MediaType, Digest: img.Digest, Size: img.Size,
			Annotations: map[string]string{AnnotationSource: "docker.io/evil/app:sig" + evil, AnnotationAttachment: "signature" + evil, AnnotationSubject: "sha256:" + evil}},
		v1.Descriptor{MediaType: types.MediaType("application/x" + evil), Digest: img.Digest, Size: img.Size,
			Annotations: map[string]string{AnnotationSource: "docker.io/evil/other:1"}},
	)
	b.writeIndexJSON(t, im)
	var out bytes.Buffer
	s, err := b.importInto(t, Options{Reporter: textReport{&out}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Failed != 2 {
		t.Errorf("%d failed, want 2", s.Failed)
	}
	for name, text := range map[string]string{"report": out.String(), "error": s.Err().Error()} {
		for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e", "\nfailed  fake"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s holds %q raw:\n%s", name, bad, text)
			}
		}
		if !strings.Contains(text, `\x1b]0;owned\a`) {
			t.Errorf("%s does not show the escapes quoted:\n%s", name, text)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if !regexp.MustCompile(`^(copied  |failed  |warning: |notice: |[0-9]+ copied)`).MatchString(line) {
			t.Errorf("unexpected report line %q", line)
		}
	}
	if !strings.Contains(out.String(), `"signature\x1b]0;owned\a`) || !strings.Contains(out.String(), `"sha256:\x1b]0;owned\a`) {
		t.Errorf("the orphaned attachment's kind and subject are not quoted:\n%s", out.String())
	}
}

// TestHostileImportNotRegular: index.json that is a directory or a pipe is
// refused without blocking.
func TestHostileImportNotRegular(t *testing.T) {
	b := newBundle(t)
	os.Remove(b.path("index.json"))
	if err := mkfifo(b.path("index.json")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s, err := b.importInto(t, Options{})
	wantErr(t, failure(s, err), ErrNotRegular, b.path("index.json"))
}
