package helm

import (
	"path"
	"sort"
	"strings"
	"unicode"

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
// dependency processing already), the output of each template is cut into
// documents as Helm cuts it, and each document is found among them by its
// content, verbatim: the n-th of the same content at the n-th place. A
// document that is not found there (one that calls a random function,
// such as genCA or randAlphaNum) keeps Line 0, and its lines count from
// its first line. The CRDs of crds/ are their files, from line 1. The
// outputs of the templates of a draft (drafted, when not nil) are those of
// that second rendering, rendered beside the install: they are used
// instead.
func locate(ms []rendered.Manifest, ch *chart.Chart, vals map[string]interface{}, install *action.Install, cfg *action.Configuration, drafted map[string]string) {
	if len(ms) == 0 {
		return
	}
	crds := map[string]bool{}
	for _, c := range ch.CRDObjects() {
		crds[c.Filename] = true
	}
	if drafted != nil {
		setLines(ms, drafted, crds)
		return
	}
	caps := cfg.Capabilities
	if caps == nil {
		caps = chartutil.DefaultCapabilities
	}
	top, err := chartutil.ToRenderValues(ch, vals, installOptions(install), caps)
	if err != nil {
		return
	}
	var e engine.Engine
	files, err := e.Render(ch, top)
	if err != nil {
		return
	}
	setLines(ms, files, crds)
}

// setLines sets the Line of each manifest from the outputs of the
// templates (files) and the CRD files (crds).
func setLines(ms []rendered.Manifest, files map[string]string, crds map[string]bool) {
	docs := map[string]map[string][]int{} // per template: the lines of its documents, by content
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
		byContent, ok := docs[m.Name]
		if !ok {
			byContent = split(out)
			docs[m.Name] = byContent
		}
		if lines := byContent[m.Content]; len(lines) > 0 {
			m.Line = lines[0]
			byContent[m.Content] = lines[1:]
		}
	}
}

// draft renders the templates of ch, a copy of the chart and vals, a copy
// of the values, as install will render the chart (Helm's dependency
// processing, then the template engine with the install's capabilities
// and release, installCapabilities and installOptions), and returns their
// documents, each with its line, as split cuts them, after the CRDs of
// the chart's crds/ directories when includeCRDs (as install writes them,
// each file whole, from line 1), and the outputs of the templates (for
// locate): nil when they do not render. It logs what the install's
// rendering logs.
func draft(ch *chart.Chart, vals map[string]interface{}, caps *chartutil.Capabilities, opts chartutil.ReleaseOptions, includeCRDs bool) (*rendered.Draft, map[string]string) {
	files := func() map[string]string {
		if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
			return nil
		}
		top, err := chartutil.ToRenderValues(ch, vals, opts, caps)
		if err != nil {
			return nil
		}
		var e engine.Engine
		out, err := e.Render(ch, top)
		if err != nil {
			return nil
		}
		return out
	}()
	if files == nil {
		return nil, nil
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if base := path.Base(name); strings.HasPrefix(base, "_") || strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	d := &rendered.Draft{Format: rendered.Format}
	if includeCRDs { // as install writes them: each file whole, first
		for _, crd := range ch.CRDObjects() {
			d.Manifests = append(d.Manifests, rendered.Manifest{Name: crd.Filename, Content: string(crd.File.Data), Line: 1})
		}
	}
	for _, name := range names {
		for _, doc := range documents(files[name]) {
			d.Manifests = append(d.Manifests, rendered.Manifest{Name: name, Content: doc.content, Line: doc.line})
		}
	}
	return d, files
}

// installCapabilities are the capabilities install renders with, in a
// client-only run (action.Install.RunWithContext).
func installCapabilities(install *action.Install) *chartutil.Capabilities {
	caps := chartutil.DefaultCapabilities.Copy()
	if install.KubeVersion != nil {
		caps.KubeVersion = *install.KubeVersion
	}
	// Copy is shallow: appended to in place, the default versions would
	// be install's too.
	caps.APIVersions = append(caps.APIVersions[:len(caps.APIVersions):len(caps.APIVersions)], install.APIVersions...)
	return caps
}

// installOptions are the release options install renders with.
func installOptions(install *action.Install) chartutil.ReleaseOptions {
	return chartutil.ReleaseOptions{Name: install.ReleaseName, Namespace: install.Namespace, Revision: 1, IsInstall: true}
}

// split cuts a template's output into documents as Helm does
// (releaseutil.SplitManifests: the output trimmed, cut at its "---"
// separators, each piece trimmed, empty ones dropped) and returns the
// line where each starts, by content, in order: the same document twice
// (a template may render it twice) has two lines. It takes time linear in out (a
// search of each document in the whole output took time proportional to
// the output for each document, quadratic in all).
func split(out string) map[string][]int {
	docs := map[string][]int{}
	for _, d := range documents(out) {
		docs[d.content] = append(docs[d.content], d.line)
	}
	return docs
}

// located is a document of a template's output and its line there.
type located struct {
	content string
	line    int
}

// documents cuts a template's output into documents as Helm does (see
// split), in order, each with its line.
func documents(out string) []located {
	var docs []located
	start := len(out) - len(strings.TrimLeftFunc(out, unicode.IsSpace))
	trimmed := strings.TrimSpace(out)
	line, at := 1, 0 // the line of offset at in out
	prev := 0
	for _, sep := range append(separators(trimmed), [2]int{len(trimmed), len(trimmed)}) {
		piece := trimmed[prev:sep[0]]
		pieceStart := start + prev
		prev = sep[1]
		doc := strings.TrimSpace(piece)
		if doc == "" {
			continue
		}
		off := pieceStart + len(piece) - len(strings.TrimLeftFunc(piece, unicode.IsSpace))
		line += strings.Count(out[at:off], "\n")
		at = off
		docs = append(docs, located{content: doc, line: line})
	}
	return docs
}

// separators finds the document separators of a trimmed template output
// where Helm's releaseutil.SplitManifests finds them, with its regular
// expression (?:^|\s*\n)---\s* (RE2's \s: tab, newline, form feed,
// carriage return, space), as FindAllStringIndex would: "---" at the
// start, or right after a newline, with the white space before that
// newline and after the dashes. It is that regular expression without the
// engine, which took a third of the time of locating.
func separators(t string) [][2]int {
	var out [][2]int
	from := 0
	for {
		i := strings.Index(t[from:], "---")
		if i < 0 {
			return out
		}
		p := from + i
		start := -1
		switch {
		case p == 0:
			start = 0
		case p-1 >= from && t[p-1] == '\n':
			start = p - 1
			for start > from && isRE2Space(t[start-1]) {
				start--
			}
		}
		if start < 0 {
			from = p + 1
			continue
		}
		end := p + 3
		for end < len(t) && isRE2Space(t[end]) {
			end++
		}
		out = append(out, [2]int{start, end})
		from = end
	}
}

// isRE2Space is RE2's \s.
func isRE2Space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
