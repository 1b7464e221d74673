package corpus

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// sch is a hand-written schema node (the embedded container schema).
type sch struct {
	typ      string // object, array, string, integer, boolean, ios (int-or-string), quantities (map of int-or-string)
	props    []prop // sorted by name
	items    *sch
	img      bool // the description talks about images
	format   string
	pattern  string
	enum     []string
	req      []string
	listKeys []string
	def      string
}

type prop struct {
	name string
	s    *sch
}

func obj(props ...prop) *sch { return &sch{typ: "object", props: props} }
func arr(items *sch) *sch    { return &sch{typ: "array", items: items} }
func str() *sch              { return &sch{typ: "string"} }
func i32() *sch              { return &sch{typ: "integer", format: "int32"} }
func i64() *sch              { return &sch{typ: "integer", format: "int64"} }
func boolean() *sch          { return &sch{typ: "boolean"} }
func ios() *sch              { return &sch{typ: "ios"} }
func p(name string, s *sch) prop {
	return prop{name, s}
}

func (s *sch) withImg() *sch             { s.img = true; return s }
func (s *sch) required(r ...string) *sch { s.req = r; return s }
func (s *sch) keys(k ...string) *sch     { s.listKeys = k; return s }
func (s *sch) enumOf(e ...string) *sch   { s.enum = e; return s }
func (s *sch) deflt(d string) *sch       { s.def = d; return s }

// containerSchema is the schema of a Kubernetes container, as operators
// embed it in their CRDs, written from scratch.
func containerSchema() *sch {
	handler := func(extra ...prop) *sch {
		ps := []prop{
			p("exec", obj(p("command", arr(str())))),
			p("httpGet", obj(
				p("host", str()),
				p("httpHeaders", arr(obj(p("name", str()), p("value", str())).required("name", "value")).keys()),
				p("path", str()),
				p("port", ios()),
				p("scheme", str().enumOf("HTTP", "HTTPS")),
			).required("port")),
			p("sleep", obj(p("seconds", i64())).required("seconds")),
			p("tcpSocket", obj(p("host", str()), p("port", ios())).required("port")),
		}
		ps = append(ps, extra...)
		sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
		return obj(ps...)
	}
	probe := func() *sch {
		return handler(
			p("failureThreshold", i32()),
			p("grpc", obj(p("port", i32()), p("service", str().deflt(`""`))).required("port")),
			p("initialDelaySeconds", i32()),
			p("periodSeconds", i32()),
			p("successThreshold", i32()),
			p("terminationGracePeriodSeconds", i64()),
			p("timeoutSeconds", i32()),
		)
	}
	keyRef := func() *sch {
		return obj(p("key", str()), p("name", str().deflt(`""`)), p("optional", boolean())).required("key")
	}
	return obj(
		p("args", arr(str())),
		p("command", arr(str())),
		p("env", arr(obj(
			p("name", str()),
			p("value", str()),
			p("valueFrom", obj(
				p("configMapKeyRef", keyRef()),
				p("fieldRef", obj(p("apiVersion", str()), p("fieldPath", str())).required("fieldPath")),
				p("resourceFieldRef", obj(p("containerName", str()), p("divisor", ios()), p("resource", str())).required("resource")),
				p("secretKeyRef", keyRef()),
			)),
		).required("name")).keys("name")),
		p("envFrom", arr(obj(
			p("configMapRef", obj(p("name", str().deflt(`""`)), p("optional", boolean()))),
			p("prefix", str()),
			p("secretRef", obj(p("name", str().deflt(`""`)), p("optional", boolean()))),
		))),
		p("image", str().withImg()),
		p("imagePullPolicy", str().withImg()),
		p("lifecycle", obj(p("postStart", handler()), p("preStop", handler()), p("stopSignal", str()))),
		p("livenessProbe", probe()),
		p("name", str()),
		p("ports", arr(obj(
			p("containerPort", i32()),
			p("hostIP", str()),
			p("hostPort", i32()),
			p("name", str()),
			p("protocol", str().deflt("TCP")),
		).required("containerPort")).keys("containerPort", "protocol")),
		p("readinessProbe", probe()),
		p("resizePolicy", arr(obj(p("resourceName", str()), p("restartPolicy", str())).required("resourceName", "restartPolicy"))),
		p("resources", obj(
			p("claims", arr(obj(p("name", str()), p("request", str())).required("name")).keys("name")),
			p("limits", &sch{typ: "quantities"}),
			p("requests", &sch{typ: "quantities"}),
		)),
		p("restartPolicy", str()),
		p("securityContext", obj(
			p("allowPrivilegeEscalation", boolean()),
			p("appArmorProfile", obj(p("localhostProfile", str()), p("type", str())).required("type")),
			p("capabilities", obj(p("add", arr(str())), p("drop", arr(str())))),
			p("privileged", boolean()),
			p("procMount", str()),
			p("readOnlyRootFilesystem", boolean()),
			p("runAsGroup", i64()),
			p("runAsNonRoot", boolean()),
			p("runAsUser", i64()),
			p("seLinuxOptions", obj(p("level", str()), p("role", str()), p("type", str()), p("user", str()))),
			p("seccompProfile", obj(p("localhostProfile", str()), p("type", str())).required("type")),
			p("windowsOptions", obj(p("gmsaCredentialSpec", str()), p("gmsaCredentialSpecName", str()), p("hostProcess", boolean()), p("runAsUserName", str()))),
		)),
		p("startupProbe", probe()),
		p("stdin", boolean()),
		p("stdinOnce", boolean()),
		p("terminationMessagePath", str()),
		p("terminationMessagePolicy", str()),
		p("tty", boolean()),
		p("volumeDevices", arr(obj(p("devicePath", str()), p("name", str())).required("devicePath", "name")).keys("devicePath")),
		p("volumeMounts", arr(obj(
			p("mountPath", str()),
			p("mountPropagation", str()),
			p("name", str()),
			p("readOnly", boolean()),
			p("recursiveReadOnly", str()),
			p("subPath", str()),
			p("subPathExpr", str()),
		).required("mountPath", "name")).keys("mountPath")),
		p("workingDir", str()),
	).required("name")
}

