package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// The pipeline of a stream, in the spirit of kio.Pipeline: read (the
// splitter cuts documents, split.go), parse, find (the Finder and its
// detectors, find.go), map (mapping.go), splice (splice.go, verified), write
// in input order; the documents of a stream are processed by several
// workers at once and their results recorded by one.

// RewriteBytes rewrites one stream held in memory. name is used in errors
// and in the image report.
func (rw *Rewriter) RewriteBytes(data []byte, name string) ([]byte, error) {
	var out bytes.Buffer
	if err := rw.Rewrite(&out, bytes.NewReader(data), name); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Rewrite reads a stream of YAML or JSON documents from r and writes it to w
// with every image field mapped; all other bytes are copied unchanged. With
// a nil w it only collects the images. name ("<stdin>", a file path) is used
// in errors and in the image report.
//
// On error, what was written to w is incomplete: callers that need
// all-or-nothing output write to a buffer or a temporary file. The
// Rewriter then holds the images of the documents read without error (a
// run stops after 20 errors, so not necessarily all of them): use a new
// Rewriter to start again from nothing.
func (rw *Rewriter) Rewrite(w io.Writer, r io.Reader, name string) error {
	return rw.RewriteAt(w, r, name, 1)
}

// RewriteAt is Rewrite for a stream cut out of a larger file: its first
// byte is at line line of name, and lines in errors and reports count from
// there.
func (rw *Rewriter) RewriteAt(w io.Writer, r io.Reader, name string, line int) error {
	if w != nil && rw.listOnly {
		return fmt.Errorf("%s: %w", name, ErrListOnly)
	}
	// A ConfigMap key may be passed as an image by a document after it
	// (envimages.go): scan the stream for such references first, or, on
	// a stream that cannot be read twice, read ahead of its ConfigMaps.
	r, scanned, err := rw.envRefs.prescanReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sp := newSplitter(r)
	sp.line = line
	next := func() ([]piece, error) {
		docs, err := nextBatch(sp)
		ps := make([]piece, len(docs))
		for i, d := range docs {
			ps[i] = piece{doc: d, name: name, first: i == 0 && d.index == 0, last: i == len(docs)-1}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s: %w", name, err)
		} else if err != nil {
			err = io.EOF
		}
		return ps, err
	}
	if !scanned {
		next = rw.envRefs.readAhead(next)
	}
	return rw.pipeline(w, next)
}

// piece is one document in the pipeline, with the name of the stream it
// belongs to (a Part, or the one stream of RewriteAt).
type piece struct {
	doc  document
	name string
	// head is written before the document when first is set.
	head string
	// first: the document begins its stream. last: the document ends a
	// batch of its stream, as nextBatch cuts a stream, after which the run
	// may stop. empty: the stream has no document, the piece only writes
	// its head.
	first, last, empty bool
}

// pipeline runs the documents next returns through the workers and writes
// them in input order. next returns io.EOF at the end, or a read error
// (worded already) that ends the run. The documents of each stream are
// recorded in order; a stream with errors ends the run when the next
// stream begins, so that errors name one stream, as if each stream were
// rewritten by a call of its own.
func (rw *Rewriter) pipeline(w io.Writer, next func() ([]piece, error)) error {
	// Documents travel in batches (most are small), processed on every
	// worker and written in input order. Memory holds at most the batches
	// in the queue.
	type slot struct {
		docs []piece
		res  chan []result
	}
	// Prepare's work stops here: the workers process what it has not.
	rw.stopAhead()
	jobs := make(chan slot, rw.workers)
	queue := make(chan slot, 2*rw.workers)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(jobs)
		defer close(queue)
		for {
			docs, err := next()
			if len(docs) > 0 {
				s := slot{docs: docs, res: make(chan []result, 1)}
				select {
				case queue <- s:
				case <-stop:
					return
				}
				jobs <- s
			}
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
		}
	}()
	for i := 0; i < rw.workers; i++ {
		go func() {
			for s := range jobs {
				out := make([]result, len(s.docs))
				for k, p := range s.docs {
					if !p.empty {
						out[k] = rw.processAhead(p.doc, p.name, w != nil)
					}
				}
				s.res <- out
			}
		}()
	}

	// On an early stop the reader and workers end by themselves (the reader
	// at its next document, which may wait for a slow input); they write
	// nothing this call still reads.
	var errs []error
	name := ""
	stopped := false
	end := func() {
		close(stop)
		stopped = true
	}
run:
	for s := range queue {
		results := <-s.res
		for k, p := range s.docs {
			if p.first {
				if len(errs) > 0 {
					end()
					break run
				}
				name = p.name
				if w != nil && p.head != "" {
					if _, err := io.WriteString(w, p.head); err != nil {
						end()
						return err
					}
				}
			}
			if !p.empty {
				res := results[k]
				errs = append(errs, rw.record(res)...)
				if len(errs) == 0 && w != nil {
					out := res.out
					if out == nil {
						out = p.doc.data
					}
					if _, err := w.Write(out); err != nil {
						errs = append(errs, writeError{fmt.Errorf("%s: writing the output: %w", name, err)})
					}
				}
			}
			if p.last && (len(errs) >= maxErrors || (len(errs) > 0 && w != nil && isWriteErr(errs[len(errs)-1]))) {
				end()
				break run
			}
		}
	}
	if len(errs) > maxErrors {
		errs = append(errs[:maxErrors], fmt.Errorf("%s: stopped after the first %d errors", name, maxErrors))
	}
	if !stopped && readErr != nil { // written before the queue closed
		errs = append(errs, readErr)
	}
	return errors.Join(errs...)
}

