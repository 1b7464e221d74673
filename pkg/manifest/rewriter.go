package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// maxErrors is how many input errors a run collects before it stops.
const maxErrors = 20

// Option configures a Rewriter.
type Option func(*Rewriter)

// WithWarnings sets the function that receives warnings, such as invalid
// image references skipped because of Config.SkipInvalid. By default
// warnings are discarded.
func WithWarnings(fn func(error)) Option { return func(r *Rewriter) { r.warn = fn } }

// WithFirstOccurrences keeps only the first occurrence of each image in the
// reports (Images, Embedded, EmbeddedLeftOut), with the count of all of
// them, so that memory stays flat however large the input. By default every
// occurrence is kept.
func WithFirstOccurrences() Option {
	return func(r *Rewriter) {
		r.set.FirstOnly, r.emb.FirstOnly, r.left.FirstOnly, r.unlisted.FirstOnly = true, true, true, true
		r.charts.firstOnly = true
	}
}

// WithPins pins rewritten images to digests: an image whose source has a
// pin is rewritten to the pinned target (see rewrite.ParsePins).
func WithPins(p rewrite.Pins) Option {
	return func(r *Rewriter) { r.mapper = r.mapper.WithPins(p) }
}

// WithWorkers sets how many documents are processed at once. The default is
// GOMAXPROCS.
func WithWorkers(n int) Option { return func(r *Rewriter) { r.workers = n } }

// ListEmbedded makes Images and Sources include the image references
// embedded in string values (see FindEmbedded) without rewriting them, as
// "rehost images --embedded" lists them.
func ListEmbedded() Option { return func(r *Rewriter) { r.listEmbedded = true } }

// ListOnly makes a Rewriter that lists images and writes nothing, so that
// it needs no decision about the target registry: two sources that would
// meet in one target repository (a *rewrite.CollisionError) are both
// listed, each collision passed to the warning function as an *Error;
// images already in the target registry are listed with Action InTarget,
// as always (Images, Sources). Rewrite and RewriteAt with a writer, and
// RewriteNode, return ErrListOnly.
func ListOnly() Option { return func(r *Rewriter) { r.listOnly = true } }

// ErrListOnly is returned by the calls that write when the Rewriter was
// made with ListOnly.
var ErrListOnly = errors.New("this Rewriter only lists images (manifest.ListOnly): it writes nothing")

// Rewriter rewrites the images of manifest streams and collects every image
// it meets. Each call adds to the same image set, so collisions are found
// across all the inputs of a run. A Rewriter is safe for concurrent use:
// calls from several goroutines add to its one image set (which of two
// colliding images counts as the first then depends on timing), and its
// warning function is called by one goroutine at a time. Use one Rewriter
// per independent run.
type Rewriter struct {
	// mu guards the image sets and the warning function.
	mu          sync.Mutex
	mapper      *rewrite.Mapper
	finder      *Finder
	skipInvalid bool
	warn        func(error)
	workers     int
	set         rewrite.ImageSet
	// rewriteEmbedded and listEmbedded say what happens to embedded
	// references besides being collected in emb: rewritten, or listed.
	rewriteEmbedded, listEmbedded bool
	emb, left                     rewrite.ImageSet
	// unlisted are the split references whose tag the operator picks
	// (rewritten, reported in warnings, not listed), for the tests' oracle;
	// their sources end in ":latest" for want of a tag.
	unlisted rewrite.ImageSet
	// namedEmbedded: named embedded references are listed and rewritten.
	namedEmbedded bool
	// noAddRegistry: absent registry settings are reported, not added.
	noAddRegistry bool
	// noGuess: images are not guessed by key name (NoGuessImages).
	noGuess bool
	// guessed tallies the guessed references since the last WarnGuessed.
	guessed   guessTally
	settings  []Setting
	operators map[string]*OperatorNote
	// charts are the GitOps chart sources met (gitops.go).
	charts chartSet
	// lists counts the image lists read.
	lists int
	// fullParse turns the fast path off: every document is parsed.
	fullParse bool
	// proof proves each rewritten document (spliceVerified); unverified
	// turns it off, only for the benchmark that measures what it costs.
	proof      prover
	unverified bool
	// listOnly: nothing is written, collisions are warnings (ListOnly).
	listOnly bool
}