var container = containerSchema()

// containerSize is about how many bytes a container schema takes, at the
// depth of a CRD's spec.
const containerSize = 100 << 10

// crd writes a CustomResourceDefinition. With images, its schema embeds
// container schemas and image fields (as the CRDs of operators do);
// without, no "image" appears in it.
func (g *gen) crd(images bool) {
	kind := crdKinds[g.rng.IntN(len(crdKinds))]
	plural := strings.ToLower(kind) + "s"
	group := fmt.Sprintf("%s.r%d.example.io", strings.SplitN(g.chart, "-", 2)[0], g.n)
	g.begin("CustomResourceDefinition", "crds/"+plural+".yaml")
	g.line(0, "apiVersion: apiextensions.k8s.io/v1")
	g.line(0, "kind: CustomResourceDefinition")
	g.line(0, "metadata:")
	g.line(2, "annotations:")
	g.linef(4, "controller-gen.kubebuilder.io/version: v0.%d.%d", 14+g.rng.IntN(4), g.rng.IntN(6))
	if g.rng.IntN(2) == 0 {
		g.linef(4, "helm.sh/resource-policy: keep")
	}
	g.labels(2, "crds")
	g.linef(2, "name: %s.%s", plural, group)
	g.line(0, "spec:")
	g.linef(2, "group: %s", group)
	g.line(2, "names:")
	if g.rng.IntN(2) == 0 {
		g.line(4, "categories:")
		g.line(4, "- all")
		g.linef(4, "- %s", strings.SplitN(g.chart, "-", 2)[0])
	}
	g.linef(4, "kind: %s", kind)
	g.linef(4, "listKind: %sList", kind)
	g.linef(4, "plural: %s", plural)
	if g.rng.IntN(2) == 0 {
		g.line(4, "shortNames:")
		g.linef(4, "- %s", strings.ToLower(kind[:2]))
	}
	g.linef(4, "singular: %s", strings.ToLower(kind))
	g.line(2, "scope: Namespaced")
	g.line(2, "versions:")

	versions := 1
	if x := g.rng.IntN(20); x >= 17 {
		versions = 3
	} else if x >= 12 {
		versions = 2
	}
	target := g.crdSize()
	names := []string{"v1", "v1beta1", "v1alpha1"}
	var schema []byte
	for v := 0; v < versions; v++ {
		g.line(2, "- additionalPrinterColumns:")
		g.line(4, "- jsonPath: .metadata.creationTimestamp")
		g.line(6, "name: Age")
		g.line(6, "type: date")
		g.line(4, "- description: The desired number of replicas")
		g.line(6, "jsonPath: .spec.replicas")
		g.line(6, "name: Replicas")
		g.line(6, "type: integer")
		if images {
			g.line(4, "- jsonPath: .spec.image")
			g.line(6, "name: Image")
			g.line(6, "priority: 1")
			g.line(6, "type: string")
		}
		g.linef(4, "name: %s", names[v])
		g.line(4, "schema:")
		if schema == nil {
			start := g.b.Len()
			g.openAPI(images, start+int(target)/versions)
			schema = append([]byte(nil), g.b.Bytes()[start:]...)
		} else {
			g.b.Write(schema)
		}
		g.linef(4, "served: %t", true)
		g.linef(4, "storage: %t", v == 0)
		g.line(4, "subresources:")
		g.line(6, "status: {}")
		if v == 0 && g.rng.IntN(3) == 0 {
			g.line(6, "scale:")
			g.line(8, "specReplicasPath: .spec.replicas")
			g.line(8, "statusReplicasPath: .status.replicas")
		}
	}
}

