package manifest

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

// The pre-scan of the envImages detector (envimages.go): before a stream's
// documents are walked, the ConfigMap keys that its workloads pass as
// images through $(VAR) are collected into the Rewriter's run-level set,
// since a ConfigMap comes before the workload that names it. The scan
// costs a search for "$(": only an "$(" whose line says image has its
// document read and parsed.

// prescanEnvRefs returns the envRefs of a stream held in memory.
func prescanEnvRefs(data []byte) []envRef {
	refs, _ := prescanAt(bytes.NewReader(data), expansions(data, 0, nil), int64(len(data)))
	return refs
}

// prescanReader returns the envRefs of a stream read from r. A seekable
// stream (a file, a bytes.Reader) is read through once (io.Copy) for the
// offsets of "$(" (a fast search: "$" is rare in manifests), then only
// around those that may pass an image (prescanAt); any other is read once,
// holding each document until it is known not to hold "$("
// (expansionDocs). It leaves a seekable r at an unspecified offset.
func prescanReader(r io.Reader) ([]envRef, error) {
	s, ok := r.(io.ReadSeeker)
	var base int64
	if ok {
		var err error
		if base, err = s.Seek(0, io.SeekCurrent); err != nil {
			ok = false
		}
	}
	if !ok {
		var out []envRef
		err := expansionDocs(nil, r, func(doc []byte) { out = append(out, docEnvRefs(doc)...) })
		return out, err
	}
	// Where "$(" is: io.Copy hands the scanner a bytes.Reader's or a
	// strings.Reader's bytes without copying them, a file's in blocks.
	var ew expansionWriter
	if _, err := io.Copy(&ew, s); err != nil {
		return nil, err
	}
	at, size := ew.at, ew.off
	if len(at) == 0 {
		return nil, nil
	}
	ra, isAt := s.(io.ReaderAt)
	if !isAt {
		ra = seekReaderAt{s}
	}
	return prescanAt(io.NewSectionReader(ra, base, size), at, size)
}

// expansionWriter notes the offsets of "$(" in what is written to it.
type expansionWriter struct {
	off    int64 // bytes written so far
	dollar bool  // the last byte written is "$"
	at     []int64
}

func (e *expansionWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if e.dollar && p[0] == '(' {
		e.at = append(e.at, e.off-1)
	}
	e.at = expansions(p, e.off, e.at)
	e.dollar, e.off = p[len(p)-1] == '$', e.off+int64(len(p))
	return len(p), nil
}

func (e *expansionWriter) WriteString(p string) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if e.dollar && p[0] == '(' {
		e.at = append(e.at, e.off-1)
	}
	for i := 0; ; {
		k := strings.Index(p[i:], "$(")
		if k < 0 {
			break
		}
		e.at = append(e.at, e.off+int64(i+k))
		i += k + 2
	}
	e.dollar, e.off = p[len(p)-1] == '$', e.off+int64(len(p))
	return len(p), nil
}

// expansions appends to at the offsets (plus off) of "$(" in b.
func expansions(b []byte, off int64, at []int64) []int64 {
	for i := 0; ; {
		k := bytes.Index(b[i:], []byte("$("))
		if k < 0 {
			return at
		}
		at = append(at, off+int64(i+k))
		i += k + 2
	}
}

// seekReaderAt reads at an offset by seeking.
type seekReaderAt struct{ s io.ReadSeeker }

func (r seekReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if _, err := r.s.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(r.s, p)
}

