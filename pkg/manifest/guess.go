package manifest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// This file finds images by the name of their key ("guessed" images) in
// custom resources of kinds rehost knows nothing about: not built-in
// Kubernetes kinds, not kinds of the built-in table or of imageFields, and
// never CustomResourceDefinitions. sealer's own image finder keeps every
// key ending in "image"; these are the same images, found with the checks
// below so that disks, patterns and placeholders are not taken for them.
//
// A key names an image when it is "image" (also "Image", "IMAGE"), a
// camelCase name ending in "Image" (baseImage, initImage, sidecarImage) or
// a snake or kebab case name ending in "_image", "-image", "_IMAGE" or
// "-IMAGE". imagePullPolicy, imagePullSecrets, imageTag and imageRegistry
// do not end so. Under such a key:
//
//   - a string that parses as an image reference with a tag, a digest or a
//     registry host is an image; so is one without them ("busybox") in a
//     map that is a container by its other keys (imagePullPolicy, command,
//     args, env, ...);
//   - a string that does not parse, or names no registry, tag or digest
//     outside a container ("auto", "<YOUR-IMAGE>", "", a template, a
//     virtual machine's image name), is left as written with a warning: it
//     is a guess;
//   - a map with a repository key is a split reference (registry,
//     repository, tag, digest, as Helm values write it);
//   - a baseImage (or *BaseImage) without a tag is a repository whose tag
//     is the version or tag key beside it (the Prometheus and TiDB
//     operators' shape); without one the operator picks the tag, and the
//     image is rewritten but not listed, with a warning;
//   - a digest alone ("sha256:<hex>") and a registry address without a
//     repository ("localhost:5000") are not images either: left as
//     written with a warning;
//   - null, booleans, numbers, lists, other maps, patterns ("*", "?") and
//     the kind's known placeholders are not images, silently; a map holding
//     pool or monitors beside image is a Ceph RBD disk, not an image.
//
// Metadata (labels, annotations: see FindEmbedded) and the top-level status
// are not searched, nor what the container-list rule found.

// guessKey reports whether a map key names an image by its name.
func guessKey(k string) bool {
	switch k {
	case "image", "Image", "IMAGE":
		return true
	}
	for _, s := range []string{"Image", "_image", "-image", "_IMAGE", "-IMAGE"} {
		if len(k) > len(s) && strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// isBaseKey reports whether a key names a base image: a repository the
// operator adds a tag to.
func isBaseKey(k string) bool {
	return k == "baseImage" || strings.HasSuffix(k, "BaseImage")
}

// builtinGroup reports whether an API group is one of Kubernetes' own: the
// core group, a group without a dot (apps, batch, policy, ...; a custom
// resource's group has one) or a *.k8s.io group.
func builtinGroup(group string) bool {
	return !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// known reports whether a kind has entries in f's tables (built in, or
// from imageFields): its fields are known, none is guessed.
func (f *Finder) known(gk groupKind) bool {
	return len(f.extra[gk]) > 0 || len(f.composites[gk]) > 0 || len(f.registries[gk]) > 0 || len(f.operators[gk]) > 0
}

// guessSkip is a value under a key that names an image, not taken for one:
// the rewriter warns about it and leaves it as written.
type guessSkip struct {
	Field
	why string
}

// maxGuessNodes bounds the nodes the guess walk visits in one document:
// merge keys can put one map at many places, and each place is walked.
const maxGuessNodes = 1 << 18

// The composites of guessed references: a map under a key that names an
// image, as Helm values write one (registry, repository, tag, digest); and
// a base image with the version or tag beside it. Their paths are relative
// to the map that holds them.
var (
	guessSplit = composite{
		CompositeField: CompositeField{Repository: "repository", Registry: "registry", Digest: []string{"digest"}, Tag: []string{"tag"}, OperatorTag: true},
		repo:           keyPath("repository"), registry: keyPath("registry"),
		digest: []rewrite.FieldPath{keyPath("digest")}, tag: []rewrite.FieldPath{keyPath("tag")},
	}
	guessBase = composite{
		CompositeField: CompositeField{Repository: "baseImage", Tag: []string{"version", "tag"}, OperatorTag: true},
		repo:           keyPath("baseImage"), tag: []rewrite.FieldPath{keyPath("version"), keyPath("tag")},
	}
)

func keyPath(k string) rewrite.FieldPath { return rewrite.FieldPath{{Key: k}} }

// guessObject adds the images of a custom resource found by the name of
// their keys.
func (w *walker) guessObject(n *yaml.Node) {
	if w.guessing.left < 0 {
		return // the document's budget is spent, and that was reported
	}
	w.guessWalk(n, true)
	if w.guessing.left < 0 {
		f := w.field(resolve(n))
		f.Path = ""
		w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: fmt.Sprintf("the document was not searched for images by key name beyond %d nodes (merge keys repeat maps)", maxGuessNodes)})
	}
}

func (w *walker) guessWalk(n *yaml.Node, top bool) {
	n, ok := followOnce(n, &w.guessing.seen)
	if !ok || w.guessing.left < 0 {
		return
	}
	if w.guessing.left--; w.guessing.left < 0 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		pairs := mergedPairs(n, w.guessing.mergeWalks)
		// The container-list rule took the container lists and the image
		// volumes of this map (see search).
		took := false
		for _, kv := range pairs {
			if isContainerListKey(kv[0].Value) && isContainerList(kv[1]) {
				took = true
			}
		}
		for _, kv := range pairs {
			if w.guessing.left < 0 {
				return
			}
			k := kv[0].Value
			switch {
			case k == "metadata", top && (k == "status" || k == "apiVersion" || k == "kind"):
			case took && (isContainerListKey(k) || k == "volumes"):
			case guessKey(k):
				w.guessField(n, k, kv[1])
			default:
				w.push(k)
				w.guessWalk(kv[1], false)
				w.pop(1)
			}
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			if w.guessing.left < 0 {
				return
			}
			w.push(index(i))
			w.guessWalk(it, false)
			w.pop(1)
		}
	}
}

