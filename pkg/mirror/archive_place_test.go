package mirror

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// planBlob is a blob a task of planArchive records.
type planBlob struct {
	data  []byte
	of    []byte // the content its digest is of, when not data
	sha   string // "sha512" for a SHA-512 digest; SHA-256 by default
	bytes bool   // recorded as bytes (a manifest or a config), not read when placed
	att   string // the attachment it belongs to ("" the image)
	open  func() (io.ReadCloser, error)
}

func (b planBlob) digest() v1.Hash {
	of := b.data
	if b.of != nil {
		of = b.of
	}
	if b.sha == "sha512" {
		s := sha512.Sum512(of)
		return v1.Hash{Algorithm: "sha512", Hex: hex.EncodeToString(s[:])}
	}
	s := sha256.Sum256(of)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(s[:])}
}

// planArchive plans an archive by hand, as if task i had written the
// blobs tasks[i] (source example.com/t<i>:1, with an attachment per att
// named), then places it at path.
func planArchive(t *testing.T, ctx context.Context, m *Mirror, path string, partSize int64, tasks [][]planBlob) (*archivePlan, []Result, error) {
	t.Helper()
	dest := &layoutTarget{dest: "oci-archive:" + path, have: map[string]v1.Descriptor{},
		im: v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{}}}
	ctx, cancel := context.WithCancelCause(ctx)
	t.Cleanup(func() { cancel(nil) })
	ts := make([]task, len(tasks))
	for i := range tasks {
		ts[i] = task{Job: Job{Source: fmt.Sprintf("example.com/t%d:1", i), Target: fmt.Sprintf("sea.hub:5000/t%d:1", i)}, origin: chartOrigin{}}
	}
	p := newArchivePlan(m, dest, ts, path, partSize, cancel)
	t.Cleanup(p.close)
	dest.arc = p
	results := make([]Result, len(tasks))
	for i, bs := range tasks {
		tctx := withCounter(p.taskContext(ctx, i), &counter{report: func(int64) {}})
		res := Result{Job: ts[i].Job, Status: Copied}
		for _, b := range bs {
			bctx := tctx
			if b.att != "" {
				bctx = p.itemContext(tctx, item{Job: Job{Source: b.att}, att: &found{}})
				if len(res.Attachments) == 0 || res.Attachments[len(res.Attachments)-1].Source != b.att {
					res.Attachments = append(res.Attachments, Attachment{Source: b.att, Status: Copied})
				}
			}
			var err error
			if b.bytes {
				err = p.bytes(bctx, b.digest(), b.data)
			} else {
				open := b.open
				if open == nil {
					data := b.data
					open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
				}
				err = p.blob(bctx, b.digest(), int64(len(b.data)), open, true)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		d := v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: bs[len(bs)-1].digest(), Size: int64(len(bs[len(bs)-1].data)),
			Annotations: map[string]string{AnnotationSource: ts[i].Source}}
		if err := p.record(tctx, d); err != nil {
			t.Fatal(err)
		}
		results[i] = res
		if !p.hold(i, res) {
			t.Fatal("a result that succeeded is not held")
		}
	}
	s := Summary{Results: results}
	err := p.place(ctx, &s)
	return p, s.Results, err
}

// randomBytes are n pseudo-random bytes from seed.
func randomBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// asTarWriter is what archive/tar's Writer writes for the entries of
// data, with the same headers: the archive's layout must be its, byte
// for byte.
func asTarWriter(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: h.Typeflag, Name: h.Name, Size: h.Size, Mode: h.Mode, ModTime: h.ModTime}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// entrySpans are the byte ranges of the regular files of a tar archive's
// data, by name.
func entrySpans(t *testing.T, data []byte) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	r := bytes.NewReader(data)
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		// After Next, the reader is at the entry's data.
		start := int64(len(data)) - int64(r.Len())
		out[h.Name] = [2]int64{start, start + h.Size}
	}
}