// crdSize draws the size of a CRD, log-uniform between 6 KB and 600 KB
// (capped for small streams), which gives a mean near the 110 KB measured.
// Near the end of the stream it stays within what its share has left.
func (g *gen) crdSize() float64 {
	hi := math.Min(600<<10, float64(g.size)/25)
	lo := math.Min(6<<10, hi/2)
	s := lo * math.Exp(g.rng.Float64()*math.Log(hi/lo))
	if left := g.curShare*float64(g.size) - float64(g.bytes[g.cur]); s > left {
		s = math.Max(left, lo)
	}
	return s
}

// openAPI writes the openAPIV3Schema of a version at indentation 6, until
// the document reaches limit bytes.
func (g *gen) openAPI(images bool, limit int) {
	g.line(6, "openAPIV3Schema:")
	g.description(8, "object", 2, images)
	g.line(8, "properties:")
	g.line(10, "apiVersion:")
	g.line(12, "description: |-")
	for _, l := range wrap("APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", 80) {
		g.line(14, l)
	}
	g.line(12, "type: string")
	g.line(10, "kind:")
	g.line(12, "description: |-")
	for _, l := range wrap("Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", 80) {
		g.line(14, l)
	}
	g.line(12, "type: string")
	g.line(10, "metadata:")
	g.line(12, "type: object")
	g.line(10, "spec:")
	g.description(12, "spec", 3, images)
	g.line(12, "properties:")

	statusLimit := limit - (limit-g.b.Len())/8
	// Each top-level field takes at least a few hundred bytes.
	n := (statusLimit - g.b.Len()) / 2000
	n = min(max(n, 4), 40) + g.rng.IntN(min(max(n, 4), 60))
	names := g.fieldNames(n)
	special := map[string]func(ind int){}
	reserve := 0 // bytes kept for the container lists still to write
	if images {
		special["image"] = func(ind int) {
			g.line(ind, "image:")
			g.description(ind+2, "image", 2, true)
			g.line(ind+2, "type: string")
		}
		special["imagePullPolicy"] = func(ind int) {
			g.line(ind, "imagePullPolicy:")
			g.description(ind+2, "imagePullPolicy", 1, true)
			g.line(ind+2, "enum:")
			for _, e := range []string{"Always", "Never", "IfNotPresent"} {
				g.line(ind+2, "- "+e)
			}
			g.line(ind+2, "type: string")
		}
		special["imagePullSecrets"] = func(ind int) {
			g.line(ind, "imagePullSecrets:")
			g.description(ind+2, "imagePullSecrets", 2, true)
			g.line(ind+2, "items:")
			g.line(ind+4, "properties:")
			g.line(ind+6, "name:")
			g.line(ind+8, "default: \"\"")
			g.description(ind+8, "name", 2, false)
			g.line(ind+8, "type: string")
			g.line(ind+4, "type: object")
			g.line(ind+4, "x-kubernetes-map-type: atomic")
			g.line(ind+2, "type: array")
		}
		lists := []string{"containers", "initContainers"}
		if limit-g.b.Len() < 6*containerSize {
			lists = lists[:(limit-g.b.Len())/(3*containerSize)]
		}
		for _, k := range lists {
			reserve += containerSize
			special[k] = func(ind int) {
				g.line(ind, k+":")
				g.description(ind+2, k, 3, true)
				g.line(ind+2, "items:")
				g.schema(ind+4, container)
				g.line(ind+2, "type: array")
				reserve -= containerSize
			}
		}
		for k := range special {
			names = append(names, k)
		}
		sort.Strings(names)
	}
	for i, name := range names {
		if f, ok := special[name]; ok {
			f(14)
			continue
		}
		left := len(names) - i
		budget := (statusLimit - reserve - g.b.Len()) / left
		if budget < 0 {
			budget = 0
		}
		budget = budget/2 + g.rng.IntN(budget+1)
		g.field(14, 1, name, g.b.Len()+budget, images)
	}
	g.line(12, "type: object")
	g.line(10, "status:")
	g.description(12, "status", 2, false)
	g.line(12, "properties:")
	for _, name := range g.fieldNames(3 + g.rng.IntN(6)) {
		g.field(14, 1, name, limit, images)
	}
	g.line(12, "type: object")
	g.line(8, "required:")
	g.line(8, "- spec")
	g.line(8, "type: object")
}

