package mirror

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// layoutVersion is the content of a layout's oci-layout file.
const layoutVersion = `{"imageLayoutVersion":"1.0.0"}`

// The fixed metadata of every entry of an archive, so that the same
// content gives the same bytes: the Unix epoch, modes 0644 and 0755, owner
// and group 0 without names.
var archiveTime = time.Unix(0, 0)

const (
	archiveFileMode = 0o644
	archiveDirMode  = 0o755
)

// archiveWriter writes the tar archive of ExportArchive. The tasks write
// their blobs into a spool directory (spoolBlob) and their index.json
// descriptors into their own record (record); a committer goroutine
// appends the blobs of each task that succeeded to the archive, in the
// order of the tasks' layout keys and within a task by digest, each blob
// once, and removes them from the spool. A task may start only a few
// tasks ahead of the commit (window), which bounds the spool.
type archiveWriter struct {
	cancel   context.CancelCauseFunc
	t        *layoutTarget
	spoolDir string
	pw       *partWriter
	tw       *tar.Writer
	buf      []byte
	stop     func() bool // stops the wake-up on ctx's end

	mu        sync.Mutex
	cond      *sync.Cond
	ctx       context.Context
	seq       []int // task indexes in commit order
	pos       []int // task index -> position in seq
	tasks     []archiveTask
	head      int // positions committed
	window    int
	err       error // the first failure to write the archive
	spool     map[v1.Hash]*spooled
	memUsed   int64 // bytes of spooled blobs held in memory
	written   map[v1.Hash]bool
	dirs      map[string]bool
	committed chan struct{}
}

// archiveTask is what one task gave the archive.
type archiveTask struct {
	done, ok bool
	blobs    map[v1.Hash]*spooled
	descs    []keyedDesc
}

type keyedDesc struct {
	key  string
	desc v1.Descriptor
}

// spooled is a blob in the spool, shared by the tasks that need it; the
// task that created it writes it (ready is closed then). A small blob is
// held in memory (data), within a budget; others are files of the spool
// directory (path): writing every byte twice to disk is what the spool
// costs, and small blobs (manifests, configs, small layers) are most of
// the files.
type spooled struct {
	path  string
	data  []byte
	size  int64
	refs  int
	ready chan struct{}
	err   error
}

// Spooling in memory: blobs of at most memBlob bytes, memBudget bytes in
// all (tests change them).
var (
	memBlob   int64 = 4 << 20
	memBudget int64 = 32 << 20
)

type archiveTaskKey struct{}

// newArchiveWriter starts the archive at path: a spool directory beside
// it, the first part, and the entries that come first (oci-layout, the
// blobs directories).
func newArchiveWriter(ctx context.Context, path string, partSize int64, cancel context.CancelCauseFunc, report func(string, int64)) (*archiveWriter, error) {
	spool, err := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(path)+".spool-")
	if err != nil {
		return nil, err
	}
	a := &archiveWriter{
		ctx: ctx, cancel: cancel, spoolDir: spool,
		pw:    &partWriter{path: path, size: partSize, report: report},
		buf:   make([]byte, 1<<20),
		spool: map[v1.Hash]*spooled{}, written: map[v1.Hash]bool{}, dirs: map[string]bool{},
		committed: make(chan struct{}),
	}
	a.cond = sync.NewCond(&a.mu)
	a.tw = tar.NewWriter(a.pw)
	err = a.writeFile("oci-layout", []byte(layoutVersion))
	if err == nil {
		err = a.addDir("blobs/")
	}
	if err == nil {
		err = a.addDir("blobs/sha256/")
	}
	if err != nil {
		a.pw.abort()
		os.RemoveAll(spool)
		return nil, err
	}
	return a, nil
}

// plan orders the tasks by layout key (jobKey) and starts the committer;
// window is how many positions past the commit a task may start at.
func (a *archiveWriter) plan(tasks []task, window int) {
	a.seq = make([]int, len(tasks))
	for i := range a.seq {
		a.seq[i] = i
	}
	sort.SliceStable(a.seq, func(x, y int) bool { return jobKey(tasks[a.seq[x]].Job) < jobKey(tasks[a.seq[y]].Job) })
	a.pos = make([]int, len(tasks))
	for p, i := range a.seq {
		a.pos[i] = p
	}
	a.tasks = make([]archiveTask, len(tasks))
	for p := range a.tasks {
		a.tasks[p].blobs = map[v1.Hash]*spooled{}
	}
	a.window = max(window, 1)
	a.stop = context.AfterFunc(a.ctx, func() {
		a.mu.Lock()
		a.cond.Broadcast()
		a.mu.Unlock()
	})
	go a.commitLoop()
}

