package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxErrors is how many input errors a run collects before it stops.
const maxErrors = 20

// Option configures a Rewriter.
type Option func(*Rewriter)

// WithWarnings sets the function that receives warnings, such as invalid
// image references skipped because of Config.SkipInvalid. By default
// warnings are discarded.
func WithWarnings(fn func(error)) Option { return func(r *Rewriter) { r.warn = fn } }

// WithWorkers sets how many documents are processed at once. The default is
// GOMAXPROCS.
func WithWorkers(n int) Option { return func(r *Rewriter) { r.workers = n } }

// Rewriter rewrites the images of manifest streams and collects every image
// it meets. Each call adds to the same image set, so collisions are found
// across all the inputs of a run. A Rewriter is not safe for concurrent use.
type Rewriter struct {
	mapper      *rewrite.Mapper
	finder      *Finder
	skipInvalid bool
	warn        func(error)
	workers     int
	set         rewrite.ImageSet
	// fullParse turns the fast path off: every document is parsed.
	fullParse bool
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
	rw := &Rewriter{mapper: m, finder: f, skipInvalid: c.SkipInvalid, warn: func(error) {}, workers: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		o(rw)
	}
	if rw.workers < 1 {
		rw.workers = 1
	}
	return rw, nil
}

// Images returns every image met so far, sorted by source.
func (rw *Rewriter) Images() []rewrite.Image { return rw.set.Images() }

// Sources returns the sorted unique fully qualified source images met so
// far: a sealer imageList.
func (rw *Rewriter) Sources() []string { return rw.set.Sources() }

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
// all-or-nothing output write to a buffer or a temporary file.
func (rw *Rewriter) Rewrite(w io.Writer, r io.Reader, name string) error {
	type slot struct {
		doc document
		res chan result
	}
	sp := newSplitter(r)
	jobs := make(chan slot, rw.workers)
	queue := make(chan slot, 2*rw.workers)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(jobs)
		defer close(queue)
		for {
			d, err := sp.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = fmt.Errorf("%s: %w", name, err)
				}
				return
			}
			s := slot{doc: d, res: make(chan result, 1)}
			select {
			case queue <- s:
			case <-stop:
				return
			}
			jobs <- s
		}
	}()
	for i := 0; i < rw.workers; i++ {
		go func() {
			for s := range jobs {
				s.res <- rw.process(s.doc, name)
			}
		}()
	}

	var errs []error
	for s := range queue {
		res := <-s.res
		errs = append(errs, res.errs...)
		for _, o := range res.occ {
			if err := rw.set.Add(o); err != nil {
				errs = append(errs, err)
			}
		}
		for _, wn := range res.warns {
			rw.warn(wn)
		}
		if len(errs) >= maxErrors {
			close(stop)
			for range queue { // let the reader and workers finish
			}
			break
		}
		if len(errs) == 0 && w != nil {
			out := res.out
			if out == nil {
				out = s.doc.data
			}
			if _, err := w.Write(out); err != nil {
				errs = append(errs, err)
				close(stop)
				for range queue {
				}
				break
			}
		}
	}
	if readErr != nil {
		errs = append(errs, readErr)
	}
	return errors.Join(errs...)
}

// result is what processing one document gives.
type result struct {
	out   []byte // the rewritten document, nil when unchanged
	occ   []rewrite.Occurrence
	warns []error
	errs  []error
}

