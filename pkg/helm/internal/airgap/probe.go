package airgap

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rehost/rehost/pkg/rendered"
)

// probeMarker stands for a candidate in the values its probe rendered
// (candidate.drives).
const probeMarker = "\x00probe\x00"

// markerValue is the value a candidate is probed with: a token unique to
// the probe (i, or -1 alone) in front of its value, so that the image
// keeps its shape (a whole reference keeps its tag, and an embedded
// reference is still found), or a host name in place of an empty value.
func markerValue(c *candidate, i int) string {
	tok := "rehostprobe"
	if i >= 0 {
		tok += strconv.Itoa(i)
	}
	tok += "x"
	if c.was == "" {
		return tok + ".invalid"
	}
	return tok + c.was
}

// prober renders the chart with markers in place of candidates' values
// and records, in each candidate, which image fields it drives and how.
type prober struct {
	*Search
	// probedAlone counts the candidates probed in a render of their own.
	probedAlone int
	// switches are the family switches the probes render with, once a
	// probe failed a family's check.
	switches []*Family
}

// afterProbes is how many renders the search keeps for after the probes
// (see the package doc): the render that tells volatile documents, the
// checks, and a family's switch in a probe and in a check.
func afterProbes() int { return 1 + maxChecks + 2*len(families) }

// canProbe reports whether one more probe render stays within the ceiling.
func (s *prober) canProbe() bool { return s.renders+1+afterProbes() <= s.MaxRenders }

// unprobed is the reason of a candidate the ceiling left unprobed.
func (s *Search) unprobed() string {
	return fmt.Sprintf("not probed: the search stops at %d renders", s.MaxRenders)
}

// probeAll learns which image fields each candidate drives and how.
//
// The candidates that hold a value are probed together in one render,
// each replaced by a marker of its own: emptiness decides a template's
// branches, and none changes. The empty and absent ones are probed
// together in another (see probeBlank). What a group's render cannot
// attribute (a field rebuilt otherwise than by substitution, a document
// changed beyond its image fields, a failed render) is probed again in
// two halves (a candidate whose marker shows beyond image fields, alone;
// empty keys that showed nothing beside keys that drove images, together
// again, since one may hide another: hub | default global.hub), and so
// on while the renders the groups saved pay for it: a group render is made only when the renders made so far, plus that one,
// plus one for each candidate still to learn, stay within N + ProbeSlack.
// The rest are probed one a render. So the probes cost at most N +
// ProbeSlack renders, and candidates that behave alike one render.
func (s *prober) probeAll(cands []*candidate) {
	type group struct {
		cs    []*candidate
		blank bool
	}
	var valued, blank []*candidate
	for _, c := range cands {
		if c.was == "" {
			blank = append(blank, c)
		} else {
			valued = append(valued, c)
		}
	}
	var queue []group
	if len(valued) > 0 {
		queue = append(queue, group{valued, false})
	}
	if len(blank) > 0 {
		queue = append(queue, group{blank, true})
	}
	budget := len(cands) + ProbeSlack
	used, pending := 0, len(cands)
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if len(g.cs) == 1 || used+1+pending > budget {
			for _, c := range g.cs {
				pending--
				if !s.canProbe() {
					c.unusable = s.unprobed()
					continue
				}
				used++
				s.probedAlone++
				s.probeAlone(c)
			}
			continue
		}
		if !s.canProbe() {
			for _, c := range g.cs {
				c.unusable = s.unprobed()
			}
			pending -= len(g.cs)
			continue
		}
		used++
		var solo, rest, quiet []*candidate
		if g.blank {
			solo, rest, quiet = s.probeBlank(g.cs)
		} else {
			solo, rest = s.probeValued(g.cs)
		}
		pending -= len(g.cs) - len(solo) - len(rest) - len(quiet)
		for _, c := range solo {
			queue = append(queue, group{[]*candidate{c}, g.blank})
		}
		if len(quiet) > 0 {
			queue = append(queue, group{quiet, g.blank})
		}
		switch {
		case len(rest) == 1:
			queue = append(queue, group{rest, g.blank})
		case len(rest) > 1:
			h := len(rest) / 2
			queue = append(queue, group{rest[:h], g.blank}, group{rest[h:], g.blank})
		}
	}
}