func (a *archiveWriter) order() []int { return a.seq }

func (a *archiveWriter) admit(ctx context.Context, i int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.pos[i] >= a.head+a.window && ctx.Err() == nil {
		a.cond.Wait()
	}
}

func (a *archiveWriter) taskContext(ctx context.Context, i int) context.Context {
	return context.WithValue(ctx, archiveTaskKey{}, a.pos[i])
}

func (a *archiveWriter) finished(i int, r Result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := &a.tasks[a.pos[i]]
	st.done, st.ok = true, r.Status != Failed
	a.cond.Broadcast()
}

// taskOf is the position of the task running with ctx.
func (a *archiveWriter) taskOf(ctx context.Context) (*archiveTask, error) {
	p, ok := ctx.Value(archiveTaskKey{}).(int)
	if !ok {
		return nil, fmt.Errorf("internal error: an archive blob written outside a task")
	}
	return &a.tasks[p], nil
}

// record notes a descriptor of index.json that the task adds.
func (a *archiveWriter) record(ctx context.Context, key string, desc v1.Descriptor) error {
	st, err := a.taskOf(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st.descs = append(st.descs, keyedDesc{key, desc})
	return nil
}

// spoolBlob makes the blob h (size bytes, -1 when unknown; open reads it)
// part of the task's share of the archive: nothing to do when the archive
// holds it already; otherwise it is written to the spool, checked against
// h and size, unless another task is writing it, which is then waited for
// (and taken over when it fails).
func (a *archiveWriter) spoolBlob(ctx context.Context, h v1.Hash, size int64, open func() (io.ReadCloser, error)) error {
	st, err := a.taskOf(ctx)
	if err != nil {
		return err
	}
	for {
		a.mu.Lock()
		if a.written[h] {
			a.mu.Unlock()
			return nil
		}
		e, owner := a.spool[h], false
		if e == nil {
			e, owner = &spooled{ready: make(chan struct{})}, true
			a.spool[h] = e
		}
		if st.blobs[h] != e {
			st.blobs[h] = e
			e.refs++
		}
		a.mu.Unlock()
		if owner {
			err := a.fill(ctx, e, h, size, open)
			a.mu.Lock()
			e.err = err
			if err != nil && a.spool[h] == e {
				delete(a.spool, h)
			}
			close(e.ready)
			a.mu.Unlock()
			return err
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if e.err == nil {
			return nil
		}
		// The task writing it failed: write it ourselves.
		a.mu.Lock()
		if st.blobs[h] == e {
			delete(st.blobs, h)
			e.refs--
		}
		a.mu.Unlock()
	}
}

// fill writes the blob h into the spool, in memory or in a new file,
// checking its size and digest (as ociDir.writeBlob does).
func (a *archiveWriter) fill(ctx context.Context, e *spooled, h v1.Hash, size int64, open func() (io.ReadCloser, error)) (err error) {
	hh, err := v1.Hasher(h.Algorithm)
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	inMemory := false
	if size >= 0 && size <= memBlob {
		a.mu.Lock()
		if inMemory = a.memUsed+size <= memBudget; inMemory {
			a.memUsed += size
		}
		a.mu.Unlock()
	}
	var w io.Writer
	var buf *bytes.Buffer
	var f *os.File
	if inMemory {
		buf = bytes.NewBuffer(make([]byte, 0, size))
		w = buf
	} else {
		if f, err = os.CreateTemp(a.spoolDir, h.Hex+"-*"); err != nil {
			return err
		}
		w = f
	}
	defer func() {
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(f.Name())
			}
		}
		if inMemory && err != nil {
			a.mu.Lock()
			a.memUsed -= size
			a.mu.Unlock()
		}
	}()
	rc, err := open()
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	defer rc.Close()
	// One byte past the size, in memory: a longer blob fails below.
	var r io.Reader = ctxReader{ctx, rc}
	if inMemory {
		r = io.LimitReader(r, size+1)
	}
	n, err := io.Copy(io.MultiWriter(w, hh), r)
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	if size >= 0 && n != size {
		return fmt.Errorf("blob %s: %d bytes, but its descriptor declares %d: %w", h, n, size, ErrSizeMismatch)
	}
	if got := hex.EncodeToString(hh.Sum(nil)); got != h.Hex {
		return fmt.Errorf("blob %s: %w (it is %s:%s)", h, ErrDigestMismatch, h.Algorithm, got)
	}
	e.size = n
	if inMemory {
		e.data = buf.Bytes()
	} else {
		e.path = f.Name()
	}
	return nil
}

