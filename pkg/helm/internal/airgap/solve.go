package airgap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"github.com/rehost/rehost/pkg/rendered"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
)

// Result is what a search found: the keys to set and the image fields no
// key moves.
type Result struct {
	// Chart and Version name the chart.
	Chart, Version string
	// Keys are the keys to set, sorted by path; Overlay sets them.
	Keys    []Key
	Overlay map[string]interface{}
	// Unmoved are the image fields no key moves.
	Unmoved []Unmoved
	// Warnings are Helm's warnings from the render as given.
	Warnings []string
	// Candidates is how many keys were probed, ProbedAlone how many of
	// them in a render of their own, Renders how many renders the search
	// made in all.
	Candidates, ProbedAlone, Renders int
}

// Key is a key the overlay sets.
type Key struct {
	Path []interface{}
	// Value is the value it sets (Raw when not a string: a family's
	// switch), Was the value it had.
	Value, Was string
	Raw        interface{}
	// Images are the images it moves, sorted.
	Images []Move
	// Why says why a key that moves no image is set (a family's switch).
	Why string
}

// Move is an image a key moves (helm.Move).
type Move struct {
	From, To string
	With     []string
}

func (m Move) String() string {
	s := m.From + " -> " + m.To
	if len(m.With) > 0 {
		s += ", with " + strings.Join(m.With, ", ")
	}
	return s
}

// Unmoved is an image field no key moves (helm.UnmovedImage).
type Unmoved struct {
	Image, Target                string
	Template                     string
	Line                         int
	Kind, Namespace, Name, Field string
	Reason                       string
}

// Solve runs the search: it lists the candidates, probes them, chooses
// the keys and checks them. A check that fails drops the chosen keys that
// touched what came out wrong and chooses again (at least one key goes
// each time), at most maxChecks times; after that nothing is set and
// every image is reported.
func (s *Search) Solve() (*Result, error) {
	cands := s.candidates()
	p := &prober{Search: s}
	p.probeAll(cands)
	sv := s.newSolver(cands)
	bad := map[int]string{} // field -> why the check failed
	var switches []*Family
	var chosen assignment
	checked := false
	for round := 0; round < maxChecks; round++ {
		chosen = sv.greedy()
		if len(chosen) == 0 {
			checked = true
			break
		}
		set := withSwitches(chosen.changes(), switches)
		r, err := s.Render(s.Overlay(set))
		if f := FailedFamily(err); f != nil && !hasFamily(switches, f) {
			// The relocated images fail the family's check: set its
			// switch, and only then.
			switches = append(switches, f)
			set = withSwitches(chosen.changes(), switches)
			r, err = s.Render(s.Overlay(set))
		}
		covered := sv.covered(chosen)
		blame, failed := s.check(r, err, chosen, covered, set)
		if len(blame) == 0 {
			checked = true
			break
		}
		for _, c := range blame {
			c.dropped = true
			for k := range c.drives {
				bad[k] = "setting " + valuetree.PathString(c.path) + " along with the other keys does not give the target (" + strings.Join(failed, "; ") + ")"
			}
		}
	}
	if !checked {
		for c := range chosen {
			for k := range c.drives {
				if bad[k] == "" {
					bad[k] = fmt.Sprintf("no set of keys that moves it checked out in %d renders", maxChecks)
				}
			}
		}
		chosen, switches = assignment{}, nil
	}
	return s.result(cands, p.probedAlone, sv, chosen, switches, bad), nil
}

