package manifest

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

// envImages finds the images passed to a program through an environment
// variable: a container argument or command holds "$(VAR)", Kubernetes
// expands it from the container's env, and VAR comes from a ConfigMap key
// (env[].valueFrom.configMapKeyRef, or envFrom[].configMapRef with its
// prefix). The ConfigMap's value is an image when the argument is the value
// of a flag that says image (--*-image=$(VAR), --prometheus-config-reloader=
// $(VAR), or "$(VAR)" after such a flag), or when VAR's name says image
// (*_IMAGE). Bitnami's kube-prometheus chart passes the config-reloader
// image to the Prometheus operator so:
//
//	ConfigMap data:  prometheus-config-reloader: docker.io/bitnami/prometheus-operator:0.85.0
//	Deployment args: --prometheus-config-reloader=$(PROMETHEUS_CONFIG_RELOADER)
//	           env:  PROMETHEUS_CONFIG_RELOADER from configMapKeyRef {name, key: prometheus-config-reloader}
//
// The reference and the value live in different objects, and Helm renders
// the ConfigMap before the Deployment, so the references ("this key of that
// ConfigMap is an image") are collected before the documents are walked:
// the Rewriter pre-scans each input (prescanEnvRefs: only documents holding
// "$(" are parsed) into a run-level set (envRefSet) that the walker hands
// this detector. A ConfigMap value so referenced is a named embedded
// reference (Field.Named): listed, rewritten and reported at the
// ConfigMap's line and data key, as a *_IMAGE env value is.
//
// A ConfigMap matches a reference by name and key, and by namespace unless
// either leaves its namespace unset (kubectl apply -n puts both in one).
// Only the containers of the built-in workload kinds are read (podSpecPaths),
// as Kubernetes expands $(VAR) only there; "$$(VAR)" is an escaped, literal
// "$(VAR)", as Kubernetes defines.
type envImages struct{}

func (envImages) detect(w *walker, o object) {
	if !w.embedded || w.envRefs == nil || o.gk != (groupKind{"", "ConfigMap"}) {
		return
	}
	name := scalar(get(resolve(get(o.node, "metadata")), "name"))
	ns := scalar(get(resolve(get(o.node, "metadata")), "namespace"))
	eachValue(o.node, "data", func(d *yaml.Node) {
		data := resolve(d)
		if data.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(data.Content); i += 2 {
			k, raw := data.Content[i].Value, data.Content[i+1]
			if isString(resolve(raw)) && w.envRefs.has(ns, name, k) {
				w.scanNamed(raw, true, true, "data", k)
			}
		}
	})
}

// ScanEnvImages adds to the run the ConfigMap keys that the documents of
// the stream r pass to containers as images through $(VAR), so that those
// ConfigMaps are rewritten and listed wherever they come in the run's
// inputs. Rewrite, RewriteAt, RewriteBytes and RewriteParts scan their own
// input first; a caller that rewrites one input in several calls (one per
// template) or several inputs whose ConfigMaps and workloads may sit in
// different files scans them all before the first rewrite. It returns the
// read error of r, if any; documents that do not parse are left to the
// rewrite, which reports them.
func (rw *Rewriter) ScanEnvImages(r io.Reader) error {
	refs, err := prescanReader(r)
	rw.envRefs.add(refs)
	return err
}

// ScanEnvImagesNode is ScanEnvImages for an object the caller has parsed
// (the node RewriteNode takes): a pipeline that rewrites node by node (the
// kio filter of package krmfn) scans every node first.
func (rw *Rewriter) ScanEnvImagesNode(node *yaml.Node) {
	if node != nil {
		rw.envRefs.add(envRefsOf(node))
	}
}

// WithEnvImages returns a Finder that also finds, as named embedded
// references (FindEmbedded), the ConfigMap values that the documents of
// streams pass to containers as images through $(VAR).
func (f *Finder) WithEnvImages(streams ...[]byte) *Finder {
	c := *f
	for _, s := range streams {
		c.envRefs = c.envRefs.with(prescanEnvRefs(s))
	}
	return &c
}

// envRef is a ConfigMap key whose value a container receives as an image.
type envRef struct{ namespace, name, key string }