// Setting is a registry setting of an operator's kind met in a manifest
// (tigera's Installation.spec.registry, Istio's hub): where it is, its
// value as written ("" when absent) and the value rehost writes.
type Setting struct {
	Location rewrite.Location `json:"location"`
	Source   string           `json:"source"`
	// Target is the value that makes the operator pull from the target
	// registry; "" when the setting is absent and not added.
	Target string         `json:"target,omitempty"`
	Action rewrite.Action `json:"action,omitempty"`
	// Added says the setting was absent, empty or named the operator's
	// default registries, and Target was written in its place.
	Added bool `json:"added,omitempty"`
}

// OperatorNote is an operator that starts images no manifest names: the
// first object met that makes it start them, and how many there were.
type OperatorNote struct {
	Operator string `json:"operator"`
	// Starts says which images it starts.
	Starts   string           `json:"starts"`
	Location rewrite.Location `json:"location"`
	Count    int              `json:"count"`
}

// Message is the one-line warning for the note, as the CLI, the KRM
// function and rehost mirror print it.
func (n OperatorNote) Message() string {
	return fmt.Sprintf("%s: %s starts images no manifest names (%s): list them in an imageList file beside the manifests (or pass one with --images-from) so that they are mirrored", n.Location, n.Operator, n.Starts)
}

// New returns a Rewriter for the config.
func New(c rewrite.Config, opts ...Option) (*Rewriter, error) {
	m, err := rewrite.NewMapper(c)
	if err != nil {
		return nil, err
	}
	f, err := NewFinder(c.ImageFields)
	if err != nil {
		return nil, err
	}
	f.noCharts = c.NoChartSources
	rw := &Rewriter{mapper: m, finder: f, skipInvalid: c.SkipInvalid, rewriteEmbedded: c.RewriteEmbedded, noAddRegistry: c.NoAddRegistry, noGuess: c.NoGuessImages, namedEmbedded: !c.NoNamedEmbedded, warn: func(error) {}, workers: runtime.GOMAXPROCS(0)}
	rw.emb.NoCollisions, rw.left.NoCollisions, rw.unlisted.NoCollisions = true, true, true
	for _, o := range opts {
		o(rw)
	}
	if rw.workers < 1 {
		rw.workers = 1
	}
	return rw, nil
}

// Images returns every image met so far, sorted by source: the images of
// image fields, and the embedded references when they are rewritten
// (Config.RewriteEmbedded) or listed (ListEmbedded).
func (rw *Rewriter) Images() []rewrite.Image {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.set.Images()
}

// Embedded returns every image reference embedded in a string value met so
// far, whether listed, rewritten or not, sorted by source; each occurrence
// has Location.Embedded set.
func (rw *Rewriter) Embedded() []rewrite.Image {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.emb.Images()
}

// EmbeddedLeftOut returns the embedded references met so far that are
// neither in Images nor rewritten: all of them by default; with
// Config.RewriteEmbedded those that could not be rewritten in place.
func (rw *Rewriter) EmbeddedLeftOut() []rewrite.Image {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.left.Images()
}

// Sources returns every source image met so far (see Images), fully
// qualified, sorted and unique, whatever the mapping did to it.
func (rw *Rewriter) Sources() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.set.Sources()
}

// ToCache returns the images met so far that move to the target registry,
// fully qualified, sorted and unique: what to cache there before the
// cluster pulls them, a sealer imageList. Excluded images and images
// already in the target registry are not in it.
func (rw *Rewriter) ToCache() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.set.ToCache()
}

// Settings returns the registry settings of operators met so far, in
// input order: rewritten, added, or left as they are.
func (rw *Rewriter) Settings() []Setting { return rw.settings }