// TestArchiveBlobAcrossParts: blobs are placed at their offsets in 1 MiB
// parts, across one part boundary or several; the parts are at most 1 MiB
// and their concatenation is what archive/tar writes (SHA-512 names, which
// need a PAX header, included); every blob extracted is whole.
func TestArchiveBlobAcrossParts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.tar")
	ev := &partEvents{}
	blobs := []planBlob{
		{data: randomBytes(1, 700<<10)},
		{data: randomBytes(2, 1500<<10)},
		{data: randomBytes(3, 2600<<10)},
		{data: randomBytes(4, 1000), sha: "sha512"},
		{data: []byte(`{"config":true}`), bytes: true},
	}
	_, results, err := planArchive(t, context.Background(), newMirror(t, Options{Reporter: ev}), path, MinPartSize, [][]planBlob{blobs})
	if err != nil || (Summary{Results: results}).Err() != nil {
		t.Fatal(err, results)
	}
	if len(ev.done) != 1 || ev.done[0].Status != Copied {
		t.Errorf("done %+v", ev.done)
	}
	sha256sum(t, path)
	names := dirNames(t, dir)
	for _, n := range names[:len(names)-1] {
		if st, _ := os.Stat(filepath.Join(dir, n)); st.Size() > MinPartSize {
			t.Errorf("%s: %d bytes", n, st.Size())
		}
	}
	if want := strings.Join(ev.written, " "); !strings.Contains(want, path+".part004 "+path+".sha256") {
		t.Errorf("parts reported: %s", want)
	}
	data := archiveBytes(t, path)
	if !bytes.Equal(data, asTarWriter(t, data)) {
		t.Error("the archive is not what archive/tar writes for its entries")
	}
	spans := entrySpans(t, data)
	crossing := 0
	for _, b := range blobs {
		s, ok := spans[blobPath(b.digest())]
		if !ok {
			t.Fatalf("no entry %s", blobPath(b.digest()))
		}
		if !bytes.Equal(data[s[0]:s[1]], b.data) {
			t.Errorf("%s differs", blobPath(b.digest()))
		}
		crossing = max(crossing, int((s[1]-1)/MinPartSize-s[0]/MinPartSize))
	}
	if crossing < 2 {
		t.Errorf("no blob crosses two part boundaries (%d)", crossing)
	}
	if _, ok := spans["blobs/sha512/"+blobs[3].digest().Hex]; !ok {
		t.Error("no SHA-512 blob")
	}
}

// TestArchiveSpill: past the plan's memory budget (or a blob larger than
// memBlob), the bytes recorded go to one spill file, which is unlinked at
// once (nothing in the folder, even while planning), read back when
// placed, and closed at the end; the archive is the same bytes as with
// every blob in memory.
func TestArchiveSpill(t *testing.T) {
	defer func(b, m int64) { memBudget, memBlob = b, m }(memBudget, memBlob)
	var blobs []planBlob
	for i, n := range []int{500, 400, 200, 700, 3000} {
		blobs = append(blobs, planBlob{data: randomBytes(int64(i+10), n), bytes: true})
	}
	blobs = append(blobs, planBlob{data: randomBytes(20, 5000)})
	var archives [][]byte
	for _, c := range []struct{ budget, blob, mem, spilled int64 }{
		{1 << 20, 1 << 20, 4800, 0},
		{1000, 600, 900, 3900}, // 500 and 400 in memory; 200 past the budget, 700 and 3000 past memBlob
		{0, 0, 0, 4800},
	} {
		memBudget, memBlob = c.budget, c.blob
		dir := t.TempDir()
		path := filepath.Join(dir, "s.tar")
		p, results, err := planArchive(t, context.Background(), newMirror(t, Options{}), path, 0, [][]planBlob{blobs[:3], blobs[3:]})
		if err != nil || (Summary{Results: results}).Err() != nil {
			t.Fatal(err, results)
		}
		if p.mem != c.mem || p.spillN != c.spilled {
			t.Errorf("budget %d, blob %d: %d bytes in memory, %d spilled; want %d, %d", c.budget, c.blob, p.mem, p.spillN, c.mem, c.spilled)
		}
		if got := strings.Join(dirNames(t, dir), " "); got != "s.tar s.tar.sha256" {
			t.Errorf("files %s", got)
		}
		archives = append(archives, archiveBytes(t, path))
	}
	for i := range archives {
		if !bytes.Equal(archives[i], archives[0]) {
			t.Errorf("archive %d differs", i)
		}
	}
	// While planning: the spill file is in no folder.
	memBudget, memBlob = 0, 0
	dir := t.TempDir()
	dest := &layoutTarget{have: map[string]v1.Descriptor{}}
	p := newArchivePlan(newMirror(t, Options{}), dest, []task{{origin: chartOrigin{}}}, filepath.Join(dir, "s.tar"), 0, func(error) {})
	if err := p.bytes(p.taskContext(context.Background(), 0), blobs[0].digest(), blobs[0].data); err != nil {
		t.Fatal(err)
	}
	if p.spill == nil {
		t.Fatal("nothing spilled")
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("files while planning: %v", got)
	}
	p.close()
}