// envRefSet is the run's set of envRefs. It is never modified once
// published (Rewriter.envRefs): adding makes a new set.
type envRefSet struct {
	// byName maps a ConfigMap's name and key to the namespaces that
	// reference it ("" for unset).
	byName map[[2]string][]string
	// names are the ConfigMap names, for the fast path.
	names []string
}

// has reports whether the key of the ConfigMap ns/name is referenced.
func (s *envRefSet) has(ns, name, key string) bool {
	if s == nil {
		return false
	}
	for _, n := range s.byName[[2]string{name, key}] {
		if n == ns || n == "" || ns == "" {
			return true
		}
	}
	return false
}

// mayHold reports whether a document may be a ConfigMap of the set: the
// fast path skips documents without an image word, which such a ConfigMap
// need not have.
func (s *envRefSet) mayHold(data []byte) bool {
	if s == nil {
		return false
	}
	for _, n := range s.names {
		if bytes.Contains(data, []byte(n)) {
			return true
		}
	}
	return false
}

// with returns s with refs added (s itself when they are all in it).
func (s *envRefSet) with(refs []envRef) *envRefSet {
	out := s
	for _, r := range refs {
		if out != nil && out.holds(r) {
			continue
		}
		if out == s { // copy on first change
			out = &envRefSet{byName: map[[2]string][]string{}}
			if s != nil {
				for k, v := range s.byName {
					out.byName[k] = v[:len(v):len(v)]
				}
				out.names = s.names[:len(s.names):len(s.names)]
			}
		}
		k := [2]string{r.name, r.key}
		if len(out.byName[k]) == 0 && !contains(out.names, r.name) {
			out.names = append(out.names, r.name)
		}
		out.byName[k] = append(out.byName[k], r.namespace)
	}
	return out
}

