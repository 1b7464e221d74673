package airgap

import (
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
)

// assignment is a set of keys with their new values.
type assignment map[*candidate]string

// lookuper gives the value a key is set to, if it is.
type lookuper interface {
	get(c *candidate) (string, bool)
}

func (a assignment) get(c *candidate) (string, bool) {
	v, ok := a[c]
	return v, ok
}

// union is b over a, without copying either.
type union struct{ a, b assignment }

func (u union) get(c *candidate) (string, bool) {
	if v, ok := u.b[c]; ok {
		return v, true
	}
	return u.a.get(c)
}

// option is a set of keys the greedy search may add at once: one key with
// the value that moves its images alone, or the keys that build one
// reference together set to their natural values (see naturalValue).
type option struct {
	keys    assignment
	natural bool
	name    string // the keys' paths, for a stable order
}

// solver chooses the keys.
type solver struct {
	s          *Search
	cands      []*candidate
	drivers    map[int][]*candidate // field -> the usable candidates that drive it
	naturals   map[int][]assignment // moving field -> natural assignments that move it
	boundaries map[int]func(int) (int, bool)
}

func (s *Search) newSolver(cands []*candidate) *solver {
	sv := &solver{s: s, cands: cands, drivers: map[int][]*candidate{}, naturals: map[int][]assignment{}, boundaries: map[int]func(int) (int, bool){}}
	for _, c := range cands {
		if c.unusable != "" {
			continue
		}
		for k := range c.slots {
			sv.drivers[k] = append(sv.drivers[k], c)
		}
	}
	for k := range sv.drivers {
		sort.Slice(sv.drivers[k], func(i, j int) bool {
			return valuetree.PathString(sv.drivers[k][i].path) < valuetree.PathString(sv.drivers[k][j].path)
		})
		if s.fields[k].moves() {
			sv.naturals[k] = sv.naturalAssignments(k)
		}
	}
	return sv
}