// probeRender renders the chart with the changes, and with the switches
// of the chart families whose checks a probe failed: a render that fails
// a family's check for the first time is made retry with its switch. It
// returns the values set, switches included.
func (s *prober) probeRender(changes []Setting) (*rendered.Chart, []Setting, error) {
	set := withSwitches(changes, s.switches)
	r, err := s.Render(s.Overlay(set))
	if f := FailedFamily(err); f != nil && !hasFamily(s.switches, f) {
		s.switches = append(s.switches, f)
		set = withSwitches(changes, s.switches)
		r, err = s.Render(s.Overlay(set))
	}
	return r, set, err
}

// groupRender renders a group of candidates, each set to its marker
// value, and compares the rendering with the base rendering: it returns
// the image fields that changed, with their new values; the candidates to
// probe solo, whose marker shows beyond image fields; the candidates to
// probe retry, which a document that changed otherwise may hide; and
// false when the rendering as a whole teaches nothing (it fails, or a
// document changed in a way no marker explains).
func (s *prober) groupRender(batch []*candidate) (changed map[int]string, solo, retry map[int]bool, ok bool) {
	changes := make([]Setting, len(batch))
	for i, c := range batch {
		changes[i] = Setting{Path: c.path, Value: markerValue(c, i)}
	}
	r, set, err := s.probeRender(changes)
	if err != nil || len(r.Manifests) != len(s.base.Manifests) {
		return nil, nil, nil, false
	}
	changed, solo, retry = map[int]string{}, map[int]bool{}, map[int]bool{}
	for i, m := range r.Manifests {
		if m.Name != s.base.Manifests[i].Name {
			return nil, nil, nil, false
		}
		fields, _, beyond, err := s.compareDoc(i, m, set)
		if err == nil && beyond != nil {
			if ps := tokensIn(batch, s.maskedText(m.Content)); len(ps) > 0 {
				for _, p := range ps {
					solo[p] = true
				}
				beyond = nil
			}
		}
		if err != nil || beyond != nil {
			ps := tokensIn(batch, m.Content)
			if len(ps) == 0 {
				for p, c := range batch {
					if c.was != "" && strings.Contains(s.base.Manifests[i].Content, c.was) {
						ps = append(ps, p)
					}
				}
			}
			if len(ps) == 0 {
				return nil, nil, nil, false
			}
			for _, p := range ps {
				retry[p] = true
			}
			continue
		}
		for k, v := range fields {
			changed[k] = v
		}
	}
	return changed, solo, retry, true
}

// token is the part of a candidate's marker value unique to the probe:
// a template that transforms the value ("library/nginx" into a label
// "library_nginx") usually keeps it.
func token(i int) string { return "rehostprobe" + strconv.Itoa(i) + "x" }

// tokensIn returns the candidates of the batch whose token occurs in text.
func tokensIn(batch []*candidate, text string) []int {
	var out []int
	for i := range batch {
		if strings.Contains(text, token(i)) {
			out = append(out, i)
		}
	}
	return out
}