// Operators returns, sorted by operator, the operators met so far that
// start images no manifest names (tigera, Istio, Kiali, the Prometheus
// operator's default images, ...). Those images are in no report: a user
// lists them in an image list.
func (rw *Rewriter) Operators() []OperatorNote {
	out := make([]OperatorNote, 0, len(rw.operators))
	for _, n := range rw.operators {
		out = append(out, *n)
	}
	out = resolvePlaceholders(out)
	sort.Slice(out, func(i, j int) bool { return out[i].Operator < out[j].Operator })
	return out
}

// ImageLists is how many image lists were read (ReadImageList).
func (rw *Rewriter) ImageLists() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.lists
}

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
	sp := newSplitter(r)
	sp.line = line
	return rw.pipeline(w, func() ([]piece, error) {
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
	})
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
						out[k] = rw.process(p.doc, p.name, w != nil)
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

// result is what processing one document gives.
type result struct {
	out []byte // the rewritten document, nil when unchanged
	// ms are the document's references in order; record adds each
	// occurrence where its to bits say (see finish). They are not copied
	// out: a document of many references costs each one once.
	ms       []mapped
	settings []Setting
	notes    []OperatorNote
	charts   []chartOcc
	// guessed are the guessed references listed or rewritten.
	guessed []rewrite.Location
	warns   []error
	errs    []error
}

// record adds one document's result to the run, in input order: its images
// to the image set (a collision becomes an error), its embedded references
// to their reports, its warnings to the warning function. It returns the
// document's errors. The stream pipeline and the kio filter share it.
func (rw *Rewriter) record(res result) []error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	errs := res.errs
	for i := range res.ms {
		m := &res.ms[i]
		if m.to&toSet != 0 {
			if err := rw.addLocked(m.occ); err != nil {
				errs = append(errs, err)
			}
		}
		if m.to&toEmb != 0 {
			_ = rw.emb.Add(m.occ) // NoCollisions: never fails
		}
		if m.to&toLeft != 0 {
			_ = rw.left.Add(m.occ) // NoCollisions: never fails
		}
		if m.to&toUnlisted != 0 {
			_ = rw.unlisted.Add(m.occ) // NoCollisions: never fails
		}
	}
	rw.settings = append(rw.settings, res.settings...)
	for _, c := range res.charts {
		rw.charts.add(c)
	}
	for _, n := range res.notes {
		if rw.operators == nil {
			rw.operators = map[string]*OperatorNote{}
		}
		if have := rw.operators[n.Operator]; have != nil {
			have.Count++
		} else {
			n.Count = 1
			rw.operators[n.Operator] = &n
		}
	}
	for _, l := range res.guessed {
		rw.guessed.add(l)
	}
	for _, w := range res.warns {
		rw.warn(w)
	}
	return errs
}

// WarnGuessed passes to the warning function one *GuessedImages warning
// that sums up the images found by key name in custom resources (see
// Field.Guessed) since the last call, if there were any. Call it once at
// the end of a run, after the images of every input were found; the CLI
// and the KRM function do.
func (rw *Rewriter) WarnGuessed() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if g := rw.guessed.warning(); g != nil {
		rw.guessed = guessTally{}
		rw.warn(g)
	}
}

