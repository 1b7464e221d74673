// Package rendered holds a Helm chart after rendering: its manifests in the
// order `helm template` prints them, hooks included, and the images its
// Chart.yaml files declare in their image annotations (helm.sh/images,
// images, artifacthub.io/images). It turns them into streams for a
// [manifest.Rewriter] and into images.
//
// The package does not import Helm, whose packages cost tens of
// milliseconds of initialisation at every start of a program that links
// them, and whose version a program such as sealer has chosen already.
// [FromTemplates] builds a [Chart] from what any Helm version's template
// engine renders; [PostRenderer] rewrites a release in any Helm's install
// or upgrade action. Package [github.com/rehost/rehost/pkg/helm] renders
// charts into a [Chart] with Helm 3.22; the rehost command receives the
// same [Chart] as JSON from its rehost-helm helper and so starts fast when
// it renders nothing.
package rendered

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

// Format is the version of the form of a [Chart] (JSON) and of a [Draft]
// that rehost-helm writes. It changes whenever that form changes
// incompatibly, so that rehost refuses the output of a rehost-helm from
// another release. Format 2 added the Draft that rehost-helm writes
// before the Chart when asked; format 3 writes the Draft in a form of its
// own ([Draft.Write]), leaves out of the Chart after it the names and
// contents its Draft holds ([Manifest.Drafted]), and leaves out an empty
// name or content of any manifest.
const Format = 3

// DraftEnv is the environment variable with which rehost asks
// rehost-helm for a [Draft] before the [Chart] ("1"). A rehost-helm of an
// older release ignores it and writes a Chart of an older Format, which
// rehost refuses as such.
const DraftEnv = "REHOST_HELM_DRAFT"

// DefaultKubeVersion is the Kubernetes version charts are rendered for
// when none is given (.Capabilities.KubeVersion, and the version a chart's
// kubeVersion constraint is checked against): the minor version of the
// Kubernetes libraries Helm v3.22.0 is built with (k8s.io/client-go
// v0.37.0 is Kubernetes 1.37). Helm's own default, v1.20.0, is older than
// what most current charts accept ("chart requires kubeVersion: >=
// 1.22.0-0 which is incompatible with Kubernetes v1.20.0"). It is defined
// here, in the package that does not import Helm, so that rehost's --help
// states it; pkg/helm uses it and its tests keep it in step with the
// client-go Helm links.
const DefaultKubeVersion = "1.37.0"

// OriginAnnotation is the rewrite.Location Origin of images that come from
// a chart's image annotations.
const OriginAnnotation = "annotation"

// sourcePrefix is how `helm template` starts every document.
const sourcePrefix = "---\n# Source: "

// Chart is a rendered chart.
type Chart struct {
	// Format is the version of this structure's JSON form, [Format].
	Format int `json:"format"`
	// Name is the chart's name.
	Name string `json:"name"`
	// Version is the chart's version, when known.
	Version string `json:"version,omitempty"`
	// Manifests are the rendered documents in `helm template` order: the
	// CRDs of crds/ (when included), the templates in Helm's install order,
	// then the hooks.
	Manifests []Manifest `json:"manifests"`
	// Images are the images the image annotations declare, of the chart
	// and of every subchart its values enable.
	Images []AnnotatedImage `json:"images,omitempty"`
	// Warnings are Helm's warnings about the chart and its values ("skipped
	// value for x: Not a table."), each once, in order.
	Warnings []string `json:"warnings,omitempty"`
}

// Manifest is one rendered document.
type Manifest struct {
	// Name is the file it was rendered from, as Helm names it:
	// "mychart/templates/deployment.yaml",
	// "mychart/charts/sub/templates/job.yaml", "mychart/crds/crd.yaml".
	Name string `json:"name,omitempty"`
	// Content is the document, without the "# Source:" line.
	Content string `json:"content,omitempty"`
	// Line is the line of its template file's output where Content
	// starts, for errors and the image report; 0 when unknown, and then
	// lines count from the document's first line.
	Line int `json:"line,omitempty"`
	// Hook holds the helm.sh/hook events of a hook resource
	// ("pre-install", "test", ...); it is empty for ordinary resources.
	Hook []string `json:"hook,omitempty"`
	// Drafted, in the JSON form of a Chart that follows its [Draft], is
	// the number (from 1) of the draft's manifest whose name and content
	// this one has, which are then left out (Name and Content are empty):
	// the documents are written and read once, not twice
	// ([Chart.LeaveOutDrafted], [Chart.Undraft]). 0 otherwise.
	Drafted int `json:"drafted,omitempty"`
}

