package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// Config kind and apiVersion, as accepted in a config file and as a KRM
// functionConfig.
const (
	APIVersion = "rehost.dev/v1alpha1"
	Kind       = "RewriteConfig"
)

// DefaultRegistry is sealer's private registry.
const DefaultRegistry = "sea.hub:5000"

// PathStyle says how a source repository is laid out in the target registry.
type PathStyle string

const (
	// PathStyleStrip drops the source registry host:
	// ghcr.io/kyverno/kyverno -> sea.hub:5000/kyverno/kyverno (sealer's layout).
	PathStyleStrip PathStyle = "strip"
	// PathStyleNest keeps the source host as the first path component:
	// quay.io/team/app -> sea.hub:5000/quay.io/team/app.
	PathStyleNest PathStyle = "nest"
)

// ImageField names an extra image field on a kind, for images that do not
// sit in a Pod spec and that the built-in table of known operator kinds
// (Prometheus, Tekton, Argo Workflows, KubeVirt, tigera, Istio, Kiali, ...)
// does not cover. Its Type says what the field holds:
//
//	# a whole image reference (the default)
//	- {group: example.com, kind: Runner, path: "spec.jobs[].image"}
//	# one reference split over keys of the map at path
//	- {group: example.com, kind: Db, path: spec.image, type: split, registry: registry, repository: repository, tag: tag, digest: digest}
//	# a registry (and path prefix) the kind's operator puts before the
//	# names of the images it starts
//	- {group: example.com, kind: Mesh, path: spec.hub, type: registry}
type ImageField struct {
	// Group is the API group of the kind ("" for the core group).
	Group string `yaml:"group,omitempty" json:"group,omitempty"`
	// Kind is the object kind, "Prometheus".
	Kind string `yaml:"kind" json:"kind"`
	// Path is a dot-separated field path; "[]" after a segment means every
	// item of that list: "spec.image", "spec.steps[].image". For a split
	// reference it is the map holding the parts.
	Path string `yaml:"path" json:"path"`
	// Type is FieldImage (or empty), FieldSplit or FieldRegistry.
	Type FieldType `yaml:"type,omitempty" json:"type,omitempty"`
	// Registry, Repository, Tag and Digest are, for a split reference, the
	// dot-separated paths (relative to Path) of the fields holding its
	// parts: the composed reference is registry/repository:tag@digest.
	// Repository is required; the others are optional. Only the registry
	// part (the repository part when there is no registry field) is
	// rewritten.
	Registry   string `yaml:"registry,omitempty" json:"registry,omitempty"`
	Repository string `yaml:"repository,omitempty" json:"repository,omitempty"`
	Tag        string `yaml:"tag,omitempty" json:"tag,omitempty"`
	Digest     string `yaml:"digest,omitempty" json:"digest,omitempty"`
	// Add says, for a registry setting, that an absent (or empty) field
	// means a public registry without a path, as for tigera's
	// Installation.spec.registry: rehost then adds the field with the
	// target registry (Config.NoAddRegistry turns additions off).
	Add bool `yaml:"add,omitempty" json:"add,omitempty"`
	// TrailingSlash says an added registry setting ends in "/" (tigera
	// requires it). A present value keeps its own trailing slash, or none.
	TrailingSlash bool `yaml:"trailingSlash,omitempty" json:"trailingSlash,omitempty"`
}

// FieldType says what an ImageField holds.
type FieldType string

const (
	// FieldImage is a whole image reference.
	FieldImage FieldType = "image"
	// FieldSplit is a reference spelled over sibling keys (repository, tag,
	// digest, registry).
	FieldSplit FieldType = "split"
	// FieldRegistry is a registry setting: a registry host with an optional
	// path prefix, which an operator puts before the images it starts.
	FieldRegistry FieldType = "registry"
)