// process finds, maps and (when write is set) rewrites one document.
func (rw *Rewriter) process(d document, name string, write bool) result {
	if !utf8.Valid(d.data) {
		return result{errs: []error{&Error{Location: rewrite.Location{File: name, Line: d.line + invalidUTF8Line(d.data)}, Err: errors.New("invalid UTF-8: manifests must be UTF-8 encoded")}}}
	}
	if !rw.fullParse && !rw.mayHoldImages(d.data) {
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
	fd := rw.finder.findAll(&root, true, !rw.noGuess)
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
		out, err := spliceVerified(d.data, &root, edits, rw.prover())
		if err != nil && hasEmbedded(edits) {
			// Never corrupt: leave the embedded references as written.
			for i := range ms {
				if ms[i].field.Embedded && ms[i].edit != nil && ms[i].edit.value != "" {
					res.warns = append(res.warns, &Error{Location: ms[i].occ.Location, Err: fmt.Errorf("embedded image reference %s left as written: %w", bounded.Word(ms[i].field.Value), err)})
					ms[i].edit = nil
				}
			}
			edits = withoutEmbedded(edits)
			out, err = nil, nil
			if len(edits) > 0 {
				out, err = spliceVerified(d.data, &root, edits, rw.prover())
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
func (rw *Rewriter) prover() *prover {
	if rw.unverified {
		return nil
	}
	return &rw.proof
}

// skipWarnings are the warnings about values under keys that name an
// image, not taken for images.
func skipWarnings(ss []guessSkip, where func(Field) rewrite.Location) []error {
	var out []error
	for _, s := range ss {
		loc := where(s.Field)
		loc.Value = s.Value
		out = append(out, &Error{Location: loc, Err: fmt.Errorf("%s left as written: %s; its key names an image, but it is not taken for one (write the reference in full, or list the field in imageFields)", bounded.Quote(s.Value), s.why)})
	}
	return out
}

// notes turns the finder's notes into OperatorNotes.
func (rw *Rewriter) notes(ns []note, where func(Field) rewrite.Location) []OperatorNote {
	var out []OperatorNote
	for _, n := range ns {
		loc := where(n.Field)
		loc.Column, loc.Field = 0, ""
		out = append(out, OperatorNote{Operator: n.op.Operator, Starts: n.op.Starts, Location: loc})
	}
	return out
}

// locateAll finds the bytes of the references that are part of a string
// (embedded, composed): for their exact line and column, and to rewrite
// them in place. Each string is read once; positions are counted in byte
// order, so long lines cost one pass. A reference to rewrite that is not
// written verbatim is left as written with a warning (embedded, guessed)
// or is an error (a composed reference: an image field).
func locateAll(d document, ms []mapped, res *result) {
	// The parts by node (in the order of their first part) and offset:
	// one slice for all, nothing allocated per node.
	n := 0
	for i := range ms {
		if f := ms[i].field; !f.whole() && f.Add == nil {
			n++
		}
	}
	if n == 0 {
		return
	}
	type key struct{ group, at, i int } // i indexes ms
	group := make(map[*yaml.Node]int, n)
	keys := make([]key, 0, n)
	for i := range ms {
		if f := ms[i].field; !f.whole() && f.Add == nil {
			g, ok := group[f.Node]
			if !ok {
				g = len(group)
				group[f.Node] = g
			}
			keys = append(keys, key{g, f.At, i})
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if ka.group != kb.group {
			return ka.group < kb.group
		}
		if ka.at != kb.at {
			return ka.at < kb.at
		}
		return ka.i < kb.i
	})
	lines := lineStarts(d.data)
	parts := make([]part, len(keys))
	for k, kk := range keys {
		parts[k] = part{at: kk.at, text: ms[kk.i].field.Value}
	}
	offs := make([]int, len(keys))
	type found struct{ i, off int }
	located := make([]found, 0, len(keys))
	for g := 0; g < len(keys); {
		h := g + 1
		for h < len(keys) && keys[h].group == keys[g].group {
			h++
		}
		err := locateParts(d.data, lines, ms[keys[g].i].field.Node, parts[g:h], offs[g:h])
		for k := g; k < h; k++ {
			m := &ms[keys[k].i]
			if offs[k] >= 0 {
				if m.edit != nil {
					m.edit.start = offs[k]
				}
				located = append(located, found{keys[k].i, offs[k]})
				continue
			}
			if m.edit == nil || m.edit.value == "" {
				continue // left as written anyway; reported at the string's line
			}
			why := err
			if why == nil {
				why = errors.New("not written verbatim in the file (escape sequences)")
			}
			why = fmt.Errorf("cannot rewrite %s in place: %w", bounded.Word(m.field.Value), why)
			switch {
			case m.field.Embedded:
				res.warns = append(res.warns, &Error{Location: m.occ.Location, Err: fmt.Errorf("embedded image reference left as written: %w", why)})
			case m.field.Guessed:
				res.warns = append(res.warns, &Error{Location: m.occ.Location, Err: fmt.Errorf("guessed image left as written: %w", why)})
				m.left = true
			default:
				res.errs = append(res.errs, &Error{Location: m.occ.Location, Err: why})
			}
			m.edit = nil
		}
		g = h
	}
	sort.Slice(located, func(a, b int) bool { return located[a].off < located[b].off })
	pos := positioner{data: d.data, lines: lines}
	for _, l := range located {
		loc := &ms[l.i].occ.Location
		loc.Line, loc.Column = pos.position(l.off)
		loc.Line += d.line - 1
	}
}

// mapped is a reference found in a document with its mapping and, when it
// is to be rewritten, its edit.
type mapped struct {
	field *Field // in the finder's slices, which outlive ms
	occ   rewrite.Occurrence
	// edit is nil when the reference is left as it is; its value is ""
	// when the mapping leaves it as written (excluded, in the target).
	edit *edit
	// unlisted: no image to list (a registry setting, or a split
	// reference that cannot be composed).
	unlisted bool
	// left: a guessed reference left as written, with a warning, because
	// it cannot be rewritten safely; it is neither listed nor rewritten.
	left bool
	// to says where record adds the occurrence (set by finish).
	to recordTo
}

// mapAll validates and maps the references found in a document. It is
// shared by the stream rewriter and the kio filter. Embedded references
// are candidates the finder parsed already; one whose target is invalid is
// dropped with a warning.
func (rw *Rewriter) mapAll(fields, emb []Field, where func(Field) rewrite.Location) ([]mapped, result) {
	var res result
	ms := make([]mapped, 0, len(fields)+len(emb))
	// The edits live in one slab, allocated once: ms points into it.
	slab := make([]edit, 0, len(fields)+len(emb))
	for k := 0; k < len(fields)+len(emb); k++ {
		var f *Field
		if k < len(fields) {
			f = &fields[k]
		} else {
			f = &emb[k-len(fields)]
		}
		loc := where(*f)
		loc.Embedded, loc.Named, loc.Guessed = f.Embedded, f.Embedded && f.Named, f.Guessed
		if f.Registry {
			rw.mapSetting(f, loc, &ms, &res)
			continue
		}
		var m rewrite.Mapping
		var err error
		if isString(f.Node) {
			m, err = rw.mapper.Map(f.ref())
		} else {
			err = fmt.Errorf("%w: %s", ErrNotString, describe(f.Node))
		}
		if err != nil {
			err = &Error{Location: loc, Err: err}
			if rw.skipInvalid || f.Embedded || f.Guessed {
				res.warns = append(res.warns, err)
			} else {
				res.errs = append(res.errs, err)
			}
			continue
		}
		loc.Value = f.Value
		mp := mapped{field: f, occ: rewrite.Occurrence{Mapping: m, Location: loc}}
		named := f.Embedded && f.Named && rw.namedEmbedded
		if !f.Embedded || rw.rewriteEmbedded || named {
			e := edit{node: f.Node, sub: !f.whole(), at: f.At, old: f.Value, embedded: f.Embedded}
			switch {
			case m.Action != rewrite.Rewritten:
			case f.Rest != "":
				// The registry part of registry/repository.
				name := m.Target.RepositoryName()
				if !strings.HasSuffix(name, f.Rest) {
					res.errs = append(res.errs, &Error{Location: loc, Err: fmt.Errorf("cannot rewrite %s: its target %s does not end in its repository part %s", bounded.Word(f.Ref), bounded.Word(name), bounded.Word(strings.TrimPrefix(f.Rest, "/")))})
					continue
				}
				e.value = strings.TrimSuffix(name, f.Rest)
				if m.Target.Digest != m.Source.Digest {
					res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("pin of %s not written: its repository, tag and digest are separate fields here; set the digest in the resource", bounded.Word(m.Source.String()))})
				}
			case f.Ref != "":
				e.value = m.Target.RepositoryName()
				if m.Target.Digest != m.Source.Digest {
					res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("pin of %s not written: its repository, tag and digest are separate fields here; set the digest in the resource", bounded.Word(m.Source.String()))})
				}
			default:
				e.value = m.Target.String()
			}
			slab = append(slab, e)
			mp.edit = &slab[len(slab)-1]
		}
		if named && !rw.rewriteEmbedded && !rw.listEmbedded && m.Source.Tag == "" && m.Source.Digest == "" {
			// "--prometheus-default-base-image=quay.io/prometheus/prometheus":
			// a repository its program adds the tag to.
			mp.unlisted = true
			res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("embedded image reference %s has no tag or digest: rewritten, not listed (its program picks the tag); list the image in an imageList file so that it is mirrored", bounded.Word(f.Value))})
		}
		if f.Incomplete != "" {
			mp.unlisted = true
			res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("image %s not listed: %s; list the image in an imageList file so that it is mirrored", bounded.Word(m.Source.String()), f.Incomplete)})
		}
		ms = append(ms, mp)
	}
	return ms, res
}

