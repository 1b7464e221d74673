// Package corpus writes the benchmark corpus of rehost: realistic,
// deterministic streams of Kubernetes manifests shaped like the output of
// "helm template" for a whole platform.
//
// The composition by bytes follows what was measured on 18 real charts and
// release manifests: about 86% CustomResourceDefinitions with deep OpenAPI
// v3 schemas, 7% ConfigMaps, 3% Pod-spec workloads, the rest RBAC, Services
// and small objects; about 27% of the bytes sit in documents without the
// substring "image". Every document is written from the templates of this
// package; the same size and seed give the same bytes.
package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
)

// Category is a class of documents of the composition.
type Category string

// The categories of the composition.
const (
	CRD       Category = "CustomResourceDefinition"
	ConfigMap Category = "ConfigMap"
	Workload  Category = "workload" // Pod, Deployment, StatefulSet, DaemonSet, Job, CronJob
	RBAC      Category = "rbac"     // ServiceAccount, (Cluster)Role, (Cluster)RoleBinding
	Service   Category = "Service"
	Other     Category = "other" // custom resources, Secrets, PodDisruptionBudgets, ...
)

// Composition is the target share of the bytes of each category.
var Composition = map[Category]float64{
	CRD:       0.86,
	ConfigMap: 0.07,
	Workload:  0.03,
	RBAC:      0.02,
	Service:   0.01,
	Other:     0.01,
}

// WithoutImage is the target share of the bytes in documents that do not
// contain the substring "image".
const WithoutImage = 0.27

// Stats describes a generated stream.
type Stats struct {
	// Documents is the number of YAML documents.
	Documents int
	// Bytes is the size of the stream.
	Bytes int64
	// Categories is the number of bytes per category.
	Categories map[Category]int64
	// Kinds is the number of documents per kind.
	Kinds map[string]int
	// WithoutImage is the number of bytes in documents without the
	// substring "image".
	WithoutImage int64
	// Images maps every image reference written in an image field (Pod
	// specs, container lists of custom resources, image volumes), as
	// written, to its name: the reference without tag and digest, as
	// kustomize's images transformer matches it.
	Images map[string]string
}