// check compares the rendering with the overlay to the rewritten base
// rendering, document by document; it returns the chosen keys to blame
// for what differs.
func (s *Search) check(r *rendered.Chart, rerr error, chosen assignment, covered map[int]bool, set []Setting) ([]*candidate, []string) {
	keys := chosen.sorted()
	if rerr != nil {
		msg := rerr.Error()
		if strings.Contains(msg, "YAML parse error on") && strings.HasPrefix(s.mapper.Root(), "[") {
			// The values are right; the chart writes them unquoted.
			msg += fmt.Sprintf("; the chart writes the value without quotes, and a value starting with %s (an IPv6 registry) is not a plain YAML scalar: quote it in the template ({{ ... | quote }}), or give the registry a host name", s.mapper.Root()[:strings.IndexByte(s.mapper.Root(), ']')+1])
		}
		return keys, []string{msg}
	}
	if len(r.Manifests) != len(s.base.Manifests) {
		return keys, []string{fmt.Sprintf("%d documents instead of %d", len(r.Manifests), len(s.base.Manifests))}
	}
	blamed := map[*candidate]bool{}
	var failed []string
	for i, m := range r.Manifests {
		// A document with no moved field must render as before;
		// one with moved fields must render as rewritten, except for
		// the fields no key moves.
		if m.Name == s.base.Manifests[i].Name && s.docOK(i, m.Content, covered, set) {
			continue
		}
		failed = append(failed, m.Name)
		any := false
		for _, c := range keys {
			if c.docs[i] {
				blamed[c] = true
				any = true
			}
		}
		if !any {
			for _, c := range keys {
				blamed[c] = true
			}
		}
	}
	var out []*candidate
	for _, c := range keys {
		if blamed[c] {
			out = append(out, c)
		}
	}
	return out, failed
}

// docOK reports whether document i, rendered with the overlay as got,
// is what the overlay must give: the rewritten document, except that the
// image fields no chosen key moves keep their values, and that the values
// set may be echoed (see echoOnly). Equal bytes pass at once; otherwise
// the documents must be equal as YAML.
func (s *Search) docOK(i int, got string, covered map[int]bool, set []Setting) bool {
	all := true
	for _, k := range s.docFields[i] {
		if s.fields[k].moves() && !covered[k] {
			all = false
		}
	}
	if all && got == s.rewritten[i] {
		return true
	}
	n, fs, err := s.masked(got)
	if err != nil {
		return false
	}
	if n == nil {
		n = &yaml.Node{}
	}
	b, err := s.baseMasked(i)
	if err != nil || len(fs) != len(s.docFields[i]) || !sameNode(n, b) && !echoOnly(b, n, set) && !s.volatile(i) {
		return false
	}
	for j, f := range fs {
		k := s.docFields[i][j]
		want := s.fields[k].value
		if covered[k] || !s.fields[k].moves() {
			want = s.fields[k].want
		}
		if f.Path != s.fields[k].path || f.Value != want {
			return false
		}
	}
	return true
}