// mapSetting maps a registry setting and records it in res; a setting to
// rewrite or add becomes an edit in ms.
func (rw *Rewriter) mapSetting(f *Field, loc rewrite.Location, ms *[]mapped, res *result) {
	s := Setting{Location: loc, Source: f.Value}
	if f.Add != nil {
		s.Source = ""
	}
	s.Location.Value = s.Source
	if f.Default && f.Add == nil && !isString(f.Node) {
		res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("registry setting not set: %s where a value or a map was expected; write the value, or remove the key and rehost adds it", describe(f.Node))})
		return
	}
	if f.Default {
		what := "absent"
		if f.Add == nil {
			what = fmt.Sprintf("%s (the operator's default registries)", bounded.Quote(f.Value))
		}
		switch {
		case rw.noAddRegistry:
			res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("registry setting %s, not set (noAddRegistry): the operator pulls its images from its public default registries", what)})
		case rw.mapper.Style() == rewrite.PathStyleNest:
			res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("registry setting %s, not set: with path style nest its value depends on the public registry the operator's version defaults to; write that registry (\"quay.io/\" or \"docker.io/\") in the field and rehost rewrites it", what)})
		default:
			s.Target, s.Action, s.Added = rw.mapper.Root(), rewrite.Rewritten, true
			if f.Slash {
				s.Target += "/"
			}
			e := &edit{node: f.Node, value: s.Target, insert: f.Add}
			*ms = append(*ms, mapped{field: f, edit: e, unlisted: true})
		}
		res.settings = append(res.settings, s)
		return
	}
	fail := func(err error) {
		err = &Error{Location: loc, Err: err}
		if rw.skipInvalid {
			res.warns = append(res.warns, err)
		} else {
			res.errs = append(res.errs, err)
		}
	}
	if !isString(f.Node) {
		fail(fmt.Errorf("registry setting is not a string: %s", describe(f.Node)))
		return
	}
	rm, err := rw.mapper.MapRegistry(f.Value)
	if err != nil {
		fail(fmt.Errorf("registry setting: %w", err))
		return
	}
	s.Target, s.Action = rm.Target, rm.Action
	for _, n := range rm.Narrower {
		res.warns = append(res.warns, &Error{Location: loc, Err: fmt.Errorf("exclusion %s is narrower than the registry setting %s: the operator pulls every image below it from %s all the same", n, bounded.Word(f.Value), bounded.Word(rm.Target))})
	}
	mp := mapped{field: f, unlisted: true}
	if rm.Action == rewrite.Rewritten {
		mp.edit = &edit{node: f.Node, value: rm.Target}
	}
	*ms = append(*ms, mp)
	res.settings = append(res.settings, s)
}

