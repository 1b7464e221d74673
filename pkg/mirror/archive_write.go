package mirror

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/internal/safefile"
)

// ExportArchive plans its archive, then places it (see its doc). The
// plan records what the tasks write (archivePlan) and lays the archive
// out: every entry, its header and where it begins. The placement writes
// each entry at its offset in the parts, a blob straight from its download
// (partFiles); a flusher has the parts written back to disk as they fill,
// and each part is hashed, synced and reported once whole.

// layoutVersion is the content of a layout's oci-layout file.
const layoutVersion = `{"imageLayoutVersion":"1.0.0"}`

// The fixed metadata of every entry of an archive, so that the same
// content gives the same bytes: the Unix epoch, modes 0644 and 0755, owner
// and group 0 without names.
var archiveTime = time.Unix(0, 0)

const (
	archiveFileMode = 0o644
	archiveDirMode  = 0o755
	blockSize       = 512 // a tar block: headers and data are padded to it
)

// What the plan keeps in memory: the manifests, indexes and configs of
// at most memBlob bytes, memBudget bytes in all; the others wait in the
// spill file (tests change them).
var (
	memBlob   int64 = 4 << 20
	memBudget int64 = 32 << 20
)

// archivePlan is the store of ExportArchive's tasks: it records what they
// write (blob, bytes, record), then writes the archive (place).
type archivePlan struct {
	m        *Mirror
	t        *layoutTarget
	tasks    []task
	path     string
	partSize int64
	cancel   context.CancelCauseFunc // ends the run when the archive fails

	mu        sync.Mutex
	recs      []taskRecord // by task
	blobs     map[v1.Hash]*plannedBlob
	users     map[v1.Hash][]int // the tasks that need each blob (place)
	mem       int64             // bytes kept in memory
	spill     *os.File          // the bytes kept past the budget, end to end
	spillN    int64
	spillName string // removed at the end, when it could not be unlinked at once
	err       error  // the archive's own failure
}

// taskRecord is what one task gave the plan.
type taskRecord struct {
	held  bool   // it succeeded: its Done waits until its blobs are placed
	res   Result // its result, when held
	c     *counter
	needs map[v1.Hash][]string // its blobs, each with the items that need it: "" the image, else an attachment's source
	descs []v1.Descriptor      // of index.json
	left  int                  // blobs not yet placed or failed
	fails map[string]error     // by item
}

// plannedBlob is a blob of the archive: bytes kept (in memory, or in the
// spill file, at offset at of kept), or read when placed by the first
// task in the archive's order that needs it (open, by task).
type plannedBlob struct {
	size int64
	kept io.ReaderAt
	at   int64
	open map[int]func(context.Context) (io.ReadCloser, error)
}

// archiveItem is what a blob is recorded for: task i's image (item "")
// or one of its attachments (item: its source). It travels in the
// context, under archiveItemKey.
type archiveItem struct {
	i    int
	item string
}

type archiveItemKey struct{}

func newArchivePlan(m *Mirror, t *layoutTarget, tasks []task, path string, partSize int64, cancel context.CancelCauseFunc) *archivePlan {
	return &archivePlan{m: m, t: t, tasks: tasks, path: path, partSize: partSize, cancel: cancel,
		recs: make([]taskRecord, len(tasks)), blobs: map[v1.Hash]*plannedBlob{}}
}

func (p *archivePlan) taskContext(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, archiveItemKey{}, archiveItem{i: i})
}

// hold keeps the result of a task that succeeded until its bytes are in
// place; a failure is reported at once.
func (p *archivePlan) hold(i int, r Result) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs[i].held, p.recs[i].res = r.Status != Failed, r
	return p.recs[i].held
}

// itemContext is the context the item's blobs are recorded in: an
// attachment's are its own, so that a blob that fails when placed fails
// the attachment, not its image.
func (p *archivePlan) itemContext(ctx context.Context, it item) context.Context {
	if a, ok := ctx.Value(archiveItemKey{}).(archiveItem); ok && it.att != nil {
		return context.WithValue(ctx, archiveItemKey{}, archiveItem{i: a.i, item: it.Source})
	}
	return ctx
}

// taskOf is the task running with ctx, and the item.
func (p *archivePlan) taskOf(ctx context.Context) (int, string, error) {
	a, ok := ctx.Value(archiveItemKey{}).(archiveItem)
	if !ok {
		return 0, "", fmt.Errorf("internal error: an archive blob written outside a task")
	}
	return a.i, a.item, nil
}

