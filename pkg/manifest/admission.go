package manifest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file is the table of admission placeholders: image values that are
// not images but placeholders a platform's admission webhook replaces when
// it creates the Pod. Rewriting one would break it (Istio's gateway pulls
// "sea.hub:5000/library/auto" and never starts) and listing it would cache
// an image that does not exist, so rehost leaves it as written, does not
// list it, and notes the image the platform puts in its place, from the
// platform's configuration where the input holds it: that image is the
// one to mirror.

// placeholder is an entry of the table.
type placeholder struct {
	// value is the placeholder image value.
	value string
	// injects reports whether the Pod (template) whose metadata is meta
	// asks the platform to replace it.
	injects func(meta *yaml.Node) bool
	// op names the platform in the note, and says what it injects when
	// the input does not hold its configuration.
	op *OperatorKind
	// config returns, for a document that holds the platform's
	// configuration, the image it injects and where it read it ("" if
	// the document is no such configuration).
	config func(doc *yaml.Node) (image, from string)
}

// placeholders is the table.
//
// Istio: the gateway chart renders its proxy container with "image: auto"
// in a Pod template labelled sidecar.istio.io/inject: "true"; the sidecar
// injector replaces the container with its proxy
// (https://istio.io/latest/docs/setup/additional-setup/gateway/). A Pod
// asks for injection with that label or annotation, or with an istio.io/rev
// label. The proxy image comes from the injector's values, which istiod's
// chart renders as JSON into the "values" entry of the istio-sidecar-injector
// ConfigMap (istio-sidecar-injector-REVISION for a revision):
// global.proxy.image when it holds a "/", else
// global.hub/global.proxy.image:global.tag, with "-" global.variant after
// the tag when set.
var admissionPlaceholders = []placeholder{{
	value: "auto",
	injects: func(meta *yaml.Node) bool {
		labels, annotations := resolve(get(meta, "labels")), resolve(get(meta, "annotations"))
		return scalar(get(labels, "sidecar.istio.io/inject")) == "true" ||
			scalar(get(annotations, "sidecar.istio.io/inject")) == "true" ||
			scalar(get(labels, "istio.io/rev")) != ""
	},
	op: &OperatorKind{Operator: "Istio's sidecar injector",
		Starts: `image "auto" is its placeholder, left as written and not listed; it injects its proxy image, global.hub/global.proxy.image:global.tag of istiod's values (the istio-sidecar-injector ConfigMap, not in this input)`},
	config: istioInjectorImage,
}}

// injectedPrefix names the notes that carry a platform's injected image
// from its configuration to the notes of its placeholders (see
// resolvePlaceholders).
const injectedPrefix = "\x00injects "

// admission takes the admission placeholders out of the fields of the
// object in node and returns the other fields, and a note for each
// placeholder and for the platform configuration node holds.
func admission(node *yaml.Node, fields []Field) ([]Field, []note) {
	var notes []note
	var out []Field
	for _, f := range fields {
		if p := placeholderOf(node, f); p != nil {
			notes = append(notes, note{Field: f, op: p.op})
			continue
		}
		out = append(out, f)
	}
	for _, p := range admissionPlaceholders {
		if img, from := p.config(node); img != "" {
			notes = append(notes, note{Field: Field{Node: node}, op: &OperatorKind{Operator: injectedPrefix + p.op.Operator, Starts: img + "\x00" + from}})
		}
	}
	return out, notes
}

// placeholderOf returns the entry of the table a field's value is, or nil.
func placeholderOf(root *yaml.Node, f Field) *placeholder {
	if f.Type == TypeEmbedded || f.Type == TypeRegistry || f.Ref != "" {
		return nil
	}
	v := resolve(f.Node)
	if v == nil || v.Kind != yaml.ScalarNode {
		return nil
	}
	var p *placeholder
	for i := range admissionPlaceholders {
		if admissionPlaceholders[i].value == v.Value {
			p = &admissionPlaceholders[i]
		}
	}
	if p == nil {
		return nil
	}
	// ...containers[i].image: the Pod template is above its spec.
	segs := splitPath(f.Path)
	n := len(segs)
	if n < 3 || segs[n-1] != "image" || !strings.HasPrefix(segs[n-2], "[") || !isContainerListKey(segs[n-3]) {
		return nil
	}
	spec := segs[:n-3]
	if len(spec) == 0 || spec[len(spec)-1] != "spec" {
		return nil
	}
	tmpl := lookupSegs(root, spec[:len(spec)-1])
	if tmpl == nil || !p.injects(resolve(get(tmpl, "metadata"))) {
		return nil
	}
	return p
}

// istioInjectorImage returns the proxy image of an istio-sidecar-injector
// ConfigMap's values.
func istioInjectorImage(doc *yaml.Node) (string, string) {
	m := lookupSegs(doc, nil)
	if scalar(get(m, "kind")) != "ConfigMap" {
		return "", ""
	}
	meta := resolve(get(m, "metadata"))
	name := scalar(get(meta, "name"))
	if name != "istio-sidecar-injector" && !strings.HasPrefix(name, "istio-sidecar-injector-") {
		return "", ""
	}
	var vals struct {
		Global struct {
			Hub     string      `json:"hub"`
			Tag     interface{} `json:"tag"`
			Variant string      `json:"variant"`
			Proxy   struct {
				Image string `json:"image"`
			} `json:"proxy"`
		} `json:"global"`
	}
	if err := json.Unmarshal([]byte(scalar(get(resolve(get(m, "data")), "values"))), &vals); err != nil {
		return "", ""
	}
	g := vals.Global
	img := g.Proxy.Image
	if img == "" {
		return "", ""
	}
	if !strings.Contains(img, "/") {
		if g.Hub == "" || g.Tag == nil {
			return "", ""
		}
		img = fmt.Sprintf("%s/%s:%v", g.Hub, img, g.Tag)
		if g.Variant != "" {
			img += "-" + g.Variant
		}
	}
	from := "global.hub, global.proxy.image and global.tag of ConfigMap "
	if ns := scalar(get(meta, "namespace")); ns != "" {
		from += ns + "/"
	}
	return img, from + name + " values"
}

// resolvePlaceholders fills in, in the notes of placeholders, the image
// their platform injects, from the first configuration met, and drops the
// notes that carried it.
func resolvePlaceholders(notes []OperatorNote) []OperatorNote {
	injected := map[string]OperatorNote{}
	out := make([]OperatorNote, 0, len(notes))
	for _, n := range notes {
		if op, ok := strings.CutPrefix(n.Operator, injectedPrefix); ok {
			injected[op] = n
			continue
		}
		out = append(out, n)
	}
	for i, n := range out {
		if c, ok := injected[n.Operator]; ok {
			img, from, _ := strings.Cut(c.Starts, "\x00")
			where := c.Location.File
			if c.Location.Line > 0 {
				where += ":" + strconv.Itoa(c.Location.Line)
			}
			out[i].Starts = fmt.Sprintf(`image "auto" is its placeholder, left as written and not listed; it injects %s (%s, %s)`, img, from, where)
		}
	}
	return out
}