// Config is the one configuration schema of rehost: the --config file, the
// KRM functionConfig and the Go options all use it.
//
//	apiVersion: rehost.dev/v1alpha1
//	kind: RewriteConfig
//	registry: sea.hub:5000
//	pathStyle: strip
//	exclude: [sea.hub:5000, docker.io/library/busybox]
//	imageFields:
//	- {group: example.com, kind: Widget, path: spec.runner.image}
//	rewriteEmbedded: false
//	chartsPath: charts
//	sourceMirrors:
//	- {prefix: docker.io, mirror: mirror.corp:5000/dockerhub}
type Config struct {
	APIVersion string      `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Kind       string      `yaml:"kind,omitempty" json:"kind,omitempty"`
	Metadata   *ObjectMeta `yaml:"metadata,omitempty" json:"metadata,omitempty"`

	// Registry is the target, "host[:port]" or "host[:port]/prefix".
	// Empty means DefaultRegistry.
	Registry string `yaml:"registry,omitempty" json:"registry,omitempty"`
	// PathStyle is "strip" (the default) or "nest".
	PathStyle PathStyle `yaml:"pathStyle,omitempty" json:"pathStyle,omitempty"`
	// Exclude lists registry hosts ("quay.io") and repository prefixes
	// ("docker.io/library/busybox") whose images are left as written.
	Exclude []string `yaml:"exclude,omitempty" json:"exclude,omitempty"`
	// ImageFields adds image fields on custom kinds.
	ImageFields []ImageField `yaml:"imageFields,omitempty" json:"imageFields,omitempty"`
	// SkipInvalid turns invalid image references into warnings and leaves
	// their values untouched.
	SkipInvalid bool `yaml:"skipInvalid,omitempty" json:"skipInvalid,omitempty"`
	// RewriteEmbedded also rewrites the image references embedded in
	// string values (container args and command, env values, ConfigMap
	// data, annotations), in place inside the string. They are always
	// found and reported; by default only the named ones (see
	// NoNamedEmbedded) are rewritten, the others left as written.
	RewriteEmbedded bool `yaml:"rewriteEmbedded,omitempty" json:"rewriteEmbedded,omitempty"`
	// NoNamedEmbedded leaves named embedded references (the value of a
	// container argument --*-image=, the whole value of an env var whose
	// name says image: *_IMAGE, RELATED_IMAGE_*) as written and unlisted,
	// like the other embedded references. By default they are listed and
	// rewritten like image fields.
	NoNamedEmbedded bool `yaml:"noNamedEmbedded,omitempty" json:"noNamedEmbedded,omitempty"`
	// NoGuessImages leaves as written, and unlisted, the images that rehost
	// finds in custom resources of kinds it has no entries for by the name
	// of their keys (image, baseImage, sidecarImage, SIDECAR_IMAGE, ...;
	// see docs/guessed-images.md). By default they are listed and rewritten
	// like image fields, marked guessed, and one warning sums them up.
	NoGuessImages bool `yaml:"noGuessImages,omitempty" json:"noGuessImages,omitempty"`
	// NoAddRegistry turns off adding registry settings that are absent
	// (tigera's Installation.spec.registry): absent settings are then only
	// reported.
	NoAddRegistry bool `yaml:"noAddRegistry,omitempty" json:"noAddRegistry,omitempty"`
	// ChartsPath is the repository path, below the registry and its
	// prefix, where the charts are (rehost mirror pushes chart NAME at
	// VERSION to <registry>/<chartsPath>/NAME:VERSION): the GitOps chart
	// sources (Flux HelmRepository and OCIRepository, Argo CD Application
	// and ApplicationSet sources with a chart) are rewritten to point
	// there. Empty means DefaultChartsPath, "charts".
	ChartsPath string `yaml:"chartsPath,omitempty" json:"chartsPath,omitempty"`
	// NoChartSources leaves the GitOps chart sources as written and
	// unlisted (see docs/gitops.md); a Flux OCIRepository of a chart is
	// then an OCI artifact like any other, mapped as an image.
	NoChartSources bool `yaml:"noChartSources,omitempty" json:"noChartSources,omitempty"`
	// SourceMirrors are where images are pulled from instead of their
	// registry (rehost mirror; see SourceMirror): a corporate mirror or
	// pull-through cache of docker.io, quay.io, ... Longest prefix first,
	// path components whole. The mapping ignores them: manifests, targets
	// and image lists keep the images' own names.
	SourceMirrors []SourceMirror `yaml:"sourceMirrors,omitempty" json:"sourceMirrors,omitempty"`
	// ImageList, when set, makes the KRM function (rehost fn) add or update
	// a ConfigMap that carries the image list. Off by default; the other
	// commands ignore it.
	ImageList *ImageListConfig `yaml:"imageList,omitempty" json:"imageList,omitempty"`
}

// ObjectMeta is the metadata of a RewriteConfig written as a Kubernetes
// object (a KRM functionConfig): rehost reads none of it.
type ObjectMeta struct {
	Name        string            `yaml:"name,omitempty" json:"name,omitempty"`
	Namespace   string            `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// ImageListConfig says where the KRM function puts the image list: a
// ConfigMap named ConfigMapName, whose data.imageList holds the sorted
// unique fully qualified source images, one per line (a sealer imageList).
//
//	imageList:
//	  configMapName: rehost-images
type ImageListConfig struct {
	// ConfigMapName is the name of the ConfigMap, a DNS subdomain name.
	ConfigMapName string `yaml:"configMapName" json:"configMapName"`
}

// LoadConfig decodes a RewriteConfig document. Unknown fields are an error
// naming the field, and so is a registry field written but empty
// ("registry:" or "registry: \"\"", typically an unset variable): leaving
// it out means DefaultRegistry.
func LoadConfig(data []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		return c, fmt.Errorf("config: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if c.Registry == "" {
		var probe struct {
			Registry yaml.Node `yaml:"registry"`
		}
		if err := yaml.Unmarshal(data, &probe); err == nil && probe.Registry.Kind != 0 {
			return c, &ConfigError{Field: "registry", Reason: ErrEmptyRegistry.Error()}
		}
	}
	if err := c.Validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && strings.HasPrefix(ce.Field, "sourceMirrors[") {
			ce.Line = sourceMirrorLine(data, ce.Field)
		}
		return c, err
	}
	return c, nil
}

