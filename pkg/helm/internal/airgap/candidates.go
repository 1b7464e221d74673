package airgap

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/helm/internal/valuetree"
	"helm.sh/helm/v3/pkg/chart"
)

// candidate is a value probed for the image fields it drives.
type candidate struct {
	path []interface{}
	was  string
	// absent: the key is absent or null; was is then "".
	absent bool

	// Learnt by the probe:
	drives map[int]string // field index -> value rendered with the marker
	docs   map[int]bool   // documents the probe changed
	slots  map[int]slot   // field index -> where the key is in it
	// unusable says why the key cannot be used at all ("" if it can):
	// its render fails, it changes something besides image fields, ...
	unusable string
	// solo is the value that moves its images by itself, covers the
	// fields it moves so; noSolo says why there is none.
	solo   string
	covers []int
	noSolo string
	// dropped: a check failed with it.
	dropped bool
}

// nameEnd is where the repository part of a reference ends (its tag or
// digest separator), or len(ref).
func nameEnd(ref string) int {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return i
	}
	return len(ref)
}

// registryKey matches the names of keys that hold a registry host, which
// charts leave empty to mean "the default".
var registryKey = regexp.MustCompile(`(?i)(registry|^hub$)`)

// blankKey matches the names of the keys that are candidates when empty,
// null or absent: registries, and repositories (traefik's image.repository
// is null in its values, and its template defaults it to "traefik").
var blankKey = regexp.MustCompile(`(?i)(registry|^hub$|^repository$|^repo$)`)

// valuesRef finds the registry-like keys the templates read, so that a
// registry key a chart reads but does not declare is probed too.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)