// TestArchiveBlobFailsMidPlace: a blob that fails its digest or size check
// after a part was already written whole (hashed, synced and reported)
// fails the image or the attachment that needs it, not the others, and
// every file is removed: parts, checksum file, spill. A blob longer than
// declared is read one byte past its size, not to its end; an error where
// a blob ends fails it too. Bytes kept in the plan (a manifest) are
// checked as they are placed too.
func TestArchiveBlobFailsMidPlace(t *testing.T) {
	for _, c := range []struct {
		name string
		want error
		bad  func(good []byte) io.Reader
		att  string // the failing blob is this attachment's
	}{
		{"digest", ErrDigestMismatch, func(good []byte) io.Reader {
			b := bytes.Clone(good)
			b[len(b)/2] ^= 1
			return bytes.NewReader(b)
		}, ""},
		{"endless", ErrSizeMismatch, func([]byte) io.Reader { return rand.New(rand.NewSource(1)) }, ""},
		{"attachment", ErrDigestMismatch, func(good []byte) io.Reader { return bytes.NewReader(make([]byte, len(good))) }, "example.com/t1:sha256-x.sig"},
		{"kept", ErrDigestMismatch, nil, ""},
		// Its bytes, then an error where it ends (a verifying reader's).
		{"error at the end", errAtEnd, func(good []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(good), iotest.ErrReader(errAtEnd))
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.tar")
			firstPart := make(chan struct{})
			var once sync.Once
			ev := &reportFunc{partWritten: func(p string) {
				if strings.HasSuffix(p, ".part000") {
					once.Do(func() { close(firstPart) })
				}
			}}
			good := randomBytes(7, 600<<10)
			bad := planBlob{data: good, att: c.att, open: func() (io.ReadCloser, error) {
				<-firstPart // part000 is whole and reported first
				return io.NopCloser(c.bad(good)), nil
			}}
			if c.bad == nil {
				bad = planBlob{data: []byte("config 1, altered"), of: []byte("config 1"), bytes: true}
			}
			tasks := [][]planBlob{
				{{data: randomBytes(5, 1200<<10)}, {data: []byte("manifest 0"), bytes: true}},
				{{data: randomBytes(6, 300<<10)}, bad, {data: []byte("manifest 1"), bytes: true}},
			}
			var results []Result
			var err error
			within(t, hang, func() {
				_, results, err = planArchive(t, context.Background(), newMirror(t, Options{Reporter: ev}), path, MinPartSize, tasks)
			})
			if err != nil {
				t.Fatalf("the archive's own error: %v", err)
			}
			if results[0].Status != Copied {
				t.Errorf("the other image: %+v", results[0])
			}
			failed := results[1].Err
			if c.att != "" {
				if results[1].Status != Copied || len(results[1].Attachments) != 1 {
					t.Fatalf("image with a failed attachment: %+v", results[1])
				}
				failed = results[1].Attachments[0].Err
			}
			if !errors.Is(failed, c.want) || !strings.Contains(failed.Error(), "blob "+bad.digest().String()) {
				t.Errorf("failure %v, want %v naming the blob", failed, c.want)
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("left behind: %v", got)
			}
			if ev.parts == 0 && c.bad != nil {
				t.Error("no part was written whole before the failure")
			}
			if ev.done != 2 {
				t.Errorf("%d results reported, want 2", ev.done)
			}
		})
	}
}

var errAtEnd = errors.New("verification failed at the end")

// reportFunc is a Reporter and PartReporter that counts results and
// parts.
type reportFunc struct {
	discard
	mu          sync.Mutex
	done, parts int
	partWritten func(path string)
}

func (r *reportFunc) Done(Result) { r.done++ }

func (r *reportFunc) CheckProgress(CheckProgress) {}

func (r *reportFunc) PartWritten(path string, _ int64) {
	r.parts++
	r.partWritten(path)
}