// recordTo says where record puts an occurrence: the image set, the
// embedded references, the embedded references left out.
type recordTo uint8

const (
	toSet recordTo = 1 << iota
	toEmb
	toLeft
	toUnlisted
)

// finish sorts the occurrences of a document into the result: image fields
// into the image set, split references whose tag the operator picks into
// the unlisted ones; embedded references into the embedded ones, and into
// the image set when listed or rewritten, left out otherwise. Guessed
// references left as written go nowhere.
func (rw *Rewriter) finish(ms []mapped, res *result) {
	for i := range ms {
		m := &ms[i]
		if m.left {
			continue
		}
		if m.field.Guessed {
			res.guessed = append(res.guessed, m.occ.Location)
		}
		switch {
		case m.unlisted && m.field.Embedded:
			m.to = toEmb
		case m.unlisted && m.field.Incomplete != "":
			m.to = toUnlisted
		case m.unlisted:
		case !m.field.Embedded:
			m.to = toSet
		case rw.listEmbedded || m.edit != nil:
			m.to = toEmb | toSet
		default:
			m.to = toEmb | toLeft
		}
	}
	res.ms = ms
}

// mayHoldImages is the fast path: it reports false, without parsing, for
// documents that hold no image reference:
//   - CustomResourceDefinitions (never searched);
//   - documents without a backslash escape that stands for other characters
//     (hasEscape: "\x", "\u", "\U", "\/", an escaped line break), without any image word ("image", "Image", "IMAGE": image
//     fields, the context of bare embedded references), configured leaf
//     key (registry settings: as a map key, "hub:"), composite URL scheme
//     ("oci://") or kind whose absent fields matter (an Installation whose
//     registry rehost adds, an operator's kind it warns about), and without a run of
//     reference bytes that holds a registry host, a "/" and a tag or digest
//     (an embedded reference that needs no context).
//
// Every reference the finder reports lies verbatim in the document's bytes
// when the document has no such escape (the other escapes stand for white
// space, quotes, backslashes or control characters, none of which can be
// part of an image word or a reference), so this never skips one.
func (rw *Rewriter) mayHoldImages(data []byte) bool {
	kind := topLevelKind(data)
	if kind == crdKind {
		return false
	}
	if hasEscape(data) || hasImageWordBytes(data) {
		return true
	}
	for _, k := range rw.finder.keys {
		if bytes.Contains(data, []byte(k)) {
			return true
		}
	}
	for _, sc := range rw.finder.schemes {
		if bytes.Contains(data, []byte(sc)) {
			return true
		}
	}
	// A kind whose absent fields matter: by its kind line when there is
	// one (a ConfigMap of Prometheus rules is not a Prometheus), else
	// (JSON, a List) by its name anywhere.
	for _, k := range rw.finder.kindWords {
		if kind != "" && !strings.HasSuffix(kind, "List") {
			if kind == k {
				return true
			}
		} else if bytes.Contains(data, []byte(k)) {
			return true
		}
	}
	return hasRegistryToken(data)
}