// eval renders field k's value under the assignment, from what the probes
// learnt: the field's value with the assigned keys' places filled in.
// It fails when several assigned keys drive the field and one of them
// cannot be placed, or their places overlap.
func (sv *solver) eval(k int, a lookuper) (string, bool) {
	f := sv.s.fields[k]
	var set []*candidate
	var vals []string
	for _, c := range sv.drivers[k] {
		if v, ok := a.get(c); ok {
			set = append(set, c)
			vals = append(vals, v)
		}
	}
	switch len(set) {
	case 0:
		return f.value, true
	case 1:
		return strings.Join(set[0].slots[k].parts, vals[0]), true
	}
	type span struct {
		from, to int
		v        string
	}
	var spans []span
	for i, c := range set {
		h := c.slots[k]
		if !h.known {
			return "", false
		}
		for _, at := range h.offsets() {
			spans = append(spans, span{at, at + len(h.held), vals[i]})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	pos := 0
	for _, sp := range spans {
		if sp.from < pos {
			return "", false
		}
		b.WriteString(f.value[pos:sp.from])
		b.WriteString(sp.v)
		pos = sp.to
	}
	b.WriteString(f.value[pos:])
	return b.String(), true
}

// boundary maps a position of field k's value to the position in its
// rewritten value where the same boundary is, or false when the position
// is inside what the rewrite replaces. The boundary after the source
// registry host maps to the end of the target registry (and, with the nest
// path style, of the source host under it), the one before the source
// repository to before the target repository, so that the "library/" of
// a Docker Hub official image goes with the repository: registry
// docker.io and repository traefik become sea.hub:5000 and
// library/traefik.
func (sv *solver) boundary(k int) func(int) (int, bool) {
	if m, ok := sv.boundaries[k]; ok {
		return m
	}
	f := sv.s.fields[k]
	v, w := f.value, f.want
	ends := func(p int) (int, bool) {
		switch p {
		case 0:
			return 0, true
		case len(v):
			return len(w), true
		}
		return 0, false
	}
	m := ends
	if t := f.token; !f.registry && t != "" {
		at, tail := f.at, len(v)-f.at-len(t)
		if len(w) >= at+tail && v[:at] == w[:at] && v[len(v)-tail:] == w[len(w)-tail:] {
			t2 := w[at : len(w)-tail]
			tag := t[nameEnd(t):]
			if strings.HasSuffix(t2, tag) {
				n1, n2 := t[:len(t)-len(tag)], t2[:len(t2)-len(tag)]
				host := refHost(n1)
				repo := n1
				if host != "" {
					repo = n1[len(host)+1:]
				}
				if rest, ok := strings.CutSuffix(n2, repo); ok {
					lib := ""
					if strings.HasSuffix(rest, "library/") && !strings.HasPrefix(repo, "library/") {
						lib = "library/"
					}
					r := len(rest) - len(lib) - 1 // the "/" before the repository
					if r >= 0 && rest[r] == '/' {
						shift := len(t2) - len(t)
						m = func(p int) (int, bool) {
							switch q := p - at; {
							case p <= at:
								return p, true
							case p >= at+len(t):
								return p + shift, true
							case host != "" && q < len(host):
								return 0, false
							case host != "" && q == len(host):
								return at + r, true
							case host != "" && q == len(host)+1:
								return at + r + 1, true
							}
							return p + shift, true
						}
					}
				}
			}
		}
	}
	sv.boundaries[k] = m
	return m
}

// naturalValue is the value of c that field k's rewritten value holds
// where the field's value holds c (see boundary), or false.
func (sv *solver) naturalValue(c *candidate, k int) (string, bool) {
	h := c.slots[k]
	if !h.known {
		return "", false
	}
	m := sv.boundary(k)
	w := sv.s.fields[k].want
	val, found := "", false
	for _, at := range h.offsets() {
		from, ok1 := m(at)
		to, ok2 := m(at + len(h.held))
		if !ok1 || !ok2 || from > to {
			return "", false
		}
		if found && w[from:to] != val {
			return "", false
		}
		val, found = w[from:to], true
	}
	return val, found
}

// naturalAssignments are the ways to move field k with its drivers set to
// their natural values: one driver of each group of drivers whose places
// overlap (global.imageRegistry, or the image's own registry), the keys
// whose natural value is their value left out. At most 64.
func (sv *solver) naturalAssignments(k int) []assignment {
	type place struct {
		c        *candidate
		from, to int
		val      string
	}
	var places []place
	for _, c := range sv.drivers[k] {
		v, ok := sv.naturalValue(c, k)
		if !ok {
			continue
		}
		h := c.slots[k]
		ats := h.offsets()
		places = append(places, place{c, ats[0], ats[len(ats)-1] + len(h.held), v})
	}
	// Clusters of overlapping places, in order of position.
	sort.SliceStable(places, func(i, j int) bool { return places[i].from < places[j].from })
	var clusters [][]place
	end := -1
	for _, p := range places {
		if len(clusters) > 0 && p.from < end {
			clusters[len(clusters)-1] = append(clusters[len(clusters)-1], p)
		} else {
			clusters = append(clusters, []place{p})
		}
		if p.to > end {
			end = p.to
		}
	}
	var out []assignment
	pick := make([]place, len(clusters))
	var walk func(i int)
	walk = func(i int) {
		if len(out) >= 64 {
			return
		}
		if i == len(clusters) {
			a := assignment{}
			for _, p := range pick {
				if p.val != p.c.slots[k].held {
					a[p.c] = p.val
				}
			}
			if len(a) == 0 {
				return
			}
			if v, ok := sv.eval(k, a); ok && v == sv.s.fields[k].want {
				out = append(out, a)
			}
			return
		}
		for _, p := range clusters[i] {
			pick[i] = p
			walk(i + 1)
		}
	}
	walk(0)
	return out
}

// options lists what the greedy search may add: each usable key with its
// value, and the natural assignments of each field, in a stable order.
func (sv *solver) options() []option {
	var out []option
	for _, c := range sv.cands {
		if c.unusable != "" || c.solo == "" {
			continue
		}
		natural := true
		for _, k := range c.covers {
			if v, ok := sv.naturalValue(c, k); !ok || v != c.solo {
				natural = false
			}
		}
		out = append(out, option{keys: assignment{c: c.solo}, natural: natural})
	}
	for _, k := range sortedKeys(sv.naturals) {
		for _, a := range sv.naturals[k] {
			out = append(out, option{keys: a, natural: true})
		}
	}
	seen := map[string]bool{}
	var uniq []option
	for _, o := range out {
		o.name = o.keys.String()
		if !seen[o.name] {
			seen[o.name] = true
			uniq = append(uniq, o)
		}
	}
	return uniq
}

// String is the assignment as "path=value" pairs, sorted.
func (a assignment) String() string {
	var ps []string
	for c, v := range a {
		ps = append(ps, valuetree.PathString(c.path)+"="+v)
	}
	sort.Strings(ps)
	return strings.Join(ps, ",")
}

// sorted returns the assignment's keys by path.
func (a assignment) sorted() []*candidate {
	out := make([]*candidate, 0, len(a))
	for c := range a {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return valuetree.PathString(out[i].path) < valuetree.PathString(out[j].path) })
	return out
}

func (a assignment) with(b assignment) assignment {
	out := assignment{}
	for c, v := range a {
		out[c] = v
	}
	for c, v := range b {
		out[c] = v
	}
	return out
}

// compatible reports whether b sets no key of a to another value, and
// no key that was dropped.
func compatible(a lookuper, b assignment) bool {
	for c, v := range b {
		if c.dropped || c.unusable != "" {
			return false
		}
		if w, ok := a.get(c); ok && w != v {
			return false
		}
	}
	return true
}

// touched returns the fields the keys of b drive, sorted.
func (sv *solver) touched(b assignment) []int {
	seen := map[int]bool{}
	for c := range b {
		for k := range c.slots {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

// wrong returns the first field driven by a key of b whose value under a
// (which holds b) is not its rewritten value, or -1.
func (sv *solver) wrong(a lookuper, b assignment) int {
	for _, k := range sv.touched(b) {
		if v, ok := sv.eval(k, a); !ok || v != sv.s.fields[k].want {
			return k
		}
	}
	return -1
}

// closure adds to b, while some field its keys drive comes out wrong, a
// natural assignment of that field compatible with a and b, and returns
// the keys to add, or false when some field cannot be set right.
func (sv *solver) closure(a, b assignment) (assignment, bool) {
	for {
		all := union{a, b}
		k := sv.wrong(all, b)
		if k < 0 {
			return b, true
		}
		grown := false
		for _, n := range sv.naturals[k] {
			if !compatible(all, n) {
				continue
			}
			adds := false
			for c := range n {
				if _, ok := all.get(c); !ok {
					adds = true
				}
			}
			if adds {
				b, grown = b.with(n), true
				break
			}
		}
		if !grown {
			return nil, false
		}
	}
}

// greedy chooses keys: at each step the option that moves the most image
// fields not yet moved and sets every field its keys drive right (a shared
// registry key before per-image keys), then natural values before others,
// then the fewest new keys, then global keys (Helm's values shared with
// subcharts, and with what the chart echoes of them: Istio's global.hub,
// which the sidecar injector reads, before istiod's own hub), then the
// shortest values, then the paths, so that the result is stable.
func (sv *solver) greedy() assignment {
	opts := sv.options()
	a := assignment{}
	moved := map[int]bool{}
	for {
		var best assignment
		var bestOpt option
		bestGain, bestNew, bestGlobals, bestLen := 0, 0, 0, 0
		live := opts[:0]
		for _, o := range opts {
			// An option that clashes with the keys chosen, or moves no
			// field not yet moved, never will: drop it.
			if !compatible(a, o.keys) {
				continue
			}
			gain := 0
			for _, k := range sv.touched(o.keys) {
				if sv.s.fields[k].moves() && !moved[k] {
					gain++
				}
			}
			if gain == 0 && !o.natural {
				continue
			}
			live = append(live, o)
			b := o.keys
			if o.natural {
				var ok bool
				if b, ok = sv.closure(a, b); !ok {
					continue
				}
				gain = 0
				for _, k := range sv.touched(b) {
					if sv.s.fields[k].moves() && !moved[k] {
						gain++
					}
				}
			} else if sv.wrong(union{a, b}, b) >= 0 {
				continue
			}
			if gain == 0 {
				continue
			}
			added, globals, length := 0, 0, 0
			for c, v := range b {
				if _, ok := a[c]; !ok {
					added++
					length += len(v)
					if c.path[0] == "global" {
						globals++
					}
				}
			}
			better := best == nil || gain > bestGain ||
				gain == bestGain && (o.natural && !bestOpt.natural ||
					o.natural == bestOpt.natural && (added < bestNew ||
						added == bestNew && (globals > bestGlobals ||
							globals == bestGlobals && (length < bestLen ||
								length == bestLen && o.name < bestOpt.name))))
			if better {
				best, bestOpt, bestGain, bestNew, bestGlobals, bestLen = b, o, gain, added, globals, length
			}
		}
		opts = live
		if best == nil {
			return a
		}
		for c, v := range best {
			a[c] = v
		}
		for _, k := range sv.touched(best) {
			if sv.s.fields[k].moves() {
				moved[k] = true
			}
		}
	}
}

// covered returns the moving fields the assignment sets right.
func (sv *solver) covered(a assignment) map[int]bool {
	out := map[int]bool{}
	for _, k := range sv.touched(a) {
		if f := sv.s.fields[k]; f.moves() {
			if v, ok := sv.eval(k, a); ok && v == f.want {
				out[k] = true
			}
		}
	}
	return out
}

func (a assignment) changes() []Setting {
	var out []Setting
	for _, c := range a.sorted() {
		out = append(out, Setting{Path: c.path, Value: a[c]})
	}
	return out
}