// record notes a descriptor of index.json that the task adds, and the
// task's byte counter.
func (p *archivePlan) record(ctx context.Context, desc v1.Descriptor) error {
	i, _, err := p.taskOf(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs[i].descs = append(p.recs[i].descs, desc)
	p.recs[i].c, _ = ctx.Value(counterKey{}).(*counter)
	return nil
}

// need notes that the item of task i needs the blob h of size bytes, and
// returns it. Two sizes for one digest: one manifest is wrong, and the
// later one fails. The caller holds p.mu.
func (p *archivePlan) need(i int, item string, h v1.Hash, size int64) (*plannedBlob, error) {
	b := p.blobs[h]
	if b == nil {
		b = &plannedBlob{size: size, open: map[int]func(context.Context) (io.ReadCloser, error){}}
		p.blobs[h] = b
	} else if b.size != size {
		return nil, fmt.Errorf("blob %s: %d bytes, but another manifest declares %d: %w", h, size, b.size, ErrSizeMismatch)
	}
	rec := &p.recs[i]
	if rec.needs == nil {
		rec.needs = map[v1.Hash][]string{}
	}
	if !slices.Contains(rec.needs[h], item) {
		rec.needs[h] = append(rec.needs[h], item)
	}
	return b, nil
}

// blob records the blob h of size bytes, which open reads. A registry
// image's blob is fetched again by digest from its repository when
// placed (unless fetch is false: a foreign layer, which its URLs may
// serve), so that the plan holds no image.
func (p *archivePlan) blob(ctx context.Context, h v1.Hash, size int64, open func() (io.ReadCloser, error), fetch bool) error {
	i, item, err := p.taskOf(ctx)
	if err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("blob %s: no size declared, which an archive needs before it is written", h)
	}
	read := func(context.Context) (io.ReadCloser, error) { return open() }
	if o, ok := p.tasks[i].origin.(registryOrigin); ok && fetch {
		ref, puller := o.ref.repo.Digest(h.String()), p.m.puller
		read = func(ctx context.Context) (io.ReadCloser, error) {
			l, err := puller.Layer(ctx, ref)
			if err != nil {
				return nil, err
			}
			return l.Compressed()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, err := p.need(i, item, h, size)
	if err == nil && b.kept == nil {
		b.open[i] = read
	}
	return err
}

// bytes records the blob h whose content is data (checked when placed):
// in memory within the budget, else appended to the spill file.
func (p *archivePlan) bytes(ctx context.Context, h v1.Hash, data []byte) error {
	i, item, err := p.taskOf(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, err := p.need(i, item, h, int64(len(data)))
	if err != nil || b.kept != nil {
		return err
	}
	if n := b.size; n <= memBlob && p.mem+n <= memBudget {
		b.kept, b.open = bytes.NewReader(bytes.Clone(data)), nil
		p.mem += n
		return nil
	}
	if p.spill == nil {
		if p.spill, err = os.CreateTemp(filepath.Dir(p.path), "."+filepath.Base(p.path)+".spill-*"); err != nil {
			return err
		}
		// Unlinked at once where the system allows it: nothing is left
		// even if the process is killed.
		if os.Remove(p.spill.Name()) != nil {
			p.spillName = p.spill.Name()
		}
	}
	if _, err := p.spill.WriteAt(data, p.spillN); err != nil {
		return err
	}
	b.kept, b.at, b.open = p.spill, p.spillN, nil
	p.spillN += b.size
	return nil
}

// close removes the spill file.
func (p *archivePlan) close() {
	if p.spill != nil {
		p.spill.Close()
		os.Remove(p.spillName) // "": unlinked already
	}
}

// archiveEntry is a file of the archive: its header at off, then its
// content (data, or the blob h), padded to a whole block.
type archiveEntry struct {
	off, size int64
	hdr       []byte
	data      []byte
	h         v1.Hash
	blob      *plannedBlob
	owner     int           // the task that reads the blob
	done      chan struct{} // closed once it is written
}

func (e *archiveEntry) end() int64 { return e.off + int64(len(e.hdr)) + padded(e.size) }

func padded(n int64) int64 { return (n + blockSize - 1) / blockSize * blockSize }

// layout lays the archive out from the tasks that succeeded, and counts
// the blobs each waits for. The caller holds p.mu.
func (p *archivePlan) layout() ([]*archiveEntry, int64, error) {
	var es []*archiveEntry
	var off int64
	var errs []error
	add := func(name string, typ byte, e *archiveEntry) {
		if e.size = int64(len(e.data)); e.blob != nil {
			e.size = e.blob.size
		}
		hdr, err := tarHeader(name, typ, e.size)
		e.off, e.hdr, e.done = off, hdr, make(chan struct{})
		es, errs, off = append(es, e), append(errs, err), e.end()
	}
	add("oci-layout", tar.TypeReg, &archiveEntry{data: []byte(layoutVersion)})
	add("blobs/", tar.TypeDir, &archiveEntry{})
	add("blobs/sha256/", tar.TypeDir, &archiveEntry{})
	dirs := map[string]bool{"sha256": true}
	order := make([]int, len(p.tasks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return jobKey(p.tasks[order[x]].Job) < jobKey(p.tasks[order[y]].Job) })
	p.users = map[v1.Hash][]int{}
	for _, i := range order {
		rec := &p.recs[i]
		if !rec.held {
			continue
		}
		rec.fails = map[string]error{}
		hs := slices.SortedFunc(maps.Keys(rec.needs), func(a, b v1.Hash) int { return strings.Compare(a.String(), b.String()) })
		for _, h := range hs {
			p.users[h] = append(p.users[h], i)
			rec.left++
			if len(p.users[h]) > 1 {
				continue // placed with an earlier task's blobs
			}
			if !dirs[h.Algorithm] {
				dirs[h.Algorithm] = true
				add("blobs/"+h.Algorithm+"/", tar.TypeDir, &archiveEntry{})
			}
			add(blobPath(h), tar.TypeReg, &archiveEntry{h: h, blob: p.blobs[h], owner: i})
		}
		for _, d := range rec.descs {
			errs = append(errs, p.t.addDesc(layoutKey(d.Annotations), d))
		}
	}
	raw, err := p.t.indexJSON()
	if err != nil {
		return nil, 0, err
	}
	add("index.json", tar.TypeReg, &archiveEntry{data: raw})
	// The end of an archive: two zero blocks (what tar.Writer.Close writes).
	es = append(es, &archiveEntry{off: off, size: 2 * blockSize, data: make([]byte, 2*blockSize), done: make(chan struct{})})
	return es, off + 2*blockSize, errors.Join(errs...)
}

// tarHeader is the header of an entry, with the fixed metadata, as
// tar.Writer writes it: in the first of USTAR, PAX and GNU that holds it
// (USTAR for every entry of a layout, but names of long digests and blobs
// of 8 GiB or more).
func tarHeader(name string, typ byte, size int64) ([]byte, error) {
	mode := int64(archiveFileMode)
	if typ == tar.TypeDir {
		mode = archiveDirMode
	}
	var b bytes.Buffer
	err := tar.NewWriter(&b).WriteHeader(&tar.Header{Typeflag: typ, Name: name, Size: size, Mode: mode, ModTime: archiveTime})
	return b.Bytes(), err
}

// place writes the archive planned, and reports each task that succeeded
// (s.Results updated) once its blobs are in place: its bytes then count
// what was downloaded for it, and a blob that fails fails the image or
// the attachment that needs it. A job that failed does not stop the
// others (every failure is reported), but the archive is then removed, as
// it is when ctx ends or the archive itself fails (the error returned).
func (p *archivePlan) place(ctx context.Context, s *Summary) error {
	p.mu.Lock()
	entries, total, err := p.layout()
	p.mu.Unlock()
	var w *partFiles
	if err == nil && ctx.Err() == nil {
		w, err = createParts(p.path, p.partSize, total, p.m.partWritten, p.fail)
	}
	if err != nil {
		p.fail(err)
	}
	if w == nil {
		p.settleRest(ctx, s.Results)
		return p.err
	}
	// Each part is hashed and synced once whole, unless the archive is
	// not to be kept (stop).
	keep, stop := context.WithCancel(ctx)
	defer stop()
	if s.Err() != nil {
		stop()
	}
	finished, flushed := make(chan error, 1), make(chan struct{})
	go func() { finished <- w.finish(entries, keep.Done()) }()
	go func() { w.flush(keep.Done()); close(flushed) }()
	// The entries are written in their order, a few at once.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range p.m.opts.Jobs * blobJobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256<<10)
			for {
				k := int(next.Add(1)) - 1
				if k >= len(entries) || ctx.Err() != nil {
					return
				}
				e := entries[k]
				err := p.put(ctx, w, e, buf)
				if err == nil {
					close(e.done)
				} else {
					stop()
				}
				p.settle(ctx, e, err, s.Results)
			}
		}()
	}
	wg.Wait()
	p.settleRest(ctx, s.Results)
	whole := s.Err() == nil && ctx.Err() == nil
	if !whole {
		stop()
	}
	err = <-finished
	stop()
	<-flushed
	if err == nil && whole {
		if err = w.writeChecksums(); err == nil {
			return nil
		}
		p.fail(err)
	}
	w.abort()
	return p.err
}

// fail notes the archive's own failure, which ends the run.
func (p *archivePlan) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
		p.cancel(err)
	}
}