// yaml11 returns data with a "%YAML 1.2" directive read as 1.1, the version
// yaml.v3 accepts (the directive changes nothing rehost looks at); the bytes
// keep their length, so positions stay.
func yaml11(data []byte) []byte {
	const v12 = "%YAML 1.2"
	i := bytes.Index(data, []byte(v12))
	if i < 0 || (i > 0 && data[i-1] != '\n') {
		return data
	}
	c := bytes.Clone(data)
	c[i+len(v12)-1] = '1'
	return c
}

// hasEscape reports whether data holds a backslash escape that can stand
// for other characters in a double-quoted scalar: "\x", "\u", "\U", "\/"
// (JSON) or an escaped line break. Other escapes ("\d", "\." in the regular
// expressions of ConfigMaps and CRDs) cannot spell an image word or a
// reference byte.
func hasEscape(data []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 || i+j+1 >= len(data) {
			return false
		}
		switch data[i+j+1] {
		case 'x', 'u', 'U', '/', '\n', '\r':
			return true
		}
		i += j + 2
	}
}

var kindLine = []byte("\nkind:")

// topLevelKind returns the value of the only "kind:" line at column 0, or
// "" when there is none or more than one. A line at column 0 is a key of the
// document's root mapping (or inside a multi-line quoted string, and then
// the document has no top-level kind line of its own, so it has no kind at
// all or two such lines).
func topLevelKind(data []byte) string {
	// A quoted "kind" key could be the real one: look no further.
	if bytes.Contains(data, []byte(`"kind"`)) || bytes.Contains(data, []byte(`'kind'`)) {
		return ""
	}
	var at []int
	if bytes.HasPrefix(data, kindLine[1:]) {
		at = append(at, 0)
	}
	for i := 0; ; {
		j := bytes.Index(data[i:], kindLine)
		if j < 0 {
			break
		}
		at = append(at, i+j+1)
		i += j + 1
	}
	if len(at) != 1 {
		return ""
	}
	v, rest, _ := bytes.Cut(data[at[0]+len("kind:"):], []byte("\n"))
	// An indented line after it continues a multi-line plain value.
	if next, _, _ := bytes.Cut(rest, []byte("\n")); len(next) > 0 && (next[0] == ' ' || next[0] == '\t') && !isBlankOrComment(next) {
		return ""
	}
	if c := bytes.Index(v, []byte(" #")); c >= 0 {
		v = v[:c]
	}
	v = bytes.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	// Only a single word of name characters is trusted.
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return ""
		}
	}
	return string(v)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are yaml.v3's parser (not scanner) errors: for them it