// prescanAt returns the envRefs of the documents of the stream ra (of size
// bytes) that hold "$(" at one of the offsets at, in order. Only an "$("
// whose line or the line before it says image (an image word, or
// "prometheus-config-reloader": what imageVars requires, and more) is
// looked at further: its document is delimited by reading backwards and
// forwards to its "---" marker lines, then read and parsed (docEnvRefs).
func prescanAt(ra io.ReaderAt, at []int64, size int64) ([]envRef, error) {
	const window = 1 << 10 // a longer line counts as saying image
	var out []envRef
	var buf []byte
	done := int64(-1) // the end of the last document read
	for _, p := range at {
		if p < done {
			continue
		}
		lo, hi := max(p-window, 0), min(p+window, size)
		if buf == nil {
			buf = make([]byte, min(2*window, size))
		}
		w := buf[:hi-lo]
		if _, err := ra.ReadAt(w, lo); err != nil && err != io.EOF {
			return out, err
		}
		if !linesMayPassImage(w, int(p-lo), lo == 0, hi == size) {
			continue
		}
		start, err := docStartBefore(ra, p)
		if err != nil {
			return out, err
		}
		end, err := docEndAfter(ra, p, size)
		if err != nil {
			return out, err
		}
		doc := make([]byte, end-start)
		if _, err := ra.ReadAt(doc, start); err != nil && err != io.EOF {
			return out, err
		}
		out = append(out, docEnvRefs(doc)...)
		done = end
	}
	return out, nil
}

// linesMayPassImage reports whether the "$(" at i of w may pass an image:
// its line or the line before it (blank and comment lines skipped, as
// YAML skips them between an image flag and its value) holds an image
// word or "prometheus-config-reloader". A line that runs past w counts
// (first, last: w starts or ends the stream).
func linesMayPassImage(w []byte, i int, first, last bool) bool {
	ls := bytes.LastIndexByte(w[:i], '\n') // the end of the line before
	if ls < 0 && !first {
		return true
	}
	ps := ls + 1 // where the line before starts
	for ls >= 0 {
		pl := bytes.LastIndexByte(w[:ls], '\n')
		if pl < 0 && !first {
			return true
		}
		ps = pl + 1
		if !blankOrComment(w[ps:ls]) {
			break
		}
		ls = pl
	}
	le := bytes.IndexByte(w[i:], '\n')
	if le < 0 {
		if !last {
			return true
		}
		le = len(w) - i
	}
	text := w[ps : i+le]
	return hasImageWordBytes(text) || bytes.Contains(text, []byte("prometheus-config-reloader"))
}

// blankOrComment reports whether line holds only white space or a comment.
func blankOrComment(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r")
	return len(line) == 0 || line[0] == '#'
}

// docStartBefore returns the start of the document holding offset p: its
// "---" marker line, or 0.
func docStartBefore(ra io.ReaderAt, p int64) (int64, error) {
	const block = 64 << 10
	buf := make([]byte, block+4)
	for hi := p; hi > 0; hi -= block {
		lo := max(hi-block, 0)
		// 4 bytes past hi tell a marker whose line break is before hi;
		// p is inside the document, so they are there.
		n, err := ra.ReadAt(buf[:hi-lo+4], lo)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if l := lastMarkerBefore(buf[:n], 0, int(hi-lo), false); l >= 0 {
			return lo + int64(l), nil
		}
	}
	return 0, nil
}

// docEndAfter returns the end of the document holding offset p: the start
// of the next "---" marker line, or size.
func docEndAfter(ra io.ReaderAt, p, size int64) (int64, error) {
	const block = 64 << 10
	buf := make([]byte, block+4)
	for lo := p; lo < size; lo += block {
		hi := min(lo+block+4, size)
		n, err := ra.ReadAt(buf[:hi-lo], lo)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if l := nextMarkerIn(buf[:n], 0, min(block, n), lo+int64(n) == size); l >= 0 {
			return lo + int64(l), nil
		}
	}
	return size, nil
}

// lastMarkerBefore returns the start of the last "---" marker line whose
// line break lies in b[from:to], or -1. It searches forwards for "\n---"
// (a fast search; markers are few), never line by line.
func lastMarkerBefore(b []byte, from, to int, eof bool) int {
	last := -1
	for i := from; i < to; {
		k := bytes.Index(b[i:min(to+3, len(b))], []byte("\n---"))
		if k < 0 {
			break
		}
		if l := i + k + 1; isMarkerAt(b, l, eof) {
			last = l
		}
		i += k + 1
	}
	return last
}

// nextMarkerIn returns the start of the first "---" marker line whose line
// break lies in b[from:to], or -1.
func nextMarkerIn(b []byte, from, to int, eof bool) int {
	for i := from; i < to; {
		k := bytes.Index(b[i:min(to+3, len(b))], []byte("\n---"))
		if k < 0 {
			return -1
		}
		if l := i + k + 1; isMarkerAt(b, l, eof) {
			return l
		}
		i += k + 1
	}
	return -1
}

