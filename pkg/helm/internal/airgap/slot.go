package airgap

import (
	"fmt"
	"strings"
)

// slot is where a candidate is in the value of an image field it drives.
type slot struct {
	// parts is the field's value split where the key's value goes.
	parts []string
	// held is the key's value as the field holds it: its value, or for an
	// empty or absent key what the template writes without it; known is
	// false when the field cannot be split so (a template that writes
	// more than the key when the key is set).
	held  string
	known bool
}

// offsets returns the offsets of the key's occurrences in the field's value.
func (h slot) offsets() []int {
	var out []int
	pos := 0
	for i, p := range h.parts[:len(h.parts)-1] {
		if i > 0 {
			pos += len(h.held)
		}
		pos += len(p)
		out = append(out, pos)
	}
	return out
}

// recordDrive records that the candidate drives field k of document doc, which
// renders as tmpl with probeMarker in the candidate's place.
func (c *candidate) recordDrive(k int, tmpl string, doc int) {
	if c.drives == nil {
		c.drives, c.docs = map[int]string{}, map[int]bool{}
	}
	c.drives[k] = tmpl
	c.docs[doc] = true
}

// fitSlots finds where the candidate is in each image field it drives
// (c.drives, rendered with probeMarker in its place), and the value that
// moves them all by itself, if there is one.
func (s *prober) fitSlots(c *candidate) {
	if c.unusable != "" {
		return
	}
	if len(c.drives) == 0 {
		c.noSolo = "it drives no image"
		return
	}
	c.slots = map[int]slot{}
	value, ok, single := "", false, true
	for _, k := range sortedKeys(c.drives) {
		f := s.fields[k]
		parts := strings.Split(c.drives[k], probeMarker)
		if len(parts) == 1 {
			c.unusable = fmt.Sprintf("it changes %s in a way other than by substitution", f.value)
			return
		}
		h := slot{parts: parts}
		if c.was != "" {
			if strings.Join(parts, c.was) != f.value {
				c.unusable = fmt.Sprintf("%s is not built from it by substitution", f.value)
				return
			}
			h.held, h.known = c.was, true
		} else {
			h.held, h.known = fillSlot(parts, f.value)
		}
		c.slots[k] = h
		if !single {
			continue
		}
		x, solved := fillSlot(parts, f.want)
		switch {
		case !solved:
			c.noSolo = fmt.Sprintf("no value of it gives %s", f.want)
			single = false
		case ok && x != value:
			c.noSolo = fmt.Sprintf("its images need different values (%q, %q)", value, x)
			single = false
		default:
			value, ok = x, true
			if f.moves() {
				c.covers = append(c.covers, k)
			}
		}
	}
	if !single {
		c.covers = nil
		return
	}
	if value == "" || value == c.was || len(c.covers) == 0 {
		c.noSolo = "it needs no change"
		c.covers = nil
		return
	}
	c.solo = value
}

// solve finds x such that parts joined with x is want.
func fillSlot(parts []string, want string) (string, bool) {
	n := len(parts) - 1
	fixed := 0
	for _, p := range parts {
		fixed += len(p)
	}
	if len(want) < fixed || (len(want)-fixed)%n != 0 {
		return "", false
	}
	l := (len(want) - fixed) / n
	if !strings.HasPrefix(want, parts[0]) {
		return "", false
	}
	x := want[len(parts[0]) : len(parts[0])+l]
	if strings.Join(parts, x) != want {
		return "", false
	}
	return x, true
}