// partWritten tells the Reporter of a file of an archive written.
func (m *Mirror) partWritten(path string, size int64) {
	m.report(func(r Reporter) {
		if pr, ok := r.(PartReporter); ok {
			pr.PartWritten(path, size)
		}
	})
}

// put writes the entry e: its header, its content and its padding. A
// blob, downloaded or kept, is checked against its size and digest as it
// is written.
func (p *archivePlan) put(ctx context.Context, w *partFiles, e *archiveEntry, buf []byte) error {
	var rc io.ReadCloser
	var err error
	switch b := e.blob; {
	case b == nil:
		rc = io.NopCloser(bytes.NewReader(e.data))
	case b.kept != nil:
		rc = io.NopCloser(io.NewSectionReader(b.kept, b.at, b.size))
	default:
		rc, err = b.open[e.owner](withCounter(ctx, p.recs[e.owner].c))
	}
	if err != nil {
		return fmt.Errorf("blob %s: %w", e.h, err)
	}
	defer rc.Close()
	hh, err := v1.Hasher(cmp.Or(e.h.Algorithm, "sha256"))
	if err == nil {
		_, err = w.WriteAt(e.hdr, e.off)
	}
	start, n := e.off+int64(len(e.hdr)), int64(0)
	if err == nil {
		// Its size at most goes in its place; a byte more fails it.
		n, err = io.CopyBuffer(io.MultiWriter(io.NewOffsetWriter(w, start), hh), io.LimitReader(ctxReader{ctx, rc}, e.size), buf)
	}
	if err == nil && n == e.size {
		// The end of the stream (where a verifying reader checks it),
		// or a byte too many.
		k, rerr := io.ReadFull(rc, buf[:1])
		if n += int64(k); rerr != io.EOF {
			err = rerr
		}
	}
	got := hex.EncodeToString(hh.Sum(nil))
	switch {
	case err != nil:
		return fmt.Errorf("blob %s: %w", e.h, err)
	case n > e.size:
		return fmt.Errorf("blob %s: more than the %d bytes its descriptor declares: %w", e.h, e.size, ErrSizeMismatch)
	case n < e.size:
		return fmt.Errorf("blob %s: %d bytes, but its descriptor declares %d: %w", e.h, n, e.size, ErrSizeMismatch)
	case e.blob != nil && got != e.h.Hex:
		return fmt.Errorf("blob %s: %w (it is %s:%s)", e.h, ErrDigestMismatch, e.h.Algorithm, got)
	}
	_, err = w.WriteAt(make([]byte, padded(e.size)-e.size), start+e.size)
	return err
}