func (rw *Rewriter) process(d document, name string) result {
	if !utf8.Valid(d.data) {
		return result{errs: []error{&Error{Location: rewrite.Location{File: name, Line: d.line + invalidUTF8Line(d.data)}, Err: errors.New("invalid UTF-8: manifests must be UTF-8 encoded")}}}
	}
	if !rw.fullParse && !rw.mayHoldImages(d.data) {
		return result{}
	}
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(d.data)).Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return result{}
		}
		return result{errs: []error{parseError(err, name, d.line)}}
	}
	fields := rw.finder.Find(&root)
	if len(fields) == 0 {
		return result{}
	}
	res, edits := rw.mapFields(fields, func(f Field) rewrite.Location {
		return rewrite.Location{File: name, Line: d.line + f.Node.Line - 1, Column: f.Node.Column, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Field: f.Path}
	})
	if len(edits) > 0 && len(res.errs) == 0 {
		out, err := splice(d.data, edits)
		if err != nil {
			res.errs = append(res.errs, &Error{Location: rewrite.Location{File: name, Line: d.line}, Err: err})
		}
		res.out = out
	}
	return res
}

// mapFields validates and maps the value of each field. It is shared by the
// stream rewriter and the kio filter.
func (rw *Rewriter) mapFields(fields []Field, where func(Field) rewrite.Location) (result, []edit) {
	var res result
	var edits []edit
	for _, f := range fields {
		loc := where(f)
		var m rewrite.Mapping
		var err error
		if isString(f.Node) {
			m, err = rw.mapper.Map(f.Node.Value)
		} else {
			err = fmt.Errorf("%w: %s", ErrNotString, describe(f.Node))
		}
		if err != nil {
			err = &Error{Location: loc, Err: err}
			if rw.skipInvalid {
				res.warns = append(res.warns, err)
			} else {
				res.errs = append(res.errs, err)
			}
			continue
		}
		loc.Value = f.Node.Value
		res.occ = append(res.occ, rewrite.Occurrence{Mapping: m, Location: loc})
		if m.Action == rewrite.Rewritten {
			edits = append(edits, edit{node: f.Node, value: m.Target.String()})
		}
	}
	return res, edits
}

// mayHoldImages is the fast path: it reports false, without parsing, for
// documents that hold no image field: those without any key that can hold
// an image as a substring, and CustomResourceDefinitions.
func (rw *Rewriter) mayHoldImages(data []byte) bool {
	// A backslash may be an escape in a quoted key: look closer.
	if bytes.IndexByte(data, '\\') < 0 {
		found := false
		for _, k := range rw.finder.keys {
			if bytes.Contains(data, []byte(k)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return topLevelKind(data) != crdKind
}

var kindLine = []byte("\nkind:")

// topLevelKind returns the value of the only "kind:" line at column 0, or
// "" when there is none or more than one. A line at column 0 is a key of the
// document's root mapping (or inside a multi-line quoted string, and then
// the document has no top-level kind line of its own, so it has no kind at
// all or two such lines).
func topLevelKind(data []byte) string {
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
	v := data[at[0]+len("kind:"):]
	if nl := bytes.IndexByte(v, '\n'); nl >= 0 {
		v = v[:nl]
	}
	if c := bytes.Index(v, []byte(" #")); c >= 0 {
		v = v[:c]
	}
	return strings.Trim(strings.TrimSpace(string(v)), `"'`)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseError turns a yaml.v3 error into an *Error with the stream's line.
func parseError(err error, name string, first int) error {
	msg := err.Error()
	line := first
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		line = first + n - 1
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return &Error{Location: rewrite.Location{File: name, Line: line}, Err: fmt.Errorf("malformed YAML: %s", msg)}
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
		return fmt.Sprintf("got %s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "got " + n.Tag
}

// Add maps an image that was found outside a manifest (a chart's
// helm.sh/images annotation, an image list file) and adds it to the image
// set, as if it had been found at loc.
func (rw *Rewriter) Add(value string, loc rewrite.Location) error {
	m, err := rw.mapper.Map(value)
	if err != nil {
		return &Error{Location: loc, Err: err}
	}
	loc.Value = value
	return rw.set.Add(rewrite.Occurrence{Mapping: m, Location: loc})
}

// Mapper returns the Rewriter's mapper.
func (rw *Rewriter) Mapper() *rewrite.Mapper { return rw.mapper }