// guessField adds the image, if any, of key k in map m, whose value is raw.
func (w *walker) guessField(m *yaml.Node, k string, raw *yaml.Node) {
	if get(m, "pool") != nil || get(m, "monitors") != nil {
		return // a Ceph RBD disk (rbd.image), not a container image
	}
	v := resolve(raw)
	switch v.Kind {
	case yaml.MappingNode:
		w.push(k)
		defer w.pop(1)
		if get(v, "repository") == nil {
			w.guessWalk(raw, false)
			return
		}
		before := len(w.out)
		w.composite(nil, v, guessSplit)
		w.adopt(before)
		return
	case yaml.SequenceNode:
		w.push(k)
		w.guessWalk(raw, false)
		w.pop(1)
		return
	case yaml.ScalarNode:
	default:
		return
	}
	if !isString(v) {
		return // null, a boolean, a number
	}
	if isPattern(v.Value) || w.placeholder != nil && w.placeholder(v.Value) {
		return
	}
	f := w.field(raw, k)
	f.Guessed = true
	ref, err := rewrite.ParseRef(v.Value)
	switch {
	case isBareDigest(v.Value):
		w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: "a digest alone, not an image reference"})
		return
	case isBareHostPort(v.Value):
		w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: "a registry address (host:port), not an image reference"})
		return
	case err != nil:
		w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: err.Error()})
		return
	case ref.Tag != "" || ref.Digest != "":
	case isBaseKey(k):
		// A repository: the tag is beside it, or the operator's choice.
		id, why := compositeID(nil, m, guessBase)
		f.Type = TypeSplit
		if id != "" {
			f.Ref = f.Value + id
		}
		f.Incomplete = why
		if _, err := rewrite.ParseRef(f.ref()); err != nil {
			w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: err.Error()})
			return
		}
	case !hasHost(v.Value) && !containerLike(m):
		w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: "it names no registry host, tag or digest"})
		return
	}
	w.guessing.fields = append(w.guessing.fields, f)
}

// isBareDigest reports whether v is a digest without a repository
// ("sha256:<hex>"), which ParseRef reads as an image sha256 with the hex
// as its tag.
func isBareDigest(v string) bool {
	alg, _, ok := strings.Cut(v, ":")
	return ok && !strings.ContainsAny(v, "/@") && (alg == "sha256" || alg == "sha384" || alg == "sha512")
}