// settle notes that the entry e is written (err nil) or failed, and
// reports the tasks whose blobs are all settled.
func (p *archivePlan) settle(ctx context.Context, e *archiveEntry, err error, results []Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range p.users[e.h] {
		rec := &p.recs[i]
		for _, item := range rec.needs[e.h] { // the image, or an attachment
			if err != nil && rec.fails[item] == nil {
				rec.fails[item] = err
			}
		}
		if rec.left--; rec.left == 0 {
			p.done(ctx, i, results)
		}
	}
}

// settleRest reports the tasks still held, failing those whose blobs
// were not all placed: the run ended, or the archive failed.
func (p *archivePlan) settleRest(ctx context.Context, results []Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	why := cmp.Or(p.err, ctx.Err(), errors.New("internal error: blobs left unwritten"))
	for i := range p.recs {
		if rec := &p.recs[i]; rec.held {
			if rec.left > 0 && rec.fails[""] == nil {
				rec.fails[""] = fmt.Errorf("not written: %w", why)
			}
			p.done(ctx, i, results)
		}
	}
}

// done reports task i, whose blobs are settled. The caller holds p.mu.
func (p *archivePlan) done(ctx context.Context, i int, results []Result) {
	rec := &p.recs[i]
	res := rec.res
	if rec.c != nil {
		res.Bytes = rec.c.n.Load()
	}
	if err := rec.fails[""]; err != nil {
		res.Status, res.Err = Failed, p.m.failure(ctx, err)
	}
	for k, a := range res.Attachments {
		if err := rec.fails[a.Source]; err != nil && a.Status != Failed {
			res.Attachments[k].Status, res.Attachments[k].Err = Failed, p.m.failure(ctx, err)
		}
	}
	rec.held = false
	results[i] = res
	p.m.report(func(r Reporter) { r.Done(res) })
}