// docEnvRefs returns the envRefs of the documents of doc (one document, or
// a few when "..." ends one) that hold "$(" and a ConfigMap reference and
// may be workloads. Documents that do not parse are left to the pipeline,
// which reports them.
func docEnvRefs(doc []byte) []envRef {
	var out []envRef
	sp := splitterOf(doc, 1)
	for {
		d, err := sp.next()
		if err != nil {
			return out
		}
		if !bytes.Contains(d.data, []byte("$(")) || !bytes.Contains(d.data, []byte("configMap")) {
			continue
		}
		// A CustomResourceDefinition (most bytes of real input) or any
		// kind known not to be a workload is not parsed.
		if k := topLevelKind(d.data); k != "" && !strings.HasSuffix(k, "List") {
			if _, ok := podSpecPaths[k]; !ok {
				continue
			}
		}
		var root yaml.Node
		if yaml.Unmarshal(yaml11(d.data), &root) != nil {
			continue
		}
		out = append(out, envRefsOf(&root)...)
	}
}

// expansionDocs calls fn with the bytes of each document of a stream that
// holds "$(" (data, or read from r when r is set), and costs little more
// than a search for "$(": it looks for the "---" marker lines that bound a
// document only around each "$(", backwards to the one before and forwards
// to the one after, so the documents without "$(" are never split. What
// fn gets starts at a "---" line (or the stream's start) and ends before
// one (or at the stream's end): whole documents, as the splitter cuts them
// (a "..." end marker may leave two in one piece). Reading r, it holds the
// document being searched and a few blocks.
func expansionDocs(data []byte, r io.Reader, fn func(doc []byte)) error {
	buf, eof := data, r == nil
	const block = 64 << 10
	if !eof {
		buf = make([]byte, 0, 4*block)
	}
	// start is where the current document starts (as far as known), pos
	// where to look for "$(" next, seen where the lines not yet examined
	// for a marker start; in says the current document holds "$(", and
	// next is then where to look for its end.
	start, pos, seen, next, in := 0, 0, 0, 0, false
	for {
		if in {
			end, ok, resume := nextMarker(buf, next, eof)
			if ok {
				fn(buf[start:end])
				start, pos, seen, in = end, end, end, false
				continue
			}
			next = resume
		} else if i := bytes.Index(buf[pos:], []byte("$(")); i >= 0 {
			at := pos + i
			start = lastMarker(buf[:at], start, start)
			next, in = at, true
			continue
		} else {
			// No "$(" in what was read: the document may still get one
			// (a "$" at the end may start one).
			start = lastMarker(buf, start, max(start, seen))
			pos, seen = max(start, len(buf)-1), max(start, len(buf)-4)
		}
		if eof {
			return nil
		}
		if cap(buf)-len(buf) < block {
			if start >= len(buf)/2 {
				n := copy(buf, buf[start:])
				buf, pos, seen, next, start = buf[:n], pos-start, seen-start, max(next-start, 0), 0
			} else {
				buf = append(buf[:cap(buf)], make([]byte, cap(buf))...)[:len(buf)]
			}
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return err
		}
	}
}

// lastMarker returns the start of the last "---" marker line of b whose
// line break lies at or after lo, or from when there is none. The line at
// len(b), if any, is never one: b is a prefix of the stream.
func lastMarker(b []byte, from, lo int) int {
	if l := lastMarkerBefore(b, lo, len(b), false); l >= 0 {
		return l
	}
	return from
}

// nextMarker returns the start of the first "---" marker line whose line
// break lies at or after from (ok), or the end of the stream when b is all
// of it (eof); otherwise ok is false and resume is where to go on once
// more is read.
func nextMarker(b []byte, from int, eof bool) (end int, ok bool, resume int) {
	for i := from; ; {
		k := bytes.Index(b[i:], []byte("\n---"))
		if k < 0 {
			if eof {
				return len(b), true, 0
			}
			return 0, false, max(from, len(b)-3) // "\n--" may be cut
		}
		l := i + k + 1
		if l+3 == len(b) && !eof {
			return 0, false, l - 1 // too few bytes to tell a marker
		}
		if isMarkerAt(b, l, eof) {
			return l, true, 0
		}
		i = l
	}
}