// checkSourceMirrors checks the sourceMirrors entries: each, then no
// prefix twice.
func checkSourceMirrors(ms []SourceMirror) error {
	for i, m := range ms {
		if _, _, err := m.parse(); err != nil {
			var se *SourceMirrorError
			if errors.As(err, &se) && se.Field != "" {
				return &ConfigError{Field: fmt.Sprintf("sourceMirrors[%d].%s", i, se.Field), Reason: fmt.Sprintf("%q: %s", se.Value, se.Reason)}
			}
			return &ConfigError{Field: fmt.Sprintf("sourceMirrors[%d]", i), Reason: err.Error()}
		}
	}
	if _, err := NewSourceMirrors(ms); err != nil {
		var de *DuplicatePrefixError
		if errors.As(err, &de) {
			return &ConfigError{Field: fmt.Sprintf("sourceMirrors[%d].prefix", de.Second), Reason: fmt.Sprintf("%s is mapped twice (sourceMirrors[%d] maps it too): give each prefix one mirror", de.Prefix, de.First)}
		}
		return &ConfigError{Field: "sourceMirrors", Reason: err.Error()}
	}
	return nil
}

// sourceMirrorLine is the line of the sourceMirrors entry that field
// ("sourceMirrors[2].prefix") names in the config document data, 0 when
// it cannot be found.
func sourceMirrorLine(data []byte, field string) int {
	var i int
	var key string
	if _, err := fmt.Sscanf(strings.Replace(field, "].", "] ", 1), "sourceMirrors[%d] %s", &i, &key); err != nil {
		if _, err := fmt.Sscanf(field, "sourceMirrors[%d]", &i); err != nil {
			return 0
		}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 0
	}
	list := yamlnode.First(doc.Content[0], "sourceMirrors")
	if list == nil || list.Kind != yaml.SequenceNode || i >= len(list.Content) {
		return 0
	}
	entry := list.Content[i]
	if v := yamlnode.First(entry, key); v != nil && key != "" {
		return v.Line
	}
	return entry.Line
}

// ErrEmptyRegistry is the reason given for a registry set to the empty
// string where a user wrote one (a flag, a config field).
var ErrEmptyRegistry = errors.New("empty (an unset variable?): give host[:port][/prefix], or leave it out for the default " + DefaultRegistry)