// partFiles are the files of an archive being written: FILE, or its
// parts, part i holding the archive's bytes from i*size on. They are
// created (never opened when they exist) once the archive's size is
// known, and written at offsets in any order, so that a part may be
// sparse until it is whole; it is never larger than its size.
type partFiles struct {
	path   string
	size   int64 // of a part
	total  int64
	names  []string
	files  []*os.File
	sums   []listed
	report func(path string, size int64)
	fail   func(error)   // told of a failure to write
	dirty  []atomic.Bool // written to since the flusher's last pass
	kick   chan struct{} // wakes the flusher
}

// createParts creates the files of an archive of total bytes at path, in
// parts of partSize bytes (0: one file).
func createParts(path string, partSize, total int64, report func(string, int64), fail func(error)) (*partFiles, error) {
	w := &partFiles{path: path, size: cmp.Or(partSize, max(total, 1)), total: total, report: report, fail: fail}
	n := int((total + w.size - 1) / w.size)
	if partSize > 0 && n > MaxParts {
		return nil, fmt.Errorf("%s: %s in more than %d parts of %s: use larger parts", path, bytesize.Fixed(total), MaxParts, bytesize.Fixed(partSize))
	}
	for i := range n {
		name := path
		if partSize > 0 {
			name = partName(path, i)
		}
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, archiveFileMode)
		if err != nil {
			w.abort()
			return nil, err
		}
		w.names, w.files = append(w.names, name), append(w.files, f)
	}
	w.dirty, w.kick = make([]atomic.Bool, n), make(chan struct{}, 1)
	return w, nil
}

// WriteAt writes b at the archive's offset off, in the parts it falls in.
func (w *partFiles) WriteAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		i := int(off / w.size)
		k, err := w.files[i].WriteAt(b[n:n+int(min(int64(len(b)-n), int64(i+1)*w.size-off))], off-int64(i)*w.size)
		n, off = n+k, off+int64(k)
		w.dirty[i].Store(true)
		select {
		case w.kick <- struct{}{}:
		default:
		}
		if err != nil {
			w.fail(err)
			return n, err
		}
	}
	return n, nil
}

// flush syncs the parts written to since its last pass, until stop is
// closed, so that the disk writes while the parts are filled: the system
// may hold gigabytes in its page cache before it writes them back of its
// own accord, and the sync of a whole part would then wait for them all.
// Its errors are the final sync's to report.
func (w *partFiles) flush(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-w.kick:
		}
		for i, f := range w.files {
			if w.dirty[i].Swap(false) {
				f.Sync()
			}
		}
	}
}

// finish hashes, syncs and closes each part once the entries up to its
// end are written, in order, and reports it; it stops when quit is
// closed.
func (w *partFiles) finish(entries []*archiveEntry, quit <-chan struct{}) error {
	buf := make([]byte, 1<<20)
	i := 0
	for _, e := range entries {
		select {
		case <-e.done:
		case <-quit:
			return nil
		}
		for ; i < len(w.files) && e.end() >= min(int64(i+1)*w.size, w.total); i++ {
			n := min(w.size, w.total-int64(i)*w.size)
			h := sha256.New()
			_, err := io.CopyBuffer(h, io.NewSectionReader(w.files[i], 0, n), buf)
			if err = errors.Join(err, w.files[i].Sync(), w.files[i].Close()); err != nil {
				w.fail(err)
				return err
			}
			w.sums = append(w.sums, listed{name: filepath.Base(w.names[i]), sum: hex.EncodeToString(h.Sum(nil))})
			w.report(w.names[i], n)
		}
	}
	return nil
}

// writeChecksums writes the checksum file, once every part is synced,
// through a temporary file synced and renamed into place, never over a
// checksum file written meanwhile by someone else (safefile.Write).
func (w *partFiles) writeChecksums() error {
	var b strings.Builder
	for _, p := range w.sums {
		fmt.Fprintf(&b, "%s  %s\n", p.sum, p.name)
	}
	sums := checksumName(w.path)
	err := safefile.Write(safefile.Dir(filepath.Dir(sums)), filepath.Base(sums), safefile.Options{Perm: archiveFileMode, NoReplace: true, SyncDir: true}, func(f io.Writer) error {
		_, err := io.WriteString(f, b.String())
		return err
	})
	switch {
	case errors.Is(err, fs.ErrExist):
		return &ExistsError{Paths: []string{sums}}
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = filepath.Join(filepath.Dir(sums), filepath.FromSlash(pe.Path))
		}
		return err
	}
	w.report(sums, int64(b.Len()))
	return nil
}

// abort closes and removes every file written.
func (w *partFiles) abort() {
	for i, f := range w.files {
		f.Close() // or closed already
		os.Remove(w.names[i])
	}
}
