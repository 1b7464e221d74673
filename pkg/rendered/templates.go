package rendered

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/yamlnode"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// InstallOrder returns the order in which Helm 3.22 installs resources by
// kind, and `helm template` prints them: its releaseutil.InstallOrder.
// Other Helm versions differ at the edges (3.9 has no PriorityClass, 4.x
// adds the webhook configurations last); see FromTemplates.
func InstallOrder() []string {
	return []string{
		"PriorityClass",
		"Namespace",
		"NetworkPolicy",
		"ResourceQuota",
		"LimitRange",
		"PodSecurityPolicy",
		"PodDisruptionBudget",
		"ServiceAccount",
		"Secret",
		"SecretList",
		"ConfigMap",
		"StorageClass",
		"PersistentVolume",
		"PersistentVolumeClaim",
		"CustomResourceDefinition",
		"ClusterRole",
		"ClusterRoleList",
		"ClusterRoleBinding",
		"ClusterRoleBindingList",
		"Role",
		"RoleList",
		"RoleBinding",
		"RoleBindingList",
		"Service",
		"DaemonSet",
		"Pod",
		"ReplicationController",
		"ReplicaSet",
		"Deployment",
		"HorizontalPodAutoscaler",
		"StatefulSet",
		"Job",
		"CronJob",
		"IngressClass",
		"Ingress",
		"APIService",
	}
}

// kindOrder compares kinds as Helm's releaseutil lessByKind does: kinds of
// the order by their rank, before the others, which sort by kind.
type kindOrder map[string]int

func newKindOrder(kinds []string) kindOrder {
	m := make(kindOrder, len(kinds))
	for i, k := range kinds {
		if _, ok := m[k]; !ok {
			m[k] = i
		}
	}
	return m
}

func (o kindOrder) less(a, b string) bool {
	i, aok := o[a]
	j, bok := o[b]
	switch {
	case !aok && !bok:
		return a < b
	case !aok:
		return false
	case !bok:
		return true
	}
	return i < j
}

// hookEvents are the events of the helm.sh/hook annotation, lower case, as
// Helm spells them in a release; Helm skips a hook with any other event.
var hookEvents = map[string]string{
	"pre-install":   "pre-install",
	"post-install":  "post-install",
	"pre-delete":    "pre-delete",
	"post-delete":   "post-delete",
	"pre-upgrade":   "pre-upgrade",
	"post-upgrade":  "post-upgrade",
	"pre-rollback":  "pre-rollback",
	"post-rollback": "post-rollback",
	"test":          "test",
	"test-success":  "test", // Helm 2's name
}

// HookAnnotation is the annotation that makes a resource a Helm hook.
const HookAnnotation = "helm.sh/hook"

// notesSuffix ends the name of a chart's NOTES.txt template.
const notesSuffix = "NOTES.txt"

// docSep is Helm's document separator (releaseutil.SplitManifests).
var docSep = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