// reports a 0-based line, where scanner errors get a 1-based one; either is
// the line where the enclosing construct starts when it has one, else where
// the problem was found (go.yaml.in/yaml/v3 decode.go, parser.fail).
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'": true, "did not find expected ',' or '}'": true,
	"did not find expected '-' indicator": true, "did not find expected key": true,
	"did not find expected node content": true, "did not find expected <document start>": true,
	"found duplicate %TAG directive": true, "found duplicate %YAML directive": true,
	"found incompatible YAML document": true, "found undefined tag handle": true,
}

// parseError turns a yaml.v3 error into an *Error with the stream's line.
func parseError(err error, name string, first int) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rel := 1 // yaml.v3 gives no line for the document's first line
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		rel, _ = strconv.Atoi(m[1])
		msg = err.Error()[len(m[0]):]
		if parserProblems[msg] {
			rel++
		}
	}
	return &Error{Location: rewrite.Location{File: name, Line: first + rel - 1}, Err: fmt.Errorf("malformed YAML: %s", msg)}
}

// invalidUTF8Line is the 0-based line of the first invalid UTF-8 byte.
func invalidUTF8Line(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return bytes.Count(data[:i], []byte("\n"))
		}
		i += size
	}
	return 0
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "got a map"
	case yaml.SequenceNode:
		return "got a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "got null"
		}
		return fmt.Sprintf("got %s %s", strings.TrimPrefix(n.Tag, "!!"), bounded.Word(n.Value))
	}
	return "got " + bounded.Word(n.Tag)
}

// Add maps an image that was found outside a manifest (a chart's image
// annotations, an image list file) and adds it to the image set, as if it
// had been found at loc. An invalid reference is an *Error at loc; with
// Config.SkipInvalid it is passed to the warning function instead, and
// Add returns nil.
func (rw *Rewriter) Add(value string, loc rewrite.Location) error {
	m, err := rw.mapper.Map(value)
	if err != nil {
		err = &Error{Location: loc, Err: err}
		if rw.skipInvalid {
			rw.Warn(err)
			return nil
		}
		return err
	}
	loc.Value = value
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.addLocked(rewrite.Occurrence{Mapping: m, Location: loc})
}

// addLocked adds an occurrence to the image set, with rw.mu held. A
// collision is an *Error, or, when the Rewriter only lists, a warning and
// the occurrence is recorded all the same.
func (rw *Rewriter) addLocked(o rewrite.Occurrence) error {
	err := rw.set.Add(o)
	if err == nil {
		return nil
	}
	err = &Error{Location: o.Location, Err: err}
	var ce *rewrite.CollisionError
	if rw.listOnly && errors.As(err, &ce) {
		rw.warn(err)
		rw.set.Record(o)
		return nil
	}
	return err
}

// Warn passes a warning to the Rewriter's warning function (see
// WithWarnings), for callers that read images from other sources.
func (rw *Rewriter) Warn(err error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.warn(err)
}

// Mapper returns the Rewriter's mapper.
func (rw *Rewriter) Mapper() *rewrite.Mapper { return rw.mapper }