// probeValued probes candidates that hold a value together and returns
// those to probe solo and those it could not learn. A field is
// attributed to the markers it holds, each with the others put back to
// their values; a field that changed without a marker is blamed on the
// candidates whose value it holds.
func (s *prober) probeValued(batch []*candidate) (solo, rest []*candidate) {
	changed, showsBeyond, retry, ok := s.groupRender(batch)
	if !ok {
		return nil, batch
	}
	marker := func(i int) string { return markerValue(batch[i], i) }
	present := func(text string) []int {
		var out []int
		for i := range batch {
			if strings.Contains(text, marker(i)) {
				out = append(out, i)
			}
		}
		return out
	}
	// suspects are the candidates whose value occurs in text, or all.
	suspects := func(text string) []int {
		var out []int
		for i, c := range batch {
			if strings.Contains(text, c.was) {
				out = append(out, i)
			}
		}
		if len(out) == 0 {
			for i := range batch {
				out = append(out, i)
			}
		}
		return out
	}
	for _, k := range sortedKeys(changed) {
		v := changed[k]
		ps := present(v)
		if len(ps) == 0 {
			// Changed, but by no marker (a value transformed on its
			// way): probe retry the candidates found in it.
			for _, p := range suspects(s.fields[k].value) {
				retry[p] = true
			}
			continue
		}
		back := v
		for _, p := range ps {
			back = strings.ReplaceAll(back, marker(p), batch[p].was)
		}
		if back != s.fields[k].value {
			for _, p := range ps {
				retry[p] = true
			}
			continue
		}
		for _, p := range ps {
			own := v
			for _, o := range ps {
				if o != p {
					own = strings.ReplaceAll(own, marker(o), batch[o].was)
				}
			}
			batch[p].recordDrive(k, strings.ReplaceAll(own, marker(p), probeMarker), s.fields[k].doc)
		}
	}
	return s.resolveGroup(batch, showsBeyond, retry)
}

// probeBlank probes empty and absent candidates together, each set to a
// host name of its own, and returns those to probe solo and those it
// could not learn. Setting them switches a template's branches, so a
// field is attributed only when it holds markers and can be split into
// the markers' places and what the template writes without them in
// exactly one way. A key set in the same render may hide another ("hub |
// default global.hub" shows hub's marker only), so when some keys drove
// images, those that showed nothing are returned as quiet, to be probed
// together retry without the others.
func (s *prober) probeBlank(batch []*candidate) (solo, rest, quiet []*candidate) {
	changed, showsBeyond, retry, ok := s.groupRender(batch)
	if !ok {
		return nil, batch, nil
	}
	marker := func(i int) string { return markerValue(batch[i], i) }
	for _, k := range sortedKeys(changed) {
		v := changed[k]
		var ps []int
		var markers []string
		for i := range batch {
			if strings.Contains(v, marker(i)) {
				ps = append(ps, i)
				markers = append(markers, marker(i))
			}
		}
		if len(ps) == 0 {
			return nil, batch, nil // a branch changed it, but whose?
		}
		segs, order := splitMarkers(v, markers)
		sols := fillMarkers(segs, order, len(ps), s.fields[k].value, 8)
		if len(sols) > 1 {
			// registry and repository keys side by side split
			// "docker.io/grafana/tempo" two ways: a registry key holds
			// the host.
			sols = hostSplits(sols, batch, ps, refHost(s.fields[k].token))
		}
		if len(sols) != 1 {
			for _, p := range ps {
				retry[p] = true
			}
			continue
		}
		for j, p := range ps {
			own := v
			for o, q := range ps {
				if o != j {
					own = strings.ReplaceAll(own, marker(q), sols[0][o])
				}
			}
			batch[p].recordDrive(k, strings.ReplaceAll(own, marker(p), probeMarker), s.fields[k].doc)
		}
	}
	drove := false
	for i, c := range batch {
		if c.drives != nil && !showsBeyond[i] && !retry[i] {
			drove = true
		}
	}
	if drove {
		var loud []*candidate
		var loudShowsBeyond, loudRetry = map[int]bool{}, map[int]bool{}
		for i, c := range batch {
			if c.drives == nil && !showsBeyond[i] && !retry[i] {
				quiet = append(quiet, c)
				continue
			}
			if showsBeyond[i] {
				loudShowsBeyond[len(loud)] = true
			}
			if retry[i] {
				loudRetry[len(loud)] = true
			}
			loud = append(loud, c)
		}
		batch, showsBeyond, retry = loud, loudShowsBeyond, loudRetry
	}
	solo, rest = s.resolveGroup(batch, showsBeyond, retry)
	return solo, rest, quiet
}

