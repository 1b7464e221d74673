package rewrite

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Pins map fully qualified source images to their targets pinned by
// digest ("sea.hub:5000/library/nginx:1.25@sha256:…"), as "rehost mirror
// --pin" prints them.
type Pins map[string]Ref

// ParsePins reads "SOURCE<TAB>TARGET" lines; blank lines and lines starting
// with "#" are skipped. Every target must carry a digest. name is used in
// errors.
func ParsePins(r io.Reader, name string) (Pins, error) {
	pins := Pins{}
	var errs []error
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		src, dst, ok := strings.Cut(text, "\t")
		if !ok {
			errs = append(errs, fmt.Errorf("%s:%d: want SOURCE<TAB>TARGET", name, line))
			continue
		}
		s, err := ParseRef(strings.TrimSpace(src))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
			continue
		}
		d, err := ParseRef(strings.TrimSpace(dst))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
			continue
		}
		if d.Digest == "" {
			errs = append(errs, fmt.Errorf("%s:%d: target %s has no digest to pin", name, line, dst))
			continue
		}
		pins[s.Qualified()] = d
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	return pins, errors.Join(errs...)
}

// WithPins returns a copy of m whose rewritten images take their pinned
// target when pins has one for their source. A pin whose repository is not
// the computed target's (pins made with another registry or path style),
// or whose digest is not the one written in the reference (a
// *PinConflictError), is an error when that image is mapped.
func (m *Mapper) WithPins(pins Pins) *Mapper {
	c := *m
	c.pins = pins
	return &c
}

func (m *Mapper) pin(mp Mapping) (Mapping, error) {
	p, ok := m.pins[mp.Source.Qualified()]
	if !ok || mp.Action != Rewritten {
		return mp, nil
	}
	if p.RepositoryName() != mp.Target.RepositoryName() {
		return Mapping{}, &InvalidReferenceError{Value: mp.Source.String(), Reason: fmt.Sprintf("pinned to %s, but it maps to %s: make the pins with the same registry and path style", p, mp.Target.RepositoryName())}
	}
	if mp.Source.Digest != "" && p.Digest != mp.Source.Digest {
		return Mapping{}, &PinConflictError{Source: mp.Source.String(), Written: mp.Source.Digest, Pin: p.String()}
	}
	mp.Target = p
	return mp, nil
}

// PinConflictError reports a pin whose digest is not the digest written in
// the reference: a pin never replaces a digest written in a manifest.
type PinConflictError struct {
	// Source is the reference as written, Written its digest, Pin the
	// pinned target.
	Source, Written, Pin string
}

func (e *PinConflictError) Error() string {
	return fmt.Sprintf("%s is pinned to %s, but its digest is written as %s: a pin never replaces a digest written in a manifest; make the pins again, or fix the digest", e.Source, e.Pin, e.Written)
}

// Unpinned returns the images that are rewritten to a target without a
// digest: after rewriting with pins, the images the pins have no line for.
// Images written with a digest keep it and count as pinned; images left
// as written (excluded, in the target) are not rewritten, so pins do not
// apply to them.
func Unpinned(images []Image) []Image {
	var out []Image
	for _, img := range images {
		if img.Action == Rewritten && !strings.Contains(img.Target, "@") {
			out = append(out, img)
		}
	}
	return out
}
