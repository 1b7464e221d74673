package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/yamlnode"
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
	// envRefs are the ConfigMap keys passed as images met so far in the
	// run's inputs (envimages.go), pre-scanned before each input.
	envRefs envRefsHolder
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
	// ahead holds the documents Prepare processed (lookahead.go).
	ahead atomic.Pointer[lookahead]
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

// Message is the one-line warning for the note: where, which operator,
// which images. It names no setting of a front end: the remedy is an
// image list (a file named imageList among the inputs, ReadImageList),
// which each front end words in its own terms (the CLI's --images-from).
func (n OperatorNote) Message() string {
	return fmt.Sprintf("%s: %s starts images no manifest names (%s)", n.Location, n.Operator, n.Starts)
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

// parseError turns a yaml.v3 error into an *Error with the stream's line.
func parseError(err error, name string, first int) error {
	rel, msg, _ := yamlnode.ErrorLine(err)
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