func (s *envRefSet) holds(r envRef) bool {
	for _, n := range s.byName[[2]string{r.name, r.key}] {
		if n == r.namespace {
			return true
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// envRefsOf returns the envRefs of the object in node (items of Lists
// included).
func envRefsOf(node *yaml.Node) []envRef {
	if node.Kind == yaml.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	var out []envRef
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n = resolve(n)
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		if objs := runTogether(n); objs != nil {
			for _, o := range objs {
				walk(o)
			}
			return
		}
		kind := scalar(get(n, "kind"))
		if strings.HasSuffix(kind, "List") {
			eachValue(n, "items", func(v *yaml.Node) {
				if items := resolve(v); items.Kind == yaml.SequenceNode {
					for _, it := range items.Content {
						walk(it)
					}
				}
			})
		}
		p, ok := podSpecPaths[kind]
		if !ok {
			return
		}
		ns := scalar(get(resolve(get(n, "metadata")), "namespace"))
		eachAt(n, p, func(spec *yaml.Node) {
			for _, key := range containerListKeys {
				eachValue(spec, key, func(l *yaml.Node) {
					if list := resolve(l); list.Kind == yaml.SequenceNode {
						for _, c := range list.Content {
							out = append(out, containerEnvRefs(resolve(c), ns)...)
						}
					}
				})
			}
		})
	}
	walk(node)
	return out
}

// containerEnvRefs returns the ConfigMap keys a container passes as images
// through $(VAR) in its command or args.
func containerEnvRefs(c *yaml.Node, ns string) []envRef {
	if c == nil || c.Kind != yaml.MappingNode {
		return nil
	}
	var vars []string
	for _, key := range []string{"command", "args"} {
		eachValue(c, key, func(l *yaml.Node) {
			list := resolve(l)
			if list.Kind != yaml.SequenceNode {
				return
			}
			ctx := false
			for _, raw := range list.Content {
				it := resolve(raw)
				if !isString(it) {
					ctx = false
					continue
				}
				vars = append(vars, imageVars(it.Value, ctx)...)
				name, ok := flagName(it.Value)
				ctx = ok && flagSaysImage(name)
			}
		})
	}
	if len(vars) == 0 {
		return nil
	}
	// Where each variable comes from: env wins over envFrom, and a later
	// env entry over an earlier one, as Kubernetes builds the environment.
	type source struct {
		name, key string
		set       bool // an env entry defines it (from a ConfigMap or not)
	}
	env := map[string]source{}
	eachValue(c, "env", func(l *yaml.Node) {
		list := resolve(l)
		if list.Kind != yaml.SequenceNode {
			return
		}
		for _, e := range list.Content {
			e = resolve(e)
			v := scalar(get(e, "name"))
			if v == "" {
				continue
			}
			ref := resolve(get(resolve(get(resolve(get(e, "valueFrom")), "configMapKeyRef")), "name"))
			s := source{set: true}
			if ref != nil {
				s.name = scalar(ref)
				s.key = scalar(get(resolve(get(resolve(get(e, "valueFrom")), "configMapKeyRef")), "key"))
			}
			env[v] = s
		}
	})
	type from struct{ name, prefix string }
	var froms []from
	eachValue(c, "envFrom", func(l *yaml.Node) {
		list := resolve(l)
		if list.Kind != yaml.SequenceNode {
			return
		}
		for _, e := range list.Content {
			e = resolve(e)
			if name := scalar(get(resolve(get(e, "configMapRef")), "name")); name != "" {
				froms = append(froms, from{name, scalar(get(e, "prefix"))})
			}
		}
	})
	var out []envRef
	for _, v := range vars {
		if s, ok := env[v]; ok {
			if s.name != "" && s.key != "" {
				out = append(out, envRef{ns, s.name, s.key})
			}
			continue
		}
		// Any ConfigMap of envFrom may hold the key; the one that does is
		// the one found.
		for _, f := range froms {
			if k, ok := strings.CutPrefix(v, f.prefix); ok && k != "" {
				out = append(out, envRef{ns, f.name, k})
			}
		}
	}
	return out
}

// imageVars returns the variables of the $(VAR) references in an argument
// that pass an image: the whole value of a flag that says image, the whole
// argument after such a flag (ctx), or any variable whose name says image.
// "$$" is a literal "$" (Kubernetes' expansion), so "$$(VAR)" is no
// reference.
func imageVars(s string, ctx bool) []string {
	if !strings.Contains(s, "$(") {
		return nil
	}
	whole := func(v string) (string, bool) { // v is exactly one $(VAR)
		v = strings.TrimSpace(v)
		refs := expansionRefs(v)
		if len(refs) == 1 && refs[0].at == 0 && refs[0].end == len(v) {
			return refs[0].name, true
		}
		return "", false
	}
	var out []string
	if name, at, ok := flagValue(s); ok && flagSaysImage(name) {
		if v, ok := whole(s[at:]); ok {
			out = append(out, v)
		}
	} else if ctx {
		if v, ok := whole(s); ok {
			out = append(out, v)
		}
	}
	for _, r := range expansionRefs(s) {
		if hasImageWord(r.name) && !contains(out, r.name) {
			out = append(out, r.name)
		}
	}
	return out
}

// expansionRef is a $(VAR) reference: the variable and the bytes [at, end)
// of "$(VAR)".
type expansionRef struct {
	name    string
	at, end int
}

// expansionRefs returns the $(VAR) references of s as Kubernetes reads them
// (k8s.io/kubernetes third_party/forked/golang/expansion): "$$" is an
// escaped "$", "$(" runs to the next ")", an unclosed "$(" is text.
func expansionRefs(s string) []expansionRef {
	var out []expansionRef
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		switch s[i+1] {
		case '$':
			i++
		case '(':
			if j := strings.IndexByte(s[i+2:], ')'); j >= 0 {
				out = append(out, expansionRef{name: s[i+2 : i+2+j], at: i, end: i + 3 + j})
				i += 2 + j
			} else {
				i++
			}
		}
	}
	return out
}

// prescanEnvRefs returns the envRefs of a stream held in memory.
func prescanEnvRefs(data []byte) []envRef {
	var out []envRef
	_ = expansionDocs(data, nil, func(doc []byte) { out = append(out, docEnvRefs(doc)...) })
	return out
}

// prescanReader returns the envRefs of a stream read from r: a seekable
// stream (a file, a bytes.Reader) is read through once in blocks, noting
// where the documents holding "$(" lie (expansionRanges), and only those
// are read again; any other is read once, holding each document until it
// is known not to hold "$(" (expansionDocs). It leaves a seekable r at an
// unspecified offset.
func prescanReader(r io.Reader) ([]envRef, error) {
	var out []envRef
	s, ok := r.(io.ReadSeeker)
	if !ok {
		err := expansionDocs(nil, r, func(doc []byte) { out = append(out, docEnvRefs(doc)...) })
		return out, err
	}
	base, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		err := expansionDocs(nil, r, func(doc []byte) { out = append(out, docEnvRefs(doc)...) })
		return out, err
	}
	ranges, err := expansionRanges(s)
	if err != nil {
		return nil, err
	}
	var doc []byte
	for _, rg := range ranges {
		if _, err := s.Seek(base+rg[0], io.SeekStart); err != nil {
			return nil, err
		}
		doc = append(doc[:0], make([]byte, rg[1]-rg[0])...)
		if _, err := io.ReadFull(s, doc); err != nil {
			return nil, err
		}
		out = append(out, docEnvRefs(doc)...)
	}
	return out, nil
}