// FromTemplates builds the Chart that `helm template --include-crds`
// prints from the output of the template engine of any Helm version:
// files maps each template's name, as Helm names it
// ("web/templates/deployment.yaml", "web/charts/db/templates/sts.yaml"),
// to its rendered text, as Helm 3's engine.Render returns it. Add the
// files of the crds/ directories of the chart and its subcharts under
// their names ("web/crds/crd.yaml"; with Helm, chart.CRDObjects():
// Filename and File.Data) to include them. meta gives the chart's name and
// version and the image annotations of the chart and of the subcharts its
// values enable. order is the caller's Helm's install order by kind
// (releaseutil.InstallOrder...); none is Helm 3.22's, InstallOrder.
//
// As Helm 3 does, FromTemplates drops the NOTES.txt files, the partials
// (files named _*) and the files that render to nothing; splits each
// template into documents on "---" lines, trimmed (Helm 4 splits and trims
// a little differently: the same documents but for their trailing white
// space); sorts the templates by name and the documents by kind in install
// order, kinds not in it last, by kind; and marks the hooks (resources
// with the helm.sh/hook annotation), which come after the other resources,
// sorted by kind too. The CRDs come first, each file as it is: those of
// the chart, then its subcharts' by name (Helm's order among subcharts is
// that of its loader's map: not defined). A hook of an unknown event is
// left out, as Helm leaves it out, with a warning in Warnings. A document
// whose head (apiVersion, kind, metadata.name, metadata.annotations) Helm
// could not read is an error naming the template and the line.
func FromTemplates(meta Metadata, files map[string]string, order ...string) (*Chart, error) {
	if order == nil {
		order = InstallOrder()
	}
	kinds := newKindOrder(order)
	out := &Chart{Format: Format, Name: meta.Name, Version: meta.Version}
	var crds, templates []string
	for name := range files {
		_, rest := splitChartPath(name)
		switch {
		case strings.HasSuffix(name, notesSuffix):
		case strings.HasPrefix(rest, "crds/"):
			crds = append(crds, name)
		default:
			templates = append(templates, name)
		}
	}
	sort.Slice(crds, func(i, j int) bool { return pathLess(crds[i], crds[j]) })
	sort.Strings(templates)

	for _, name := range crds {
		out.Manifests = append(out.Manifests, Manifest{Name: name, Content: files[name], Line: 1})
	}
	var generic, hooks []Manifest
	var genericKinds, hookKinds []string
	for _, name := range templates {
		text := files[name]
		if strings.HasPrefix(path.Base(name), "_") || strings.TrimSpace(text) == "" {
			continue
		}
		for _, d := range splitDocuments(text) {
			h, err := readHead(d.content)
			if err != nil {
				return nil, &manifest.Error{Location: rewrite.Location{File: name, Line: d.line + err.line - 1}, Err: fmt.Errorf("YAML parse error (Helm could not install it): %s", err.msg)}
			}
			m := Manifest{Name: name, Content: d.content, Line: d.line}
			events, isHook := h.annotations[HookAnnotation]
			if !isHook {
				generic, genericKinds = append(generic, m), append(genericKinds, h.kind)
				continue
			}
			known := true
			for _, e := range strings.Split(events, ",") {
				ev, ok := hookEvents[strings.ToLower(strings.TrimSpace(e))]
				known = known && ok
				m.Hook = append(m.Hook, ev)
			}
			if !known {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s:%d: skipping unknown hook: %s (Helm neither installs nor prints it)", name, d.line, bounded.Quote(events)))
				continue
			}
			hooks, hookKinds = append(hooks, m), append(hookKinds, h.kind)
		}
	}
	out.Manifests = append(out.Manifests, kinds.sort(generic, genericKinds)...)
	out.Manifests = append(out.Manifests, kinds.sort(hooks, hookKinds)...)

	var err error
	if out.Images, err = meta.AnnotatedImages(); err != nil {
		return nil, err
	}
	return out, nil
}

// sort sorts ms, whose kinds are kinds, stably in the order.
func (o kindOrder) sort(ms []Manifest, kinds []string) []Manifest {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return o.less(kinds[idx[a]], kinds[idx[b]]) })
	out := make([]Manifest, len(ms))
	for i, k := range idx {
		out[i] = ms[k]
	}
	return out
}

// splitChartPath splits a file name as Helm names it into the chart's full
// path and the file's path in that chart: "web/charts/db/crds/a.yaml" ->
// "web/charts/db", "crds/a.yaml".
func splitChartPath(name string) (chart, rest string) {
	parts := strings.Split(name, "/")
	i := 1
	for i+1 < len(parts) && parts[i] == "charts" {
		i += 2
	}
	if i > len(parts) {
		i = len(parts)
	}
	return strings.Join(parts[:i], "/"), strings.Join(parts[i:], "/")
}