// TestArchiveTooManyParts: an archive that would need more than MaxParts
// parts is refused once planned, before any file is created, and every
// job says why.
func TestArchiveTooManyParts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.tar")
	huge := planBlob{data: []byte("x"), open: func() (io.ReadCloser, error) { t.Error("read"); return nil, io.EOF }}
	m := newMirror(t, Options{})
	dest := &layoutTarget{have: map[string]v1.Descriptor{}, im: v1.IndexManifest{Manifests: []v1.Descriptor{}}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p := newArchivePlan(m, dest, []task{{Job: Job{Source: "example.com/a:1"}, origin: chartOrigin{}}}, path, MinPartSize, cancel)
	defer p.close()
	dest.arc = p
	tctx := p.taskContext(ctx, 0)
	if err := p.blob(tctx, huge.digest(), (MaxParts+1)*MinPartSize, huge.open, true); err != nil {
		t.Fatal(err)
	}
	results := []Result{{Job: Job{Source: "example.com/a:1"}, Status: Copied}}
	p.hold(0, results[0])
	err := p.place(ctx, &Summary{Results: results})
	if err == nil || !strings.Contains(err.Error(), "use larger parts") {
		t.Errorf("error %v", err)
	}
	if results[0].Status != Failed || !strings.Contains(results[0].Err.Error(), "use larger parts") {
		t.Errorf("result %+v", results[0])
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("files %v", got)
	}
}

// corruptBlob serves the registry, but with one byte of the blob h
// changed.
func corruptBlob(h v1.Hash, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+h.String()) {
			next.ServeHTTP(w, r)
			return
		}
		rec := &bufferedResponse{header: http.Header{}}
		next.ServeHTTP(rec, r)
		if len(rec.body) > 0 {
			rec.body[len(rec.body)-1] ^= 0xff
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.code)
		w.Write(rec.body)
	})
}

type bufferedResponse struct {
	header http.Header
	code   int
	body   []byte
}

func (b *bufferedResponse) Header() http.Header  { return b.header }
func (b *bufferedResponse) WriteHeader(code int) { b.code = code }
func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	b.body = append(b.body, p...)
	return len(p), nil
}

// archiveImages pushes n random images (3 layers of 300 KiB each) to the
// registry and returns their jobs and layers.
func archiveImages(t *testing.T, src *testRegistry, n int) ([]Job, [][]v1.Hash) {
	t.Helper()
	var jobs []Job
	var layers [][]v1.Hash
	for i := 0; i < n; i++ {
		img := randomImage(t, 300<<10, 3)
		ref := fmt.Sprintf("%s/team/img%d:1", src.host, i)
		push(t, ref, img)
		jobs = append(jobs, Job{Source: ref, Target: fmt.Sprintf("sea.hub:5000/team/img%d:1", i)})
		ls, _ := img.Layers()
		var hs []v1.Hash
		for _, l := range ls {
			h, _ := l.Digest()
			hs = append(hs, h)
		}
		layers = append(layers, hs)
	}
	return jobs, layers
}

// TestArchiveCorruptLayer: a registry that serves a layer whose bytes do
// not match its digest fails that image when its blobs are placed; the
// others are copied, and nothing is left.
func TestArchiveCorruptLayer(t *testing.T) {
	var bad v1.Hash // set once the images are pushed
	h := registry.New(registry.Logger(discardLogger()))
	src := serveRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { corruptBlob(bad, h).ServeHTTP(w, r) }))
	jobs, layers := archiveImages(t, src, 3)
	bad = layers[1][2]
	dir := t.TempDir()
	s, err := newMirror(t, Options{Attachments: AttachmentsNone}).ExportArchive(context.Background(), jobs, filepath.Join(dir, "c.tar"), ArchiveOptions{PartSize: MinPartSize})
	if err != nil || s.Copied != 2 || s.Failed != 1 {
		t.Fatalf("%d copied, %d failed: %v %v", s.Copied, s.Failed, err, s.Err())
	}
	if r := s.Results[1]; r.Status != Failed || !strings.Contains(r.Err.Error(), "blob "+bad.String()) {
		t.Errorf("the corrupt image: %+v", r)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("left behind: %v", got)
	}
}