// hostSplits keeps the solutions in which every key named like a registry
// holds the reference's host, when there is one.
func hostSplits(sols [][]string, batch []*candidate, ps []int, host string) [][]string {
	if host == "" {
		return sols
	}
	var out [][]string
	for _, sol := range sols {
		ok, named := true, false
		for j, p := range ps {
			last, _ := batch[p].path[len(batch[p].path)-1].(string)
			if registryKey.MatchString(last) {
				named = true
				if sol[j] != host {
					ok = false
				}
			}
		}
		if ok && named {
			out = append(out, sol)
		}
	}
	return out
}

// refHost is the registry host a reference names explicitly, or "".
func refHost(ref string) string {
	if i := strings.IndexByte(ref, '/'); i > 0 && (strings.ContainsAny(ref[:i], ".:") || ref[:i] == "localhost") {
		return ref[:i]
	}
	return ""
}

// resolveGroup learns the candidates of a group render that are not to be
// probed retry, and returns, in order, those to probe solo and the
// others, forgetting what the group render taught them.
func (s *prober) resolveGroup(batch []*candidate, showsBeyond, retry map[int]bool) (solo, rest []*candidate) {
	for i, c := range batch {
		switch {
		case showsBeyond[i]:
			c.drives, c.docs = nil, nil
			solo = append(solo, c)
		case retry[i]:
			c.drives, c.docs = nil, nil
			rest = append(rest, c)
		default:
			s.fitSlots(c)
		}
	}
	return solo, rest
}

// splitMarkers splits text at the markers: segs are the text between
// them, order[j] the index of the marker between segs[j] and segs[j+1].
func splitMarkers(text string, markers []string) (segs []string, order []int) {
	for {
		at, which := -1, -1
		for j, m := range markers {
			if i := strings.Index(text, m); i >= 0 && (at < 0 || i < at) {
				at, which = i, j
			}
		}
		if at < 0 {
			return append(segs, text), order
		}
		segs = append(segs, text[:at])
		order = append(order, which)
		text = text[at+len(markers[which]):]
	}
}

// maxMarkers is the most markers one field may hold for probeBlank to
// split it.
const maxMarkers = 4

// fillMarkers finds the values of the markers (n of them, each the same
// wherever it occurs) that make segs, with the markers of order between
// them, spell s; at most limit solutions.
func fillMarkers(segs []string, order []int, n int, s string, limit int) [][]string {
	var out [][]string
	if len(order) > maxMarkers {
		return nil // not worth the search: probe them apart
	}
	vals := make([]string, n)
	set := make([]bool, n)
	var match func(j int, rest string)
	match = func(j int, rest string) {
		if len(out) >= limit {
			return
		}
		if !strings.HasPrefix(rest, segs[j]) {
			return
		}
		rest = rest[len(segs[j]):]
		if j == len(order) {
			if rest == "" {
				out = append(out, append([]string(nil), vals...))
			}
			return
		}
		h := order[j]
		if set[h] {
			if strings.HasPrefix(rest, vals[h]) {
				match(j+1, rest[len(vals[h]):])
			}
			return
		}
		set[h] = true
		for l := 0; l <= len(rest); l++ {
			vals[h] = rest[:l]
			match(j+1, rest[l:])
		}
		set[h] = false
		vals[h] = ""
	}
	match(0, s)
	return out
}

// probeAlone renders the chart with the candidate alone replaced by a marker,
// learns which image fields it drives, and solves for the value that moves
// them.
func (s *prober) probeAlone(c *candidate) {
	mv := markerValue(c, -1)
	r, set, err := s.probeRender([]Setting{{Path: c.path, Value: mv}})
	if err != nil {
		c.unusable = "rendering with it changed fails: " + err.Error()
		return
	}
	changed, docs, err := s.compare(r, set)
	if err != nil {
		c.unusable = err.Error()
		return
	}
	for k, v := range changed {
		changed[k] = strings.ReplaceAll(v, mv, probeMarker)
	}
	c.drives, c.docs = changed, docs
	s.fitSlots(c)
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