// ImageRefs returns the sorted image references of Images.
func (s Stats) ImageRefs() []string {
	out := make([]string, 0, len(s.Images))
	for r := range s.Images {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// source is a document template with its target share of the bytes.
type source struct {
	cat   Category
	share float64
	write func(g *gen)
}

// sources split the categories further, so that the share of bytes without
// "image" comes out right: CRDs without embedded container schemas, plain
// ConfigMaps, RBAC, Services and small objects hold no "image".
var sources = []source{
	{CRD, 0.68, func(g *gen) { g.crd(true) }},
	{CRD, 0.18, func(g *gen) { g.crd(false) }},
	{ConfigMap, 0.016, func(g *gen) { g.configMapWithImages() }},
	{ConfigMap, 0.054, func(g *gen) { g.configMap() }},
	{Workload, 0.03, func(g *gen) { g.workload() }},
	{RBAC, 0.02, func(g *gen) { g.rbac() }},
	{Service, 0.01, func(g *gen) { g.service() }},
	{Other, 0.006, func(g *gen) { g.small() }},
	{Other, 0.004, func(g *gen) { g.customResource() }},
}

// gen holds the state of one generation.
type gen struct {
	rng      *rand.Rand
	size     int64
	b        *bytes.Buffer // the document being written
	pool     []image
	used     map[string]string
	bytes    []int64 // per source
	cur      int     // the source being written
	curShare float64 // and its share
	total    int64
	n        int // documents written

	release   string // current chart release
	namespace string
	chart     string
	inChart   int // documents left in the current release
	releases  int
	kind      string // kind of the document being written
	workloads int    // workloads written
	customs   int    // custom resources written
}

// Generate writes a stream of about size bytes (it stops after the first
// document that reaches size) to w, from seed. It holds one document in
// memory at a time, so any size can be written.
func Generate(w io.Writer, size, seed int64) (Stats, error) {
	g := &gen{
		rng:   newRng(seed),
		size:  size,
		b:     &bytes.Buffer{},
		used:  map[string]string{},
		bytes: make([]int64, len(sources)),
	}
	g.pool = g.newPool(140)
	st := Stats{Categories: map[Category]int64{}, Kinds: map[string]int{}}
	bw := bufio.NewWriterSize(w, 256<<10)
	for g.total < size {
		i := g.pick()
		if g.inChart <= 0 {
			g.nextRelease()
		}
		g.b.Reset()
		g.kind = ""
		g.cur, g.curShare = i, sources[i].share
		sources[i].write(g)
		data := g.b.Bytes()
		n := int64(len(data))
		g.bytes[i] += n
		g.total += n
		g.n++
		g.inChart--
		st.Categories[sources[i].cat] += n
		st.Kinds[g.kind]++
		if !bytes.Contains(data, []byte("image")) {
			st.WithoutImage += n
		}
		if _, err := bw.Write(data); err != nil {
			return st, err
		}
	}
	st.Documents = g.n
	st.Bytes = g.total
	st.Images = g.used
	return st, bw.Flush()
}

// pick chooses the source furthest below its share.
func (g *gen) pick() int {
	best, bestGap := 0, -1.0
	for i, s := range sources {
		share := 0.0
		if g.total > 0 {
			share = float64(g.bytes[i]) / float64(g.total)
		}
		if gap := s.share - share; gap > bestGap {
			best, bestGap = i, gap
		}
	}
	return best
}

func (g *gen) nextRelease() {
	g.releases++
	g.chart = chartNames[g.rng.IntN(len(chartNames))]
	g.release = fmt.Sprintf("%s-r%d", strings.SplitN(g.chart, "-", 2)[0], g.releases)
	g.namespace = []string{"monitoring", "cert-manager", "argocd", "platform", "default", "kube-system", "logging"}[g.rng.IntN(7)]
	g.inChart = 20 + g.rng.IntN(60)
}

// begin writes the document start of helm template output.
func (g *gen) begin(kind, template string) {
	g.kind = kind
	g.b.WriteString("---\n# Source: ")
	g.b.WriteString(g.chart)
	g.b.WriteString("/templates/")
	g.b.WriteString(template)
	g.b.WriteString("\n")
}

// name returns a resource name, unique in the stream.
func (g *gen) name(component string) string {
	return fmt.Sprintf("%s-%s-%d", g.release, component, g.n)
}

func (g *gen) component() string { return components[g.rng.IntN(len(components))] }

// line writes one line at an indentation.
func (g *gen) line(ind int, s string) {
	for i := 0; i < ind; i++ {
		g.b.WriteByte(' ')
	}
	g.b.WriteString(s)
	g.b.WriteByte('\n')
}

func (g *gen) linef(ind int, format string, args ...any) { g.line(ind, fmt.Sprintf(format, args...)) }

// labels writes the standard labels of helm charts at ind.
func (g *gen) labels(ind int, component string) {
	g.line(ind, "labels:")
	g.linef(ind+2, "app.kubernetes.io/name: %s", g.chart)
	g.linef(ind+2, "app.kubernetes.io/instance: %s", g.release)
	g.linef(ind+2, "app.kubernetes.io/component: %s", component)
	g.line(ind+2, "app.kubernetes.io/managed-by: Helm")
	g.linef(ind+2, "helm.sh/chart: %s-%d.%d.%d", g.chart, 1+g.rng.IntN(60), g.rng.IntN(20), g.rng.IntN(10))
}

// metadata writes a namespaced metadata block at column 0.
func (g *gen) metadata(name, component string, namespaced bool) {
	g.line(0, "metadata:")
	g.linef(2, "name: %s", name)
	if namespaced {
		g.linef(2, "namespace: %q", g.namespace)
	}
	g.labels(2, component)
}

// sentence returns one description sentence.
func (g *gen) sentence(field string, images bool) string {
	var s string
	if images {
		s = imageSentences[g.rng.IntN(len(imageSentences))]
	} else {
		s = plainSentences[g.rng.IntN(len(plainSentences))]
	}
	if strings.Contains(s, "%s") {
		s = fmt.Sprintf(s, capitalize(field))
	}
	return s
}

// text returns n sentences; with images, some of them talk about images.
func (g *gen) text(field string, n int, images bool) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.sentence(field, images && g.rng.IntN(4) == 0)
	}
	return strings.Join(parts, " ")
}

// wrap breaks text into lines of at most width bytes.
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func newRng(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x6a09e667f3bcc909)) }