// candidates lists the values to probe: the string leaves of the merged
// values that occur, starting a path component, in the repository part of
// an image that moves; the empty or null keys named like a registry or a
// repository, and those the templates read that the values do not hold;
// and the keys that put an operator's absent registry setting in the map
// the templates write whole into the object (see parentCandidates).
func (s *Search) candidates() []*candidate {
	var moving []string
	for _, f := range s.fields {
		if f.moves() {
			moving = append(moving, f.value)
			if f.token != "" && f.token != f.value {
				moving = append(moving, f.token)
			}
		}
	}
	if len(moving) == 0 {
		return nil
	}
	subcharts := s.subchartPaths()
	var out []*candidate
	seen := map[string]bool{}
	add := func(c *candidate) {
		k := valuetree.PathString(c.path)
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	s.walkValues(subcharts, func(path []interface{}, v interface{}) {
		last, _ := path[len(path)-1].(string)
		switch v := v.(type) {
		case nil:
			if blankKey.MatchString(last) {
				add(&candidate{path: path, absent: true})
			}
		case string:
			if v == "" {
				if blankKey.MatchString(last) {
					add(&candidate{path: path})
				}
				return
			}
			if strings.ContainsAny(v, " \t\r\n") {
				return // not part of a reference
			}
			for _, img := range moving {
				if occursInName(img, v) {
					add(&candidate{path: path, was: v})
					return
				}
			}
		}
	})
	// Registry and repository keys the templates read that the values do
	// not hold.
	var refs func(c *chart.Chart, prefix []interface{})
	refs = func(c *chart.Chart, prefix []interface{}) {
		for _, t := range c.Templates {
			for _, m := range valuesRef.FindAllStringSubmatch(string(t.Data), -1) {
				segs := strings.Split(strings.TrimPrefix(m[1], "."), ".")
				if !blankKey.MatchString(segs[len(segs)-1]) {
					continue
				}
				var p []interface{}
				if segs[0] != "global" {
					p = append(p, prefix...)
				}
				for _, sg := range segs {
					p = append(p, sg)
				}
				if v, present := valuetree.Lookup(s.merged, p); (!present || v == nil) && s.settable(p) {
					add(&candidate{path: p, absent: true})
				}
			}
		}
		for _, d := range c.Dependencies() {
			refs(d, append(prefix[:len(prefix):len(prefix)], d.Name()))
		}
	}
	refs(s.resolved, nil)
	for _, c := range s.parentCandidates(subcharts) {
		add(c)
	}
	return out
}

// subchartPaths returns the value paths of the subcharts (chartKey).
func (s *Search) subchartPaths() map[string]bool {
	subcharts := map[string]bool{}
	var walkCharts func(c *chart.Chart, prefix string)
	walkCharts = func(c *chart.Chart, prefix string) {
		for _, d := range c.Dependencies() {
			p := prefix + "\x00" + d.Name()
			subcharts[p] = true
			walkCharts(d, p)
		}
	}
	walkCharts(s.resolved, "")
	return subcharts
}

// walkValues calls leaf for every leaf of the merged values (a scalar,
// null, or an empty map or list) and mapOf for every map, in key order,
// skipping the subcharts' copies of the globals.
func (s *Search) walkValues(subcharts map[string]bool, leaf func(path []interface{}, v interface{}), mapOf ...func(path []interface{}, m map[string]interface{})) {
	var walk func(v interface{}, path []interface{})
	walk = func(v interface{}, path []interface{}) {
		if m, ok := valuetree.AsMap(v); ok {
			for _, f := range mapOf {
				f(path, m)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if k == "global" && len(path) > 0 && subcharts[chartKey(path)] {
					continue // a subchart's copy of the globals
				}
				walk(m[k], append(path[:len(path):len(path)], k))
			}
			return
		}
		if l, ok := v.([]interface{}); ok {
			for i, e := range l {
				walk(e, append(path[:len(path):len(path)], i))
			}
			return
		}
		if len(path) > 0 {
			leaf(path, v)
		}
	}
	walk(s.merged, nil)
}

// settable reports whether the overlay can set a key at path: every part
// of it that the values hold is a map (or a list, for an index).
func (s *Search) settable(path []interface{}) bool {
	var cur interface{} = s.merged
	for _, seg := range path[:len(path)-1] {
		switch seg := seg.(type) {
		case string:
			m, ok := valuetree.AsMap(cur)
			if !ok {
				return false
			}
			next, ok := m[seg]
			if !ok || next == nil {
				return true
			}
			cur = next
		case int:
			l, ok := cur.([]interface{})
			if !ok || seg >= len(l) {
				return false
			}
			cur = l[seg]
		}
	}
	_, ok := valuetree.AsMap(cur)
	return ok || cur == nil
}

// parentCandidates finds, for each operator's registry setting that is
// absent from the base rendering and that rehost rewrite adds (tigera's
// Installation spec.registry), the maps of the values that the template
// writes whole into the map the setting goes in: tigera's chart renders
// "spec: {{ omit .Values.installation "enabled" | toYaml }}", and its
// values.yaml has no installation.registry. Such a map is recognised by
// its entries: at least one, and at least half of its own and of the
// rendered map's, are equal in both. The candidate is the setting's key in
// that map, absent.
func (s *Search) parentCandidates(subcharts map[string]bool) []*candidate {
	var out []*candidate
	for _, f := range s.fields {
		if f.parent == nil || !f.moves() {
			continue
		}
		rendered := map[string]string{}
		for k, v := range f.parent {
			rendered[k] = canonical(v)
		}
		best := 0
		var paths [][]interface{}
		s.walkValues(subcharts, func([]interface{}, interface{}) {}, func(path []interface{}, m map[string]interface{}) {
			score := 0
			for k, v := range m {
				if r, ok := rendered[k]; ok && r == canonical(v) {
					score++
				}
			}
			if score == 0 || 2*score < len(m) || 2*score < len(rendered) || score < best {
				return
			}
			if score > best {
				best, paths = score, nil
			}
			paths = append(paths, append([]interface{}(nil), path...))
		})
		for _, p := range paths {
			for _, a := range f.add {
				p = append(p, a)
			}
			if v, present := valuetree.Lookup(s.merged, p); (!present || v == nil) && s.settable(p) {
				out = append(out, &candidate{path: p, absent: true})
			}
		}
	}
	return out
}

// canonical is a value as JSON, for comparing values decoded from YAML by
// different decoders (numbers as int or float64).
func canonical(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func chartKey(path []interface{}) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte(0)
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// occursInName reports whether v occurs in ref starting a path component
// and overlapping its repository part.
func occursInName(ref, v string) bool {
	end := nameEnd(ref)
	for i := 0; i < end; {
		j := strings.Index(ref[i:], v)
		if j < 0 {
			return false
		}
		j += i
		if j >= end {
			return false
		}
		if j == 0 || ref[j-1] == '/' {
			return true
		}
		i = j + 1
	}
	return false
}