// drop removes a spooled blob. The caller holds a.mu.
func (a *archiveWriter) drop(e *spooled) {
	if e.data != nil {
		a.memUsed -= e.size
		e.data = nil
	}
	if e.path != "" {
		os.Remove(e.path)
		e.path = ""
	}
}

// commitLoop commits the tasks in order as they finish: the blobs and
// descriptors of a task that succeeded go into the archive (unless the
// archive failed), those of a task that failed only leave the spool.
func (a *archiveWriter) commitLoop() {
	defer close(a.committed)
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.head < len(a.tasks) {
		st := &a.tasks[a.head]
		if !st.done {
			a.cond.Wait()
			continue
		}
		if st.ok && a.err == nil {
			a.mu.Unlock()
			err := a.commit(st)
			a.mu.Lock()
			if err != nil && a.err == nil {
				a.err = err
				a.cancel(err)
			}
		}
		a.release(st)
		a.head++
		a.cond.Broadcast()
	}
}

// commit appends the task's blobs that the archive lacks, by digest, and
// adds its descriptors to index.json.
func (a *archiveWriter) commit(st *archiveTask) error {
	hs := make([]v1.Hash, 0, len(st.blobs))
	for h := range st.blobs {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].String() < hs[j].String() })
	for _, h := range hs {
		e := st.blobs[h]
		a.mu.Lock()
		done := a.written[h]
		a.mu.Unlock()
		if done {
			continue
		}
		if err := a.addDir("blobs/" + h.Algorithm + "/"); err != nil {
			return err
		}
		if err := a.copyEntry(blobPath(h), e); err != nil {
			return err
		}
		a.mu.Lock()
		a.written[h] = true
		if a.spool[h] == e {
			delete(a.spool, h)
		}
		a.drop(e)
		a.mu.Unlock()
	}
	for _, d := range st.descs {
		if err := a.t.addDesc(d.key, d.desc); err != nil {
			return err
		}
	}
	return nil
}

// release drops the task's hold on its spooled blobs, removing those no
// other task holds. The caller holds a.mu.
func (a *archiveWriter) release(st *archiveTask) {
	for h, e := range st.blobs {
		e.refs--
		if e.refs <= 0 && a.spool[h] == e {
			delete(a.spool, h)
			a.drop(e)
		}
	}
	st.blobs = nil
}

// header is the header of an entry, with the fixed metadata.
func header(name string, typ byte, size int64) *tar.Header {
	mode := int64(archiveFileMode)
	if typ == tar.TypeDir {
		mode = archiveDirMode
	}
	// The format is the first of USTAR, PAX and GNU that holds the
	// header: USTAR for every entry of a layout, but names of long
	// digests and blobs of 8 GiB or more.
	return &tar.Header{Typeflag: typ, Name: name, Size: size, Mode: mode, ModTime: archiveTime}
}

func (a *archiveWriter) addDir(name string) error {
	if a.dirs[name] {
		return nil
	}
	a.dirs[name] = true
	return a.tw.WriteHeader(header(name, tar.TypeDir, 0))
}

// writeFile appends the regular file name with content b.
func (a *archiveWriter) writeFile(name string, b []byte) error {
	if err := a.tw.WriteHeader(header(name, tar.TypeReg, int64(len(b)))); err != nil {
		return err
	}
	_, err := a.tw.Write(b)
	return err
}

