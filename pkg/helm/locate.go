package helm

import (
	"strings"

	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// locate sets the Line of each manifest: where its content starts in the
// output of its template file. Helm's release keeps each document trimmed
// and sorted by kind, not where it stood, so the templates are rendered a
// second time with the values of the install (ch has been through its
// dependency processing already) and each document is found, verbatim,
// in its template's output. A document that is not found there (one that
// calls a random function, such as genCA or randAlphaNum) keeps Line 0,
// and its lines count from its first line. The CRDs of crds/ are their
// files, from line 1.
func locate(ms []rendered.Manifest, ch *chart.Chart, vals map[string]interface{}, install *action.Install, cfg *action.Configuration) {
	if len(ms) == 0 {
		return
	}
	crds := map[string]bool{}
	for _, c := range ch.CRDObjects() {
		crds[c.Filename] = true
	}
	caps := cfg.Capabilities
	if caps == nil {
		caps = chartutil.DefaultCapabilities
	}
	opts := chartutil.ReleaseOptions{Name: install.ReleaseName, Namespace: install.Namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(ch, vals, opts, caps)
	if err != nil {
		return
	}
	var e engine.Engine
	files, err := e.Render(ch, top)
	if err != nil {
		return
	}
	used := map[string][]int{} // offsets found already, per template
	for i := range ms {
		m := &ms[i]
		if crds[m.Name] {
			m.Line = 1
			continue
		}
		out, ok := files[m.Name]
		if !ok || m.Content == "" {
			continue
		}
		if off := find(out, m.Content, used[m.Name]); off >= 0 {
			used[m.Name] = append(used[m.Name], off)
			m.Line = 1 + strings.Count(out[:off], "\n")
		}
	}
}

// find returns the offset of the first occurrence of doc in s that is not
// in used (a template may render the same document twice), or -1.
func find(s, doc string, used []int) int {
	for from := 0; from <= len(s); {
		i := strings.Index(s[from:], doc)
		if i < 0 {
			return -1
		}
		off := from + i
		taken := false
		for _, u := range used {
			taken = taken || u == off
		}
		if !taken {
			return off
		}
		from = off + 1
	}
	return -1
}