// isBareHostPort reports whether v is a registry address without a
// repository ("localhost:5000", "registry.example.com:5000"), which
// ParseRef reads as an image with the port as its tag: no "/", a host
// that is localhost or holds a ".", and a numeric port.
func isBareHostPort(v string) bool {
	host, port, ok := strings.Cut(v, ":")
	if !ok || port == "" || len(port) > 5 || strings.ContainsAny(v, "/@") || !(host == "localhost" || strings.Contains(host, ".")) {
		return false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// containerKeys are keys of a container that say, beside an image key,
// that the map is a container whatever the image's spelling.
var containerKeys = []string{"imagePullPolicy", "pullPolicy", "command", "args", "env", "envFrom", "volumeMounts", "ports"}

// containerLike reports whether map m holds a key only containers have.
func containerLike(m *yaml.Node) bool {
	for _, k := range containerKeys {
		if get(m, k) != nil {
			return true
		}
	}
	return false
}

// adopt moves the fields a guessed composite added to w.out[before:] to
// w.guessing.fields, marked; those that are not image references are dropped
// (silently when not strings) or become warnings.
func (w *walker) adopt(before int) {
	added := append([]Field(nil), w.out[before:]...)
	w.out = w.out[:before]
	for _, f := range added {
		if !isString(f.Node) || isPattern(f.ref()) || w.placeholder != nil && w.placeholder(f.ref()) {
			continue
		}
		f.Guessed = true
		if _, err := rewrite.ParseRef(f.ref()); err != nil {
			w.guessing.skipped = append(w.guessing.skipped, guessSkip{Field: f, why: err.Error()})
			continue
		}
		w.guessing.fields = append(w.guessing.fields, f)
	}
}

// maxMergeWalks is how many times one document's guess walk takes a
// merged mapping's pairs in at the places it is merged into (each place
// is a path of its own). Beyond, its images there are not found, and a
// rewrite of them elsewhere warns that the value is shared.
const maxMergeWalks = 16

// mergedPairs is the key/value pairs of mapping m as a decoder reads
// them: its own pairs in order (each value of a key written twice), then
// the pairs of the mappings merged into it ("<<") whose keys it does not
// hold, the first merged mapping first, recursively. walks counts how many
// times each merged mapping was taken in; one taken maxMergeWalks times is
// not taken in any more.
func mergedPairs(m *yaml.Node, walks map[*yaml.Node]int) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	have := map[string]bool{}
	seen := map[*yaml.Node]bool{}
	var add func(m *yaml.Node, own bool)
	add = func(m *yaml.Node, own bool) {
		if seen[m] || !own && walks[m] >= maxMergeWalks {
			return
		}
		seen[m] = true
		if !own {
			walks[m]++
		}
		var merges []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
				merges = append(merges, m.Content[i+1])
				continue
			}
			if !own {
				if have[k.Value] {
					continue
				}
				have[k.Value] = true
			}
			out = append(out, [2]*yaml.Node{k, m.Content[i+1]})
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			have[m.Content[i].Value] = true
		}
		for _, mv := range merges {
			srcs := []*yaml.Node{mv}
			if r := resolve(mv); r.Kind == yaml.SequenceNode {
				srcs = r.Content
			}
			for _, src := range srcs {
				if src = resolve(src); src.Kind == yaml.MappingNode {
					add(src, false)
				}
			}
		}
	}
	add(m, true)
	return out
}

// GuessedImages is the warning that sums up, once per run, the image
// references found in custom resources by the name of their keys (see
// Field.Guessed): they are listed and rewritten like those of image
// fields, Config.NoGuessImages (noGuessImages in a config file) leaves
// them as written and Config.ImageFields (imageFields) makes them known.
// Its message states the facts and names no setting of a front end: each
// adds that hint in its own terms (the CLI --no-guess-images, the KRM
// function's noGuessImages, app.Options.Config.NoGuessImages).
type GuessedImages struct {
	// Count is how many references were found so.
	Count int
	// Fields are the kinds and field paths where they were found,
	// "CephCluster spec.cephVersion.image", sorted and unique, with list
	// indexes written "[]".
	Fields []string
	// First is where the first one was found.
	First rewrite.Location
}

// maxGuessedFields is how many fields the warning names.
const maxGuessedFields = 10

func (g *GuessedImages) Error() string {
	list := g.Fields
	more := ""
	if len(list) > maxGuessedFields {
		more = fmt.Sprintf(" and %d more", len(list)-maxGuessedFields)
		list = list[:maxGuessedFields]
	}
	return fmt.Sprintf("%d image(s) in custom resources found by name: %s%s; listed and rewritten like image fields", g.Count, strings.Join(list, ", "), more)
}

// guessTally collects the guessed references of a run.
type guessTally struct {
	count  int
	fields map[string]bool
	first  rewrite.Location
}

var listIndex = regexp.MustCompile(`\[\d+\]`)

func (t *guessTally) add(l rewrite.Location) {
	if t.count == 0 {
		t.first = l
	}
	t.count++
	if t.fields == nil {
		t.fields = map[string]bool{}
	}
	t.fields[bounded.Cut(joinNonEmpty(l.Kind, listIndex.ReplaceAllString(l.Field, "[]")), bounded.MaxQuoted)] = true
}

// warning is the run's warning, nil when nothing was guessed.
func (t *guessTally) warning() *GuessedImages {
	if t.count == 0 {
		return nil
	}
	g := &GuessedImages{Count: t.count, First: t.first}
	for f := range t.fields {
		g.Fields = append(g.Fields, f)
	}
	sort.Strings(g.Fields)
	return g
}

func joinNonEmpty(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " " + b
}

// guessState is what guessedFields remembers of a document.
type guessState struct {
	// fields are the guessed references; skipped the values under keys
	// that name an image not taken for images.
	fields  []Field
	skipped []guessSkip
	// seen are the alias targets already walked; left is how many nodes
	// the walk may still visit in this document.
	seen map[*yaml.Node]bool
	left int
	// mergeWalks counts the places each merged map was taken in at.
	mergeWalks map[*yaml.Node]int
}

// guessedFields finds, in custom resources of kinds that are neither
// built-in Kubernetes kinds nor in the tables, the values of keys named
// image or *Image that are image references (Field.Guessed).
type guessedFields struct{}

func (guessedFields) detect(w *walker, o object) {
	if w.guess && !o.builtin && !builtinGroup(o.gk.group) && !w.f.known(o.gk) {
		w.guessObject(o.node)
	}
}