// result builds the result from the chosen keys and switches.
func (s *Search) result(cands []*candidate, probedAlone int, sv *solver, chosen assignment, switches []*Family, bad map[int]string) *Result {
	o := &Result{Chart: s.chart.Source.Name(), Warnings: s.base.Warnings, Candidates: len(cands), ProbedAlone: probedAlone, Renders: s.renders}
	if s.chart.Source.Metadata != nil {
		o.Version = s.chart.Source.Metadata.Version
	}
	covered := sv.covered(chosen)
	by := map[int][]*candidate{} // covered field -> the chosen keys that move it
	for _, c := range chosen.sorted() {
		for k := range c.slots {
			if covered[k] {
				by[k] = append(by[k], c)
			}
		}
	}
	for _, c := range chosen.sorted() {
		k := Key{Path: c.path, Value: chosen[c], Was: c.was}
		seen := map[string]bool{}
		for _, f := range sortedKeys(c.slots) {
			if !covered[f] {
				continue
			}
			m := Move{From: s.fields[f].value, To: s.fields[f].want}
			if m.From == "" { // an operator's registry setting, absent or empty
				m.From = fmt.Sprintf("%s %s: %s unset", s.fields[f].kind, s.fields[f].obj, s.fields[f].path)
			}
			for _, o := range by[f] {
				if o != c {
					m.With = append(m.With, valuetree.PathString(o.path))
				}
			}
			if !seen[m.String()] {
				seen[m.String()] = true
				k.Images = append(k.Images, m)
			}
		}
		sort.Slice(k.Images, func(i, j int) bool { return k.Images[i].String() < k.Images[j].String() })
		o.Keys = append(o.Keys, k)
	}
	for _, f := range switches {
		o.Keys = append(o.Keys, Key{Path: f.Path, Value: fmt.Sprint(f.Value), Why: f.why(s.mapper.Root()), Raw: f.Value})
	}
	sort.Slice(o.Keys, func(i, j int) bool {
		return valuetree.PathString(o.Keys[i].Path) < valuetree.PathString(o.Keys[j].Path)
	})
	o.Overlay = s.Overlay(Settings(o.Keys))
	templates := map[string]string{}
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, t := range c.Templates {
			templates[c.ChartFullPath()+"/"+t.Name] = string(t.Data)
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(s.resolved)
	for k, f := range s.fields {
		if !f.moves() || covered[k] {
			continue
		}
		img := f.value
		if img == "" {
			img = `""`
		}
		u := Unmoved{Image: img, Target: f.want, Template: s.base.Manifests[f.doc].Name,
			Kind: f.kind, Namespace: f.namespace, Name: f.obj, Field: f.path}
		u.Line = literalLine(templates[u.Template], f.value)
		switch {
		case bad[k] != "":
			u.Reason = bad[k]
		default:
			u.Reason = s.whyUnmoved(cands, sv, k, u.Line > 0)
		}
		o.Unmoved = append(o.Unmoved, u)
	}
	return o
}

func (s *Search) whyUnmoved(cands []*candidate, sv *solver, k int, literal bool) string {
	var reasons []string
	unprobed := 0
	for _, c := range cands {
		_, drives := c.drives[k]
		if c.unusable == s.unprobed() {
			unprobed++
		}
		why := c.unusable
		if why == "" {
			why = c.noSolo
		}
		if why != "" && (drives || c.drives == nil && c.was != "" && occursInName(s.fields[k].value, c.was)) {
			reasons = append(reasons, valuetree.PathString(c.path)+": "+why)
		}
	}
	if unprobed > 0 {
		reasons = append(reasons, fmt.Sprintf("%d candidate value(s) %s", unprobed, s.unprobed()))
	}
	if len(reasons) > 0 {
		return "the values that drive it cannot move it (" + strings.Join(reasons, "; ") + ")"
	}
	// Empty or absent keys that failed before they showed what they drive.
	var blank []string
	n := 0
	for _, c := range cands {
		if c.was == "" && c.drives == nil && c.unusable != "" && c.unusable != s.unprobed() {
			if n++; n <= 3 {
				blank = append(blank, valuetree.PathString(c.path)+": "+c.unusable)
			}
		}
	}
	if n > 3 {
		blank = append(blank, fmt.Sprintf("and %d more", n-3))
	}
	if n > 0 {
		return "no value that drives it was found; empty or absent keys that could not be probed: " + strings.Join(blank, "; ")
	}
	if ds := sv.drivers[k]; len(ds) > 0 {
		var names []string
		for _, c := range ds {
			names = append(names, valuetree.PathString(c.path))
		}
		return fmt.Sprintf("no values of the keys that drive it (%s), alone or together, give %s", strings.Join(names, ", "), s.fields[k].want)
	}
	if literal {
		return "hard-coded in the template: no value drives it"
	}
	return "no value drives it (built in the templates)"
}

// literalLine is the 1-based line of the template that holds ref (or its
// repository part) literally, or 0.
func literalLine(tpl, ref string) int {
	for _, s := range []string{ref, ref[:nameEnd(ref)]} {
		if s == "" {
			continue
		}
		if i := strings.Index(tpl, s); i >= 0 {
			return strings.Count(tpl[:i], "\n") + 1
		}
	}
	return 0
}

// Settings are the settings that set the keys.
func Settings(keys []Key) []Setting {
	var out []Setting
	for _, k := range keys {
		out = append(out, Setting{Path: k.Path, Value: k.Value, Raw: k.Raw})
	}
	return out
}