// copyEntry appends the regular file name with the content of the
// spooled blob e.
func (a *archiveWriter) copyEntry(name string, e *spooled) error {
	if err := a.tw.WriteHeader(header(name, tar.TypeReg, e.size)); err != nil {
		return err
	}
	if e.path == "" {
		_, err := a.tw.Write(e.data)
		return err
	}
	f, err := os.Open(e.path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.CopyBuffer(a.tw, struct{ io.Reader }{f}, a.buf)
	if err == nil && n != e.size {
		err = fmt.Errorf("%s: the spooled blob has %d bytes, not %d", e.path, n, e.size)
	}
	return err
}

// close ends the archive once every task has finished: with ok, index.json
// goes in last, the last part is closed and the checksum file written;
// otherwise, or when that fails, every file written is removed. The spool
// is removed in any case. The error is the archive's own failure.
func (a *archiveWriter) close(ok bool) error {
	<-a.committed
	a.stop()
	defer os.RemoveAll(a.spoolDir)
	a.mu.Lock()
	err := a.err
	a.mu.Unlock()
	if ok && err == nil {
		a.t.mu.Lock()
		raw, jerr := a.t.indexJSON()
		a.t.mu.Unlock()
		err = jerr
		if err == nil {
			err = a.writeFile("index.json", raw)
		}
		if err == nil {
			err = a.tw.Close()
		}
		if err == nil {
			err = a.pw.finish()
		}
		if err == nil {
			return nil
		}
	}
	a.pw.abort()
	return err
}

// partWriter writes the archive at path as one file, or in parts of size
// bytes, hashing each as it goes; finish writes the checksum file last.
// Files are created, never opened when they exist. A complete part is
// synced to disk by a goroutine of its own while the next one is written
// (a few parts at most wait for it), and reported once synced.
type partWriter struct {
	path   string
	size   int64 // 0: one file
	report func(path string, size int64)

	f       *os.File
	n       int64
	h       hash.Hash
	parts   []listed
	created []string
	tmp     string

	syncs   chan syncJob
	synced  chan struct{} // closed when the syncer is done
	syncErr error         // the syncer's first error, read once synced is closed
}

// syncJob is a complete part to sync and close.
type syncJob struct {
	f *os.File
	n int64
}

// pendingSyncs is how many complete parts may wait for their sync while
// the next one is written.
const pendingSyncs = 2

// syncer syncs and closes the parts handed to it, in order.
func (w *partWriter) syncer() {
	defer close(w.synced)
	for j := range w.syncs {
		err := j.f.Sync()
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
		if err != nil && w.syncErr == nil {
			w.syncErr = err
		}
		if w.syncErr == nil {
			w.report(j.f.Name(), j.n)
		}
	}
}

// waitSyncs waits until every part handed to the syncer is synced.
func (w *partWriter) waitSyncs() error {
	if w.syncs == nil {
		return nil
	}
	close(w.syncs)
	<-w.synced
	w.syncs = nil
	return w.syncErr
}

func (w *partWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.f == nil {
			if err := w.next(); err != nil {
				return written, err
			}
		}
		k := len(p)
		if w.size > 0 && int64(k) > w.size-w.n {
			k = int(w.size - w.n)
		}
		m, err := w.f.Write(p[:k])
		w.h.Write(p[:m])
		w.n += int64(m)
		written += m
		p = p[m:]
		if err != nil {
			return written, err
		}
		if w.size > 0 && w.n == w.size {
			if err := w.closePart(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// next creates the next file.
func (w *partWriter) next() error {
	name := w.path
	if w.size > 0 {
		if len(w.parts) >= MaxParts {
			return fmt.Errorf("%s: more than %d parts of %s: use larger parts", w.path, MaxParts, humanBytes(w.size))
		}
		name = partName(w.path, len(w.parts))
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, archiveFileMode)
	if err != nil {
		return err
	}
	if w.syncs == nil {
		w.syncs, w.synced = make(chan syncJob, pendingSyncs), make(chan struct{})
		go w.syncer()
	}
	w.f, w.n, w.h = f, 0, sha256.New()
	w.created = append(w.created, name)
	return nil
}

// closePart notes the current file's checksum and hands it to the
// syncer.
func (w *partWriter) closePart() error {
	w.parts = append(w.parts, listed{name: filepath.Base(w.f.Name()), sum: hex.EncodeToString(w.h.Sum(nil))})
	w.syncs <- syncJob{w.f, w.n}
	w.f = nil
	return nil
}

// finish closes the last file and writes the checksum file, through a
// temporary file renamed into place.
func (w *partWriter) finish() error {
	if w.f != nil {
		if err := w.closePart(); err != nil {
			return err
		}
	}
	if err := w.waitSyncs(); err != nil {
		return err
	}
	var b strings.Builder
	for _, p := range w.parts {
		fmt.Fprintf(&b, "%s  %s\n", p.sum, p.name)
	}
	sums := checksumName(w.path)
	f, err := os.CreateTemp(filepath.Dir(sums), "."+filepath.Base(sums)+"-*")
	if err != nil {
		return err
	}
	w.tmp = f.Name()
	_, err = f.WriteString(b.String())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(w.tmp, archiveFileMode)
	}
	if err == nil {
		// Never over a checksum file written meanwhile by someone else.
		if _, serr := os.Lstat(sums); serr == nil {
			err = &ExistsError{Paths: []string{sums}}
		}
	}
	if err == nil {
		err = os.Rename(w.tmp, sums)
	}
	if err != nil {
		return err
	}
	w.tmp = ""
	w.created = append(w.created, sums)
	if d, err := os.Open(filepath.Dir(sums)); err == nil {
		d.Sync()
		d.Close()
	}
	w.report(sums, int64(b.Len()))
	return nil
}

// abort removes every file written.
func (w *partWriter) abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	w.waitSyncs()
	for _, p := range w.created {
		os.Remove(p)
	}
	w.created = nil
	if w.tmp != "" {
		os.Remove(w.tmp)
	}
}