// TestArchiveCancelledPlace: a run cancelled while the blobs are placed
// (the parts exist) removes every file; the images not yet in place fail
// with the cancellation, each image is reported once, and the summary
// counts what the reporter was told.
func TestArchiveCancelledPlace(t *testing.T) {
	src := newTestRegistry(t)
	jobs, layers := archiveImages(t, src, 4)
	last := layers[3][2]
	dir := t.TempDir()
	path := filepath.Join(dir, "x.tar")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var partsThere atomic.Bool
	src.setInject(func(r *http.Request) int {
		if strings.HasSuffix(r.URL.Path, "/blobs/"+last.String()) {
			es, _ := os.ReadDir(dir)
			partsThere.Store(len(es) > 0)
			cancel()
		}
		return 0
	})
	ev := &events{}
	var s Summary
	var err error
	within(t, hang, func() {
		s, err = newMirror(t, Options{Attachments: AttachmentsNone, Reporter: ev}).ExportArchive(ctx, jobs, path, ArchiveOptions{PartSize: MinPartSize})
	})
	src.setInject(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !partsThere.Load() {
		t.Error("the cancellation came before the parts were created")
	}
	if s.Failed == 0 || s.Results[3].Status != Failed || !errors.Is(s.Results[3].Err, context.Canceled) {
		t.Errorf("%d failed; the last image: %+v", s.Failed, s.Results[3])
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("left behind: %v", got)
	}
	if len(ev.done) != len(jobs) || ev.end == nil || ev.end.Failed != s.Failed || ev.end.Copied != s.Copied {
		t.Errorf("reported %d results, end %+v; summary %d copied, %d failed", len(ev.done), ev.end, s.Copied, s.Failed)
	}
}

// orderedEvents logs what a Reporter is told, in order.
type orderedEvents struct {
	discard
	log   []string
	bytes int64
	done  map[string]Result
}

func (o *orderedEvents) Start(j Job)         { o.log = append(o.log, "start "+j.Source) }
func (o *orderedEvents) Transferred(n int64) { o.bytes += n }
func (o *orderedEvents) Done(r Result) {
	o.log = append(o.log, "done "+r.Source)
	if o.done == nil {
		o.done = map[string]Result{}
	}
	o.done[r.Source] = r
}
func (o *orderedEvents) CheckProgress(CheckProgress) {}
func (o *orderedEvents) PartWritten(p string, _ int64) {
	o.log = append(o.log, "part "+filepath.Base(p))
}

// TestArchiveReport: every job starts while the archive is planned, and
// an image is reported done, with the bytes downloaded for it, only once
// its blobs are placed: after every start, with its layers counted; the
// summary's bytes are the bytes the reporter was told of, and the
// checksum file is reported last.
func TestArchiveReport(t *testing.T) {
	src := newTestRegistry(t)
	jobs, _ := archiveImages(t, src, 5)
	ev := &orderedEvents{}
	s, err := newMirror(t, Options{Attachments: AttachmentsNone, Jobs: 2, Reporter: ev}).ExportArchive(context.Background(), jobs, filepath.Join(t.TempDir(), "r.tar"), ArchiveOptions{PartSize: MinPartSize})
	if err != nil || s.Err() != nil || s.Copied != 5 {
		t.Fatal(err, s.Err())
	}
	lastStart, firstDone := -1, len(ev.log)
	for i, l := range ev.log {
		if strings.HasPrefix(l, "start ") {
			lastStart = i
		}
		if strings.HasPrefix(l, "done ") && firstDone == len(ev.log) {
			firstDone = i
		}
	}
	if firstDone < lastStart {
		t.Errorf("an image was done before every job was planned:\n%s", strings.Join(ev.log, "\n"))
	}
	if last := ev.log[len(ev.log)-1]; last != "part r.tar.sha256" {
		t.Errorf("last event %q", last)
	}
	for _, r := range s.Results {
		if r.Bytes < 3*300<<10 || ev.done[r.Source].Bytes != r.Bytes {
			t.Errorf("%s: %d bytes, reported %d", r.Source, r.Bytes, ev.done[r.Source].Bytes)
		}
	}
	if s.Bytes != ev.bytes {
		t.Errorf("summary %d bytes, reporter told of %d", s.Bytes, ev.bytes)
	}
}

// TestArchiveFlusher: a write wakes the flusher, which syncs the parts
// written to (and only those), and stops when told.
func TestArchiveFlusher(t *testing.T) {
	dir := t.TempDir()
	w, err := createParts(filepath.Join(dir, "f.tar"), MinPartSize, 3*MinPartSize, func(string, int64) {}, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.abort()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { w.flush(stop); close(stopped) }()
	if _, err := w.WriteAt([]byte("across"), 2*MinPartSize-3); err != nil {
		t.Fatal(err)
	}
	within(t, hang, func() {
		for w.dirty[1].Load() || w.dirty[2].Load() {
			time.Sleep(time.Millisecond)
		}
	})
	if w.dirty[0].Load() {
		t.Error("part 0 is dirty, but nothing was written to it")
	}
	close(stop)
	within(t, hang, func() { <-stopped })
	b1, _ := os.ReadFile(filepath.Join(dir, "f.tar.part001"))
	b2, _ := os.ReadFile(filepath.Join(dir, "f.tar.part002"))
	if string(b1[len(b1)-3:]) != "acr" || string(b2) != "oss" {
		t.Errorf("part 1 ends %q, part 2 is %q", b1[len(b1)-3:], b2)
	}
}
