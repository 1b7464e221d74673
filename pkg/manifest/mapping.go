package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/textpos"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Mapping: the references a document's detectors found are validated and
// mapped (mapAll switches on the kind of each), located in the document's
// bytes (locateAll) and sorted into the run's result (finish).

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
	lines := textpos.LineStarts(d.data)
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
			case m.field.Type == TypeEmbedded:
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
	pos := textpos.NewPositioner(d.data, lines)
	for _, l := range located {
		loc := &ms[l.i].occ.Location
		loc.Line, loc.Column = pos.Position(l.off)
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
		embedded := f.Type == TypeEmbedded
		loc.Embedded, loc.Named, loc.Guessed = embedded, embedded && f.Named, f.Guessed
		if f.Type == TypeRegistry {
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
			if rw.skipInvalid || embedded || f.Guessed {
				res.warns = append(res.warns, err)
			} else {
				res.errs = append(res.errs, err)
			}
			continue
		}
		loc.Value = f.Value
		mp := mapped{field: f, occ: rewrite.Occurrence{Mapping: m, Location: loc}}
		named := embedded && f.Named && rw.namedEmbedded
		if !embedded || rw.rewriteEmbedded || named {
			e := edit{node: f.Node, sub: !f.whole(), at: f.At, old: f.Value, embedded: embedded}
			switch {
			case m.Action != rewrite.Rewritten:
			case f.Type == TypeSplit && f.Rest != "":
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
			case f.Type == TypeSplit && f.Ref != "":
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
		case m.unlisted && m.field.Type == TypeEmbedded:
			m.to = toEmb
		case m.unlisted && m.field.Incomplete != "":
			m.to = toUnlisted
		case m.unlisted:
		case m.field.Type != TypeEmbedded:
			m.to = toSet
		case rw.listEmbedded || m.edit != nil:
			m.to = toEmb | toSet
		default:
			m.to = toEmb | toLeft
		}
	}
	res.ms = ms
}