// expansionRanges returns the byte ranges [start, end) of r (from where it
// is) that hold the documents with "$(": each starts at a "---" marker line
// (or the stream's start) and ends before one (or at the end). It reads r
// once, in blocks, holding nothing else.
func expansionRanges(r io.Reader) ([][2]int64, error) {
	const block = 64 << 10
	const keep = 4 // bytes carried to the next block: "\n---" and the byte after
	buf := make([]byte, keep+block)
	var out [][2]int64
	var off int64 // offset of buf[0] in the stream
	n, docStart, in, eof := 0, int64(0), false, false
	for !eof {
		m, err := io.ReadFull(r, buf[n:])
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			eof = true
		} else if err != nil {
			return nil, err
		}
		// Events up to limit are decided: beyond it a marker's next byte
		// (or a "$(" cut in two) may not be read yet.
		limit := n
		if !eof {
			limit = max(n-keep, 0)
		}
		b := buf[:n]
		for i := 0; i < limit; {
			if !in {
				d := bytes.Index(b[i:], []byte("$("))
				if d < 0 || i+d >= limit {
					// No "$(" before limit: the document's start is the
					// last marker line before it.
					if l := lastMarkerBefore(b, i, limit, eof); l >= 0 {
						docStart = off + int64(l)
					}
					break
				}
				if l := lastMarkerBefore(b, i, i+d, eof); l >= 0 {
					docStart = off + int64(l)
				}
				in, i = true, i+d+2
				continue
			}
			// In a document with "$(": find its end.
			end := -1
			for j := i; j < limit; {
				k := bytes.IndexByte(b[j:limit], '\n')
				if k < 0 {
					break
				}
				if l := j + k + 1; l < n && isMarkerAt(b, l, eof) {
					end = l
					break
				}
				j += k + 1
			}
			if end < 0 {
				break
			}
			out = append(out, [2]int64{docStart, off + int64(end)})
			docStart, in, i = off+int64(end), false, end
		}
		if eof {
			if in {
				out = append(out, [2]int64{docStart, off + int64(n)})
			}
			return out, nil
		}
		// Carry the undecided tail.
		c := copy(buf, buf[limit:n])
		off += int64(limit)
		n = c
	}
	return out, nil
}

// lastMarkerBefore returns the start of the last "---" marker line whose
// line break lies in b[from:to], or -1.
func lastMarkerBefore(b []byte, from, to int, eof bool) int {
	for end := to; end > from; {
		i := bytes.LastIndexByte(b[from:end], '\n')
		if i < 0 {
			return -1
		}
		if l := from + i + 1; l < len(b) && isMarkerAt(b, l, eof) {
			return l
		}
		end = from + i
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

// lastMarker returns the start of the last "---" marker line of b that
// starts after lo, or from when there is none. The line at len(b), if any,
// is never one: b is a prefix of the stream.
func lastMarker(b []byte, from, lo int) int {
	for end := len(b); end > lo; {
		i := bytes.LastIndexByte(b[lo:end], '\n')
		if i < 0 {
			break
		}
		if l := lo + i + 1; isMarkerAt(b, l, false) {
			return l
		}
		end = lo + i
	}
	return from
}

// nextMarker returns the start of the first "---" marker line after the
// line holding from (ok), or the end of the stream when b is all of it
// (eof); otherwise ok is false and resume is where to go on once more is
// read.
func nextMarker(b []byte, from int, eof bool) (end int, ok bool, resume int) {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return len(b), eof, i
		}
		l := i + j + 1
		if len(b)-l < 4 && !eof {
			return 0, false, i // too few bytes to tell a marker
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