// Validate checks the config and reports the first problem.
func (c Config) Validate() error {
	if c.APIVersion != "" && c.APIVersion != APIVersion {
		return &ConfigError{Field: "apiVersion", Reason: fmt.Sprintf("got %s, want %q", bounded.Quote(c.APIVersion), APIVersion)}
	}
	if c.Kind != "" && c.Kind != Kind {
		return &ConfigError{Field: "kind", Reason: fmt.Sprintf("got %s, want %q", bounded.Quote(c.Kind), Kind)}
	}
	_, prefix, err := splitRegistry(c.registry())
	if err != nil {
		return &ConfigError{Field: "registry", Reason: err.Error()}
	}
	if c.ChartsPath != "" {
		if err := checkChartsPath(c.ChartsPath); err != nil {
			return &ConfigError{Field: "chartsPath", Reason: err.Error()}
		}
	}
	switch c.PathStyle {
	case "", PathStyleStrip, PathStyleNest:
	default:
		return &ConfigError{Field: "pathStyle", Reason: fmt.Sprintf("got %s, want %q or %q", bounded.Quote(string(c.PathStyle)), PathStyleStrip, PathStyleNest)}
	}
	if err := checkPrefixRoom(prefix, c.pathStyle()); err != nil {
		return &ConfigError{Field: "registry", Reason: err.Error(), Err: err}
	}
	for i, e := range c.Exclude {
		if _, err := parseExclude(e); err != nil {
			return &ConfigError{Field: fmt.Sprintf("exclude[%d]", i), Reason: err.Error()}
		}
	}
	for i, f := range c.ImageFields {
		if f.Kind == "" {
			return &ConfigError{Field: fmt.Sprintf("imageFields[%d].kind", i), Reason: "required"}
		}
		if _, err := ParseFieldPath(f.Path); err != nil {
			return &ConfigError{Field: fmt.Sprintf("imageFields[%d].path", i), Reason: err.Error()}
		}
		if err := f.validateType(); err != nil {
			err.Field = fmt.Sprintf("imageFields[%d].%s", i, err.Field)
			return err
		}
	}
	if err := checkSourceMirrors(c.SourceMirrors); err != nil {
		return err
	}
	if c.ImageList != nil {
		n := c.ImageList.ConfigMapName
		if n == "" {
			return &ConfigError{Field: "imageList.configMapName", Reason: "required"}
		}
		if err := checkDNSSubdomain(n); err != nil {
			return &ConfigError{Field: "imageList.configMapName", Reason: fmt.Sprintf("%s: %v", bounded.Quote(n), err)}
		}
	}
	return nil
}

// minNestHost is the shortest path component a source host gives in path
// style nest: "a.b", or "a_1" for "a:1".
const minNestHost = 3

// checkPrefixRoom refuses a registry path prefix that leaves no room for
// any image below it (see PrefixTooLongError).
func checkPrefixRoom(prefix string, style PathStyle) error {
	if prefix == "" {
		return nil
	}
	room := MaxRepositoryPath - len("/a")
	if style == PathStyleNest {
		room -= minNestHost + len("/")
	}
	if n := utf8.RuneCountInString(prefix); n > room {
		return &PrefixTooLongError{Prefix: prefix, Length: n, Max: room, Style: style}
	}
	return nil
}

func (c Config) registry() string {
	if c.Registry == "" {
		return DefaultRegistry
	}
	return c.Registry
}

func (c Config) chartsPath() string {
	if c.ChartsPath == "" {
		return DefaultChartsPath
	}
	return c.ChartsPath
}

// checkChartsPath checks a charts path: repository path components, no
// leading or trailing slash.
func checkChartsPath(p string) error {
	if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("%s: want a repository path without leading or trailing slash, like charts or helm/charts", bounded.Quote(p))
	}
	if err := checkPath(p); err != nil {
		return fmt.Errorf("%s: %v", bounded.Quote(p), err)
	}
	return nil
}

