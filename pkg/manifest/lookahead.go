package manifest

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
)

// Prepare processes the documents of parts in the background, as a later
// RewriteParts of them would (with a writer when write is set; without,
// only collecting the images), so that the rewrite finds them done. It
// returns at once. A caller that expects those documents before it has
// them all, in their final order, calls it with what it has: rehost
// prepares the documents of a chart's templates while Helm still sorts
// them, on the processor Helm leaves idle.
//
// It changes nothing a rewrite writes or returns: a prepared document is
// used only by a rewrite of a document of the same name, line and bytes,
// with write the same, while the run's ConfigMap keys passed as images
// (envimages.go) are those it was prepared with (the run's and those of
// parts, as the rewrite of parts scans them first); any other is processed
// as if Prepare had not been called. Only what the rewrite records is
// kept (not the parsed document), for at most maxAheadBytes of
// documents; preparing stops when a rewrite of the Rewriter starts (the
// rewrite processes the rest on all its workers) or when Prepare is
// called again (keeping what was done); otherwise it runs to the end of
// parts in the background, even if the Rewriter is not used again.
func (rw *Rewriter) Prepare(parts []Part, write bool) {
	if len(parts) == 0 || (write && rw.listOnly) {
		return
	}
	la := rw.lookahead()
	// One job at a time: jobMu keeps a concurrent Prepare from starting
	// one between the end of the last and the start of this.
	la.jobMu.Lock()
	defer la.jobMu.Unlock()
	la.stopJob()
	la.mu.Lock()
	stop, ended := make(chan struct{}), make(chan struct{})
	la.stop, la.ended = stop, ended
	la.mu.Unlock()
	la.running.Add(1)
	go func() {
		defer close(ended) // last: the job has ended for whoever waits
		defer la.running.Add(-1)
		// The ConfigMap keys the parts pass as images, which the rewrite
		// of them will scan for first (RewriteParts): prepared with them,
		// the ConfigMaps are what the rewrite would make of them.
		var found []envRef
		for _, p := range parts {
			if strings.Contains(p.Text, "$(") {
				found = append(found, prescanEnvRefs([]byte(p.Text))...)
			}
		}
		refs := rw.envRefs.load().with(found)
		// The documents processed, kept once their tokens are proved:
		// by the run's prover, or in batches of aheadBatch (proofBatch).
		prove := rw.prover()
		var batch *proofBatch
		if run, ok := prove.(*prover); ok && write {
			batch = &proofBatch{run: run}
			prove = batch
		}
		var pending []aheadPending
		keep := func() {
			var proved []bool
			if batch != nil {
				proved = batch.prove()
			}
			la.keep(pending, proved)
			pending = pending[:0]
		}
		defer keep()
		for _, p := range parts {
			sp := splitterOf([]byte(p.Text), p.Line)
			for {
				d, err := sp.next()
				if err != nil {
					break
				}
				select {
				case <-stop:
					return
				default:
				}
				if !la.reserve(len(d.data)) {
					return
				}
				if batch != nil {
					batch.next()
				}
				res := rw.processWith(d, p.Name, write, refs, prove)
				// What record reads, without the parsed document.
				for i := range res.ms {
					res.ms[i].field, res.ms[i].edit = nil, nil
				}
				pending = append(pending, aheadPending{aheadKey{name: p.Name, line: d.line, write: write}, aheadEntry{data: d.data, refs: refs, res: res}})
				if len(pending) == aheadBatch {
					keep()
				}
			}
		}
	}()
}

// aheadBatch is how many documents Prepare proves at once: enough that a
// probe's cost to start is a small part of it, few enough that a rewrite
// that stops it finds most of what it processed.
const aheadBatch = 64

// aheadPending is a document Prepare processed, until its tokens are
// proved.
type aheadPending struct {
	key   aheadKey
	entry aheadEntry
}

// maxAheadBytes bounds the documents Prepare holds processed, in all: a
// chart of 20,000 Pods is 4 MB of documents.
const maxAheadBytes = 16 << 20

// lookahead holds the documents Prepare processed, until a rewrite takes
// them.
type lookahead struct {
	// jobMu is held while a Prepare ends the running job and starts its
	// own.
	jobMu sync.Mutex
	mu    sync.Mutex
	done  map[aheadKey]aheadEntry
	bytes int
	// running counts the jobs whose goroutine has not ended (at most
	// one, once a Prepare returns).
	running atomic.Int32
	// stop ends the running job, whose goroutine closes ended; nil
	// when none runs.
	stop, ended chan struct{}
}

type aheadKey struct {
	name  string
	line  int
	write bool
}

// aheadEntry is a prepared document: its bytes, the ConfigMap keys
// passed as images it was processed with, and its result.
type aheadEntry struct {
	data []byte
	refs *envRefSet
	res  result
}

// lookahead returns the Rewriter's lookahead, made on first use.
func (rw *Rewriter) lookahead() *lookahead {
	if la := rw.ahead.Load(); la != nil {
		return la
	}
	rw.ahead.CompareAndSwap(nil, &lookahead{done: map[aheadKey]aheadEntry{}})
	return rw.ahead.Load()
}

// stopAhead ends the running Prepare job, if any, and waits for it; what
// it processed is kept.
func (rw *Rewriter) stopAhead() {
	if la := rw.ahead.Load(); la != nil {
		la.jobMu.Lock()
		defer la.jobMu.Unlock()
		la.stopJob()
	}
}

// stopJob ends the running job and waits for its goroutine.
func (la *lookahead) stopJob() {
	la.mu.Lock()
	stop, ended := la.stop, la.ended
	la.stop, la.ended = nil, nil
	la.mu.Unlock()
	if stop != nil {
		close(stop)
		<-ended
	}
}

// reserve counts n more bytes of documents, false past maxAheadBytes.
func (la *lookahead) reserve(n int) bool {
	la.mu.Lock()
	defer la.mu.Unlock()
	if la.bytes+n > maxAheadBytes {
		return false
	}
	la.bytes += n
	return true
}

// keep keeps the documents processed whose tokens were proved (proved
// nil: all of them), each in place of what was prepared under its key
// before, if anything (two parts of the same name and line), and
// uncounts the bytes of the others, which the rewrite processes again.
func (la *lookahead) keep(pending []aheadPending, proved []bool) {
	la.mu.Lock()
	defer la.mu.Unlock()
	for i, p := range pending {
		if proved != nil && !proved[i] {
			la.bytes -= len(p.entry.data)
			continue
		}
		if old, ok := la.done[p.key]; ok {
			la.bytes -= len(old.data)
		}
		la.done[p.key] = p.entry
	}
}

// takeAhead returns the prepared result of document d of name, if it was
// prepared with the same bytes, write and ConfigMap keys, and forgets it.
func (rw *Rewriter) takeAhead(d document, name string, write bool, refs *envRefSet) (result, bool) {
	la := rw.ahead.Load()
	if la == nil {
		return result{}, false
	}
	k := aheadKey{name: name, line: d.line, write: write}
	la.mu.Lock()
	defer la.mu.Unlock()
	e, ok := la.done[k]
	if !ok {
		return result{}, false
	}
	delete(la.done, k)
	la.bytes -= len(e.data)
	if !e.refs.same(refs) || !bytes.Equal(e.data, d.data) {
		return result{}, false
	}
	return e.res, true
}