// isMarkerAt reports whether a "---" marker line starts at l; eof says b
// ends the stream.
func isMarkerAt(b []byte, l int, eof bool) bool {
	if !bytes.HasPrefix(b[l:], []byte("---")) {
		return false
	}
	if l+3 == len(b) {
		return eof
	}
	switch b[l+3] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// envRefsHolder is the Rewriter's run-level set, read by every worker
// without a lock.
type envRefsHolder struct{ p atomic.Pointer[envRefSet] }

func (h *envRefsHolder) load() *envRefSet { return h.p.Load() }

// add adds refs to the set.
func (h *envRefsHolder) add(refs []envRef) {
	if len(refs) == 0 {
		return
	}
	for {
		old := h.p.Load()
		if h.p.CompareAndSwap(old, old.with(refs)) {
			return
		}
	}
}

// prescanReader pre-scans a stream given as an io.Reader and returns the
// reader to rewrite from: a *bytes.Buffer (Helm's post-renderer input) is
// scanned in place, a seekable reader (a file, a bytes.Reader) is read
// through and rewound. Any other stream (a pipe, a terminal) is returned
// as it is, not scanned: reading it to its end first would hold it all and
// wait for an input that may stay open; readAhead serves it.
func (h *envRefsHolder) prescanReader(r io.Reader) (_ io.Reader, scanned bool, _ error) {
	switch b := r.(type) {
	case interface{ Bytes() []byte }:
		h.add(prescanEnvRefs(b.Bytes()))
		return r, true, nil
	case io.ReadSeeker:
		start, err := b.Seek(0, io.SeekCurrent)
		if err != nil {
			return r, false, nil // a pipe after all
		}
		refs, err := prescanReader(b)
		if err != nil {
			return nil, false, err
		}
		h.add(refs)
		if _, err := b.Seek(start, io.SeekStart); err != nil {
			return nil, false, err
		}
		return b, true, nil
	}
	return r, false, nil
}

// readAheadBytes bounds how far readAhead reads past a ConfigMap.
const readAheadBytes = 8 << 20

// readAhead serves a stream that was not scanned first (a pipe): it scans
// each batch for references before the batch is processed, so a ConfigMap
// is known when the workload that passes its value comes before it or in
// its batch; and at the first batch holding a ConfigMap, it reads up to
// readAheadBytes further (or to the end) before handing that batch on, so
// that a workload rendered after its ConfigMap, as Helm renders them, is
// known too. A stream without ConfigMaps is never held, and a stream that
// stays open is held at most that far.
func (h *envRefsHolder) readAhead(next func() ([]piece, error)) func() ([]piece, error) {
	var held [][]piece
	var heldErr error
	done := false // the read-ahead happened
	read := func() ([]piece, error) {
		ps, err := next()
		for _, p := range ps {
			if bytes.Contains(p.doc.data, []byte("$(")) {
				h.add(docEnvRefs(p.doc.data))
			}
		}
		return ps, err
	}
	pop := func() ([]piece, error) {
		ps := held[0]
		held = held[1:]
		if len(held) == 0 {
			return ps, heldErr
		}
		return ps, nil
	}
	return func() ([]piece, error) {
		if len(held) > 0 {
			return pop()
		}
		ps, err := read()
		if done || err != nil || !holdsConfigMap(ps) {
			return ps, err
		}
		done = true
		held = append(held, ps)
		for n := 0; err == nil && n < readAheadBytes; {
			ps, err = read()
			held = append(held, ps)
			for _, p := range ps {
				n += len(p.doc.data)
			}
		}
		heldErr = err
		return pop()
	}
}

// holdsConfigMap reports whether a batch may hold a ConfigMap.
func holdsConfigMap(ps []piece) bool {
	for _, p := range ps {
		if bytes.Contains(p.doc.data, []byte("ConfigMap")) {
			return true
		}
	}
	return false
}