// fieldNames returns n distinct sorted property names.
func (g *gen) fieldNames(n int) []string {
	if n > len(fieldWords) {
		n = len(fieldWords)
	}
	idx := g.rng.Perm(len(fieldWords))[:n]
	out := make([]string, n)
	for i, j := range idx {
		out[i] = fieldWords[j]
	}
	sort.Strings(out)
	return out
}

const maxDepth = 11

// field writes a random property "name:" at ind and its schema below it,
// growing objects while the document is under limit.
func (g *gen) field(ind, depth int, name string, limit int, images bool) {
	g.line(ind, name+":")
	ind += 2
	room := g.b.Len() < limit && depth < maxDepth
	x := g.rng.IntN(100)
	switch {
	case room && x < 35:
		g.objectSchema(ind, depth, name, limit, images)
	case room && x < 50:
		g.description(ind, name, 1+g.rng.IntN(3), images)
		g.line(ind, "items:")
		g.objectSchema(ind+2, depth+1, name, limit, images)
		g.line(ind, "type: array")
		if g.rng.IntN(2) == 0 {
			g.line(ind, "x-kubernetes-list-map-keys:")
			g.line(ind, "- name")
			g.line(ind, "x-kubernetes-list-type: map")
		}
	default:
		g.leaf(ind, name, images)
	}
}