// Draft is the documents of a chart's templates as the template engine
// rendered them, before Helm sorts them, each with its template's name and
// its line there, without knowing which are hooks, after the CRD files of
// crds/ when the chart includes them: what rehost-helm can write a moment
// after it starts, while Helm's sorting (which parses every document)
// still runs. Its documents are those of the [Chart] that follows, but for
// a document that renders differently each time (a random function) and
// the documents Helm leaves out; a rewrite never depends on it
// ([Draft.Prepare]).
//
// rehost-helm writes it in a form of its own ([Draft.Write], [ReadDraft]),
// not as JSON.
type Draft struct {
	// Format is [Format].
	Format int
	// Manifests are the CRD files, each whole from line 1, then the
	// documents in the order of their templates' names, each template's
	// in its order.
	Manifests []Manifest
}

// Prepare has rw process the draft's documents in the background
// ([manifest.Rewriter.Prepare]), as [Chart.RewriteDocuments] will (write:
// with a writer), so that it finds the documents of the chart that are
// the draft's done.
func (d *Draft) Prepare(rw *manifest.Rewriter, write bool) {
	parts := make([]manifest.Part, len(d.Manifests))
	for i, m := range d.Manifests {
		parts[i] = m.part(false)
	}
	rw.Prepare(parts, write)
}

// LeaveOutDrafted leaves out of c's manifests the contents that d, the
// draft written before c, holds: each manifest of the same name, line and
// content as one of d's refers to it instead, with its line only
// ([Manifest.Drafted]).
func (c *Chart) LeaveOutDrafted(d *Draft) {
	type at struct {
		name string
		line int
	}
	drafted := make(map[at]int, len(d.Manifests))
	for i, m := range d.Manifests {
		if _, ok := drafted[at{m.Name, m.Line}]; !ok && m.Line > 0 {
			drafted[at{m.Name, m.Line}] = i + 1
		}
	}
	for i := range c.Manifests {
		m := &c.Manifests[i]
		if k, ok := drafted[at{m.Name, m.Line}]; ok && m.Content == d.Manifests[k-1].Content {
			m.Name, m.Content, m.Drafted = "", "", k
		}
	}
}

// Undraft puts back the names and contents that the JSON form of c left
// out for those of d, the draft read before it ([Manifest.Drafted]). A
// manifest that refers to a manifest d does not have, or of another
// line, or that has a content or another name of its own, is an error,
// and so is one that refers to a draft when there is none (d nil).
func (c *Chart) Undraft(d *Draft) error {
	for i := range c.Manifests {
		m := &c.Manifests[i]
		if m.Drafted == 0 {
			continue
		}
		if d == nil {
			return fmt.Errorf("manifest %d (line %d) refers to a draft, and there was none", i+1, m.Line)
		}
		if m.Drafted < 0 || m.Drafted > len(d.Manifests) {
			return fmt.Errorf("manifest %d (line %d) refers to manifest %d of a draft of %d", i+1, m.Line, m.Drafted, len(d.Manifests))
		}
		if dm := d.Manifests[m.Drafted-1]; (m.Name != "" && dm.Name != m.Name) || dm.Line != m.Line || m.Content != "" {
			return fmt.Errorf("manifest %d (line %d) refers to manifest %d of the draft, %s line %d", i+1, m.Line, m.Drafted, dm.Name, dm.Line)
		}
		m.Name, m.Content, m.Drafted = d.Manifests[m.Drafted-1].Name, d.Manifests[m.Drafted-1].Content, 0
	}
	return nil
}

// IsHook reports whether the manifest is a hook resource, which Helm
// applies outside the release manifest and never passes to a
// post-renderer.
func (m Manifest) IsHook() bool { return len(m.Hook) > 0 }

// Text is the document as `helm template` writes it:
// "---\n# Source: NAME\nCONTENT\n".
func (m Manifest) Text() string { return sourcePrefix + m.Name + "\n" + m.Content + "\n" }

// AnnotatedImage is an image declared in an image annotation of a chart's
// Chart.yaml: helm.sh/images, images or artifacthub.io/images.
type AnnotatedImage struct {
	// Chart is the full path of the chart that declares it, as Helm names
	// it: "mychart" or "mychart/charts/sub".
	Chart string `json:"chart"`
	// Key is the annotation, AnnotationKey when empty.
	Key string `json:"key,omitempty"`
	// Index is the position of the entry in the annotation's list.
	Index int `json:"index"`
	// Name is the entry's name, if any.
	Name string `json:"name,omitempty"`
	// Image is the image reference as written.
	Image string `json:"image"`
	// Condition is the entry's condition (helm.sh/images), a
	// comma-separated list of values paths; see ConditionHolds.
	Condition string `json:"condition,omitempty"`
	// Whitelisted and Platforms are Artifact Hub's: the image is known to
	// have security issues that are accepted; the platforms it is built for
	// ("linux/amd64").
	Whitelisted bool     `json:"whitelisted,omitempty"`
	Platforms   []string `json:"platforms,omitempty"`
}