// pathLess orders file names as a directory walk meets them: by chart,
// a chart before its subcharts, then by path component.
func pathLess(a, b string) bool {
	ca, ra := splitChartPath(a)
	cb, rb := splitChartPath(b)
	if ca != cb {
		return componentsLess(ca, cb)
	}
	return componentsLess(ra, rb)
}

func componentsLess(a, b string) bool {
	pa, pb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

// document is one document of a template's output: trimmed, as Helm keeps
// it, and the line of the output where it starts.
type document struct {
	content string
	line    int
}

// splitDocuments splits a template's output into documents as Helm's
// releaseutil.SplitManifests does, with the line where each starts.
func splitDocuments(text string) []document {
	start := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	trimmed := strings.TrimSpace(text)
	var out []document
	prev := 0
	add := func(from, to int) {
		d := trimmed[from:to]
		if d == "" {
			return
		}
		lead := len(d) - len(strings.TrimLeftFunc(d, unicode.IsSpace))
		off := start + from + lead
		out = append(out, document{content: strings.TrimSpace(d), line: 1 + strings.Count(text[:off], "\n")})
	}
	for _, m := range docSep.FindAllStringIndex(trimmed, -1) {
		add(prev, m[0])
		prev = m[1]
	}
	add(prev, len(trimmed))
	return out
}

// head is what Helm reads of a document (releaseutil.SimpleHead).
type head struct {
	kind        string
	annotations map[string]string
}

// headError is an error in a document's head, at a line of the document.
type headError struct {
	line int
	msg  string
}

// readHead reads a document's head as Helm does, with its errors: a
// document that is not a map, or whose apiVersion, kind, metadata.name or
// annotations are not strings, fails Helm's install.
func readHead(doc string) (head, *headError) {
	var h head
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		line, msg, _ := yamlnode.ErrorLine(err)
		return h, &headError{line: line, msg: msg}
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return h, nil // only comments
	}
	n := root.Content[0]
	if isNull(n) {
		return h, nil
	}
	fail := func(v *yaml.Node, field, want string) *headError {
		if field != "" {
			field += ": "
		}
		return &headError{line: v.Line, msg: fmt.Sprintf("%swant %s, got %s", field, want, describeNode(v))}
	}
	if n.Kind != yaml.MappingNode {
		return h, fail(n, "", "a map")
	}
	str := func(field string, v *yaml.Node) (string, *headError) {
		if v == nil || isNull(v) {
			return "", nil
		}
		// A date stays a string in Helm's YAML-to-JSON conversion.
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!str" && v.Tag != "!!timestamp") {
			return "", fail(v, field, "a string")
		}
		return v.Value, nil
	}
	var err *headError
	if _, err = str("apiVersion", lookup(n, "apiVersion")); err != nil {
		return h, err
	}
	if h.kind, err = str("kind", lookup(n, "kind")); err != nil {
		return h, err
	}
	md := lookup(n, "metadata")
	if md == nil || isNull(md) {
		return h, nil
	}
	if md.Kind != yaml.MappingNode {
		return h, fail(md, "metadata", "a map")
	}
	if _, err = str("metadata.name", lookup(md, "name")); err != nil {
		return h, err
	}
	an := lookup(md, "annotations")
	if an == nil || isNull(an) {
		return h, nil
	}
	if an.Kind != yaml.MappingNode {
		return h, fail(an, "metadata.annotations", "a map")
	}
	h.annotations = map[string]string{}
	for i := 0; i+1 < len(an.Content); i += 2 {
		k := an.Content[i].Value
		if h.annotations[k], err = str("metadata.annotations."+k, yamlnode.Resolve(an.Content[i+1])); err != nil {
			return h, err
		}
	}
	return h, nil
}

// lookup returns the value of key in the mapping n, aliases resolved,
// the last one when the key is repeated (yamlnode.Last: Helm reads kind
// and metadata through a YAML-to-JSON conversion, which keeps the last);
// nil if absent.
func lookup(n *yaml.Node, key string) *yaml.Node {
	return yamlnode.Resolve(yamlnode.Last(n, key))
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