// objectSchema writes the schema of an object at ind.
func (g *gen) objectSchema(ind, depth int, name string, limit int, images bool) {
	g.description(ind, name, 1+g.rng.IntN(4), images)
	names := g.fieldNames(2 + g.rng.IntN(10))
	g.line(ind, "properties:")
	for i, n := range names {
		left := len(names) - i
		budget := (limit - g.b.Len()) / left
		if budget < 0 {
			budget = 0
		}
		g.field(ind+2, depth+1, n, g.b.Len()+budget, images)
	}
	if g.rng.IntN(3) == 0 {
		req := names[:1+g.rng.IntN(len(names))/2]
		if g.rng.IntN(4) == 0 {
			g.linef(ind, "required: [%s]", strings.Join(req, ", "))
		} else {
			g.line(ind, "required:")
			for _, r := range req {
				g.line(ind, "- "+r)
			}
		}
	}
	g.line(ind, "type: object")
	if g.rng.IntN(8) == 0 {
		g.line(ind, "x-kubernetes-map-type: atomic")
	}
}

// leaf writes the schema of a scalar, a list of strings or a map.
func (g *gen) leaf(ind int, name string, images bool) {
	x := g.rng.IntN(100)
	switch {
	case x < 40: // string
		if g.rng.IntN(6) == 0 {
			g.line(ind, "default: "+[]string{"30s", "\"\"", "HTTP", "info", "'true'"}[g.rng.IntN(5)])
		}
		g.description(ind, name, 1+g.rng.IntN(4), images)
		switch y := g.rng.IntN(10); {
		case y < 2:
			g.line(ind, "enum:")
			for _, e := range enums[g.rng.IntN(len(enums))] {
				g.line(ind, "- "+e)
			}
		case y < 4:
			g.line(ind, "pattern: "+patterns[g.rng.IntN(len(patterns))])
		case y < 5:
			g.line(ind, "pattern: "+quotedPatterns[g.rng.IntN(len(quotedPatterns))])
		case y < 6:
			g.line(ind, "format: "+[]string{"date-time", "uri", "byte", "duration"}[g.rng.IntN(4)])
		}
		if g.rng.IntN(10) == 0 {
			g.line(ind, "minLength: 1")
		}
		g.line(ind, "type: string")
	case x < 55: // integer
		if g.rng.IntN(4) == 0 {
			g.linef(ind, "default: %d", g.rng.IntN(100))
		}
		g.description(ind, name, 1+g.rng.IntN(3), images)
		g.line(ind, "format: "+[]string{"int32", "int64"}[g.rng.IntN(2)])
		if g.rng.IntN(3) == 0 {
			g.line(ind, "minimum: 0")
		}
		g.line(ind, "type: integer")
	case x < 67: // boolean
		if g.rng.IntN(4) == 0 {
			g.line(ind, "default: "+[]string{"true", "false"}[g.rng.IntN(2)])
		}
		g.description(ind, name, 1+g.rng.IntN(2), images)
		g.line(ind, "type: boolean")
	case x < 77: // list of strings
		g.description(ind, name, 1+g.rng.IntN(3), images)
		g.line(ind, "items:")
		g.line(ind+2, "type: string")
		g.line(ind, "type: array")
		if g.rng.IntN(3) == 0 {
			g.line(ind, "x-kubernetes-list-type: set")
		}
	case x < 84: // map of strings
		g.line(ind, "additionalProperties:")
		g.line(ind+2, "type: string")
		g.description(ind, name, 1+g.rng.IntN(2), images)
		g.line(ind, "type: object")
	case x < 92: // int or string
		g.line(ind, "anyOf:")
		g.line(ind, "- type: integer")
		g.line(ind, "- type: string")
		g.description(ind, name, 1+g.rng.IntN(3), images)
		if g.rng.IntN(2) == 0 {
			g.line(ind, "pattern: "+patterns[0])
		}
		g.line(ind, "x-kubernetes-int-or-string: true")
	default: // free form
		g.description(ind, name, 1+g.rng.IntN(2), images)
		g.line(ind, "type: object")
		g.line(ind, "x-kubernetes-preserve-unknown-fields: true")
	}
}