// batchBytes and batchDocs bound a batch of documents.
const (
	batchBytes = 64 << 10
	batchDocs  = 64
)

// nextBatch reads documents until the batch is full or the stream ends; it
// returns the documents read and the error that ended the stream, if any.
func nextBatch(sp *splitter) ([]document, error) {
	var docs []document
	size := 0
	for size < batchBytes && len(docs) < batchDocs {
		d, err := sp.next()
		if err != nil {
			return docs, err
		}
		docs = append(docs, d)
		size += len(d.data)
	}
	return docs, nil
}

// writeError marks an error of the output writer.
type writeError struct{ error }

func (e writeError) Unwrap() error { return e.error }

func isWriteErr(err error) bool {
	var we writeError
	return errors.As(err, &we)
}

// processAhead is process, or the result Prepare found for the same
// document.
func (rw *Rewriter) processAhead(d document, name string, write bool) result {
	refs := rw.envRefs.load()
	if res, ok := rw.takeAhead(d, name, write, refs); ok {
		return res
	}
	return rw.processWith(d, name, write, refs, rw.prover())
}

// processWith finds, maps and (when write is set) rewrites one document,
// with refs, the ConfigMap keys passed as images known so far in the run,
// and proves it with p (nil: not).
func (rw *Rewriter) processWith(d document, name string, write bool, refs *envRefSet, p tokenProver) result {
	if !utf8.Valid(d.data) {
		return result{errs: []error{&Error{Location: rewrite.Location{File: name, Line: d.line + invalidUTF8Line(d.data)}, Err: errors.New("invalid UTF-8: manifests must be UTF-8 encoded")}}}
	}
	if !rw.fullParse && !rw.mayHoldImages(d.data) && !refs.mayHold(d.data) {
		return result{}
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(yaml11(d.data)))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return result{}
		}
		return result{errs: []error{parseError(err, name, d.line)}}
	}
	// The splitter cuts on "\n" line ends; a stream whose lines end in a
	// lone "\r" holds its documents in one piece. Never drop them silently.
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return result{errs: []error{&Error{Location: rewrite.Location{File: name, Line: d.line}, Err: errors.New("several YAML documents without a \"---\" line ending in \\n (lines end in a lone carriage return?): convert the line ends to \\n or \\r\\n")}}}
	}
	fd := rw.finder.findAll(&root, true, !rw.noGuess, refs)
	fields, emb := fd.fields, fd.emb
	where := func(f Field) rewrite.Location {
		p := f.place()
		return rewrite.Location{File: name, Line: d.line + p.Line - 1, Column: p.Column, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Field: f.Path}
	}
	notes := rw.notes(fd.notes, where)
	skipped := skipWarnings(fd.skipped, where)
	if len(fields) == 0 && len(emb) == 0 && len(fd.charts) == 0 && len(fd.chartSkips) == 0 {
		return result{notes: notes, warns: skipped}
	}
	ms, res := rw.mapAll(fields, emb, where)
	rw.mapCharts(fd.charts, fd.chartSkips, where, &ms, &res)
	res.notes = notes
	res.warns = append(res.warns, skipped...)
	res.warns = append(res.warns, duplicateWarnings(&root, fields, emb, fd.charts, name, func(n *yaml.Node) int { return d.line + n.Line - 1 })...)
	if len(res.errs) > 0 {
		return res
	}
	locateAll(d, ms, &res)
	if len(res.errs) > 0 {
		return res
	}
	var edits []edit
	if write { // only listing images: nothing to plan
		var warns, errs []error
		edits, warns, errs = planEdits(&root, ms)
		res.warns, res.errs = append(res.warns, warns...), append(res.errs, errs...)
		if len(res.errs) > 0 {
			return res
		}
	}
	if len(edits) > 0 && write {
		out, err := spliceVerified(d.data, &root, edits, p)
		if err != nil && hasEmbedded(edits) {
			// Never corrupt: leave the embedded references as written.
			for i := range ms {
				if ms[i].field.Type == TypeEmbedded && ms[i].edit != nil && ms[i].edit.value != "" {
					res.warns = append(res.warns, &Error{Location: ms[i].occ.Location, Err: fmt.Errorf("embedded image reference %s left as written: %w", bounded.Word(ms[i].field.Value), err)})
					ms[i].edit = nil
				}
			}
			edits = withoutEmbedded(edits)
			out, err = nil, nil
			if len(edits) > 0 {
				out, err = spliceVerified(d.data, &root, edits, p)
			}
		}
		if err != nil {
			line := d.line
			var ue *unsafeEditError
			if errors.As(err, &ue) && ue.Line > 0 {
				line += ue.Line - 1
			}
			res.errs = append(res.errs, &Error{Location: rewrite.Location{File: name, Line: line}, Err: err})
		}
		res.out = out
	}
	rw.finish(ms, &res)
	return res
}

// prover is the Rewriter's prover, nil when the proof is off.
func (rw *Rewriter) prover() tokenProver {
	if rw.unverified {
		return nil // an interface holding a nil *prover would prove
	}
	return &rw.proof
}