// Location is where the image is declared, for the image report.
func (a AnnotatedImage) Location() rewrite.Location {
	return rewrite.Location{
		File:   a.Chart + "/Chart.yaml",
		Name:   a.Name,
		Field:  fmt.Sprintf("annotations[%s][%d].image", cmp.Or(a.Key, AnnotationKey), a.Index),
		Origin: OriginAnnotation,
	}
}

// Documents returns the chart's documents as `helm template` prints them:
// their concatenation is its output byte for byte. Like `helm template`,
// it trims the trailing white space of the last ordinary (non-hook)
// document.
func (c *Chart) Documents() []string {
	last := c.lastOrdinary()
	out := make([]string, len(c.Manifests))
	for i, m := range c.Manifests {
		out[i] = m.text(i == last)
	}
	return out
}

// lastOrdinary is the index of the last ordinary (non-hook) manifest, -1
// when there is none.
func (c *Chart) lastOrdinary() int {
	for i := len(c.Manifests) - 1; i >= 0; i-- {
		if !c.Manifests[i].IsHook() {
			return i
		}
	}
	return -1
}

// text is Text, with the trailing white space of the content trimmed when
// trim is set (the last ordinary document of a chart).
func (m Manifest) text(trim bool) string {
	if trim {
		m.Content = strings.TrimRight(m.Content, " \t\r\n")
	}
	return m.Text()
}

// part is the manifest as a part of a rewrite: its text (trimmed when trim
// is set, see text) after the lines "---" and "# Source: NAME" that Helm
// puts before the document, which are not the template's.
func (m Manifest) part(trim bool) manifest.Part {
	d := m.text(trim)
	head := len(sourcePrefix) + len(m.Name) + 1
	return manifest.Part{Name: m.Name, Line: max(m.Line, 1), Head: d[:head], Text: d[head:]}
}

// WriteTo writes the chart's documents, as `helm template` prints them.
func (c *Chart) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, d := range c.Documents() {
		k, err := io.WriteString(w, d)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Template is the output of one template file.
type Template struct {
	// Name is the file's name, as in [Manifest].
	Name string
	// Text holds its documents, as `helm template --output-dir` writes
	// them to the file of that name.
	Text string
}

// Templates groups the documents by the file they were rendered from, in
// the order each file first appears, documents in the order of
// [Chart.Manifests].
func (c *Chart) Templates() []Template {
	var out []Template
	at := map[string]int{}
	for _, m := range c.Manifests {
		i, ok := at[m.Name]
		if !ok {
			i = len(out)
			at[m.Name] = i
			out = append(out, Template{Name: m.Name})
		}
		out[i].Text += m.Text()
	}
	return out
}

// AddTo adds the images of the chart's image annotations to rw's image
// set, and passes Helm's warnings to rw's warning function, each prefixed
// with the chart's name.
func (c *Chart) AddTo(rw *manifest.Rewriter) error {
	for _, msg := range c.Warnings {
		rw.Warn(fmt.Errorf("%s: %s", c.Name, msg))
	}
	for _, a := range c.Images {
		if err := rw.Add(a.Image, a.Location()); err != nil {
			return err
		}
	}
	return nil
}

// Rewrite rewrites every document with rw and writes them to w as
// `helm template` prints them (w nil: only collect the images), after
// AddTo. Each document is named after its template in errors and in the
// image report, with the line in that template's output.
func (c *Chart) Rewrite(w io.Writer, rw *manifest.Rewriter) error {
	if err := c.AddTo(rw); err != nil {
		return err
	}
	return c.RewriteDocuments(w, rw, "")
}

// ScanEnvImages adds to rw the ConfigMap keys that the chart's documents
// pass to containers as images through $(VAR)
// (manifest.Rewriter.ScanEnvImages), for a caller that rewrites or lists
// the chart in several calls.
func (c *Chart) ScanEnvImages(rw *manifest.Rewriter) error {
	for _, m := range c.Manifests {
		if strings.Contains(m.Content, "$(") {
			if err := rw.ScanEnvImages(strings.NewReader(m.Content)); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
		}
	}
	return nil
}

// RewriteDocuments rewrites the documents rendered from the template file
// named template, or all of them for "", and writes them to w as `helm
// template` prints them (w nil: only collect the images). Written for one
// template, they are the file of that name Templates gives.
func (c *Chart) RewriteDocuments(w io.Writer, rw *manifest.Rewriter, template string) error {
	// A ConfigMap of one template may hold an image that a container of
	// another receives through $(VAR): with one template at a time, the
	// whole chart is scanned for them first.
	if template != "" {
		if err := c.ScanEnvImages(rw); err != nil {
			return err
		}
	}
	last := c.lastOrdinary()
	var parts []manifest.Part
	for i, m := range c.Manifests {
		if template != "" && m.Name != template {
			continue
		}
		parts = append(parts, m.part(i == last))
	}
	// One pipeline for all documents: a chart of 20,000 documents costs
	// what a stream of 20,000 documents does.
	return rw.RewriteParts(w, parts)
}