// schema writes a hand-written schema node at ind.
func (g *gen) schema(ind int, s *sch) {
	switch s.typ {
	case "ios":
		g.line(ind, "anyOf:")
		g.line(ind, "- type: integer")
		g.line(ind, "- type: string")
		g.description(ind, "value", 1+g.rng.IntN(3), s.img)
		g.line(ind, "x-kubernetes-int-or-string: true")
		return
	case "quantities":
		g.line(ind, "additionalProperties:")
		g.line(ind+2, "anyOf:")
		g.line(ind+2, "- type: integer")
		g.line(ind+2, "- type: string")
		g.line(ind+2, "pattern: "+patterns[0])
		g.line(ind+2, "x-kubernetes-int-or-string: true")
		g.description(ind, "resources", 2, false)
		g.line(ind, "type: object")
		return
	}
	if s.def != "" {
		g.line(ind, "default: "+s.def)
	}
	g.description(ind, "field", 1+g.rng.IntN(4), s.img)
	if len(s.enum) > 0 {
		g.line(ind, "enum:")
		for _, e := range s.enum {
			g.line(ind, "- "+e)
		}
	}
	if s.format != "" {
		g.line(ind, "format: "+s.format)
	}
	if s.items != nil {
		g.line(ind, "items:")
		g.schema(ind+2, s.items)
	}
	if len(s.props) > 0 {
		g.line(ind, "properties:")
		for _, pr := range s.props {
			g.line(ind+2, pr.name+":")
			g.schema(ind+4, pr.s)
		}
	}
	if len(s.req) > 0 {
		g.line(ind, "required:")
		for _, r := range s.req {
			g.line(ind, "- "+r)
		}
	}
	g.line(ind, "type: "+s.typ)
	if s.listKeys != nil {
		if len(s.listKeys) > 0 {
			g.line(ind, "x-kubernetes-list-map-keys:")
			for _, k := range s.listKeys {
				g.line(ind, "- "+k)
			}
			g.line(ind, "x-kubernetes-list-type: map")
		} else {
			g.line(ind, "x-kubernetes-list-type: atomic")
		}
	}
	if s.typ == "object" && len(s.props) <= 2 && g.rng.IntN(3) == 0 {
		g.line(ind, "x-kubernetes-map-type: atomic")
	}
}

// description writes a "description:" of n sentences at ind, in one of the
// styles real CRDs use: a literal block (controller-gen), a plain scalar
// (single or multi-line), or a double-quoted scalar with escapes.
func (g *gen) description(ind int, field string, n int, images bool) {
	t := g.text(field, n, images)
	width := 100 - ind
	if width < 40 {
		width = 40
	}
	switch x := g.rng.IntN(20); {
	case len(t) <= width && plainSafe(t):
		g.line(ind, "description: "+t)
	case x == 0:
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, ". ", `.\n`)
		g.line(ind, `description: "`+r.Replace(t)+`"`)
	case x == 1 && plainSafe(t) && foldable(wrap(t, width)):
		lines := wrap(t, width)
		g.line(ind, "description: "+lines[0])
		for _, l := range lines[1:] {
			g.line(ind+2, l)
		}
	default:
		g.line(ind, "description: |-")
		for _, l := range wrap(t, width) {
			g.line(ind+2, l)
		}
	}
}

// plainSafe reports whether t can be written as a plain scalar, on one
// line or folded over several.
func plainSafe(t string) bool {
	if t == "" || strings.ContainsAny(t[:1], "\"'[]{}&*!|>%@`#,?:-") {
		return false
	}
	return !strings.Contains(t, ": ") && !strings.Contains(t, " #") && !strings.HasSuffix(t, ":")
}

// foldable reports whether the continuation lines of a multi-line plain
// scalar start with safe characters.
func foldable(lines []string) bool {
	for _, l := range lines[1:] {
		if !plainSafe(l) {
			return false
		}
	}
	return true
}