func (c Config) pathStyle() PathStyle {
	if c.PathStyle == "" {
		return PathStyleStrip
	}
	return c.PathStyle
}

// dnsSubdomain is a DNS subdomain name as Kubernetes validates object
// names (RFC 1123, k8s.io/apimachinery/pkg/util/validation), written here so
// that importing this package does not pull in the Kubernetes libraries.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// checkDNSSubdomain checks an object name as Kubernetes does.
func checkDNSSubdomain(s string) error {
	if len(s) > 253 {
		return fmt.Errorf("must be no more than 253 characters")
	}
	if !dnsSubdomain.MatchString(s) {
		return fmt.Errorf("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character")
	}
	return nil
}

// splitRegistry splits "host[:port][/prefix]" and validates both parts.
func splitRegistry(s string) (host, prefix string, err error) {
	s = strings.TrimSuffix(s, "/")
	if strings.Contains(s, "://") {
		return "", "", fmt.Errorf("%s: want host[:port][/prefix] without a scheme", bounded.Quote(s))
	}
	host, prefix, _ = strings.Cut(s, "/")
	if err := checkHost(host); err != nil {
		return "", "", fmt.Errorf("%s: %v", bounded.Quote(s), err)
	}
	if prefix != "" {
		if err := checkPath(prefix); err != nil {
			return "", "", fmt.Errorf("%s: prefix: %v", bounded.Quote(s), err)
		}
	}
	return host, prefix, nil
}

// FieldPath is a parsed ImageField path.
type FieldPath []FieldSegment

// FieldSegment is one step of a FieldPath: a map key, and whether the value
// is a list whose every item the rest of the path applies to.
type FieldSegment struct {
	Key  string
	Each bool
}

// ParseFieldPath parses "spec.steps[].image".
func ParseFieldPath(p string) (FieldPath, error) {
	if p == "" {
		return nil, errors.New("required")
	}
	var out FieldPath
	for _, part := range strings.Split(p, ".") {
		seg := FieldSegment{Key: part}
		if k, ok := strings.CutSuffix(part, "[]"); ok {
			seg = FieldSegment{Key: k, Each: true}
		}
		if seg.Key == "" || strings.ContainsAny(seg.Key, "[]") {
			return nil, fmt.Errorf("%s: want dot-separated keys, each optionally followed by [] for every list item", bounded.Quote(p))
		}
		out = append(out, seg)
	}
	return out, nil
}

// validateType checks the fields that belong to the entry's type.
func (f ImageField) validateType() *ConfigError {
	parts := map[string]string{"registry": f.Registry, "repository": f.Repository, "tag": f.Tag, "digest": f.Digest}
	switch f.Type {
	case "", FieldImage, FieldRegistry:
		for _, k := range []string{"registry", "repository", "tag", "digest"} {
			if parts[k] != "" {
				return &ConfigError{Field: k, Reason: fmt.Sprintf("only for type %s", FieldSplit)}
			}
		}
		if f.Type != FieldRegistry && (f.Add || f.TrailingSlash) {
			return &ConfigError{Field: "add", Reason: fmt.Sprintf("add and trailingSlash are only for type %s", FieldRegistry)}
		}
	case FieldSplit:
		if f.Repository == "" {
			return &ConfigError{Field: "repository", Reason: "required for type split"}
		}
		for _, k := range []string{"registry", "repository", "tag", "digest"} {
			if parts[k] == "" {
				continue
			}
			p, err := ParseFieldPath(parts[k])
			if err == nil {
				for _, s := range p {
					if s.Each {
						err = fmt.Errorf("%s: no [] in the path of a part", bounded.Quote(parts[k]))
					}
				}
			}
			if err != nil {
				return &ConfigError{Field: k, Reason: err.Error()}
			}
		}
		if f.Add || f.TrailingSlash {
			return &ConfigError{Field: "add", Reason: fmt.Sprintf("add and trailingSlash are only for type %s", FieldRegistry)}
		}
	default:
		return &ConfigError{Field: "type", Reason: fmt.Sprintf("got %s, want %s, %s or %s", bounded.Quote(string(f.Type)), FieldImage, FieldSplit, FieldRegistry)}
	}
	return nil
}
