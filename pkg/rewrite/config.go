package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
// (Prometheus, Tekton, Argo Workflows, KubeVirt, ...) does not cover.
type ImageField struct {
	// Group is the API group of the kind ("" for the core group).
	Group string `yaml:"group,omitempty" json:"group,omitempty"`
	// Kind is the object kind, "Prometheus".
	Kind string `yaml:"kind" json:"kind"`
	// Path is a dot-separated field path; "[]" after a segment means every
	// item of that list: "spec.image", "spec.steps[].image".
	Path string `yaml:"path" json:"path"`
}

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
type Config struct {
	APIVersion string           `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Kind       string           `yaml:"kind,omitempty" json:"kind,omitempty"`
	Metadata   *yaml.ObjectMeta `yaml:"metadata,omitempty" json:"metadata,omitempty"`

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
	// found and reported; by default they are left as written.
	RewriteEmbedded bool `yaml:"rewriteEmbedded,omitempty" json:"rewriteEmbedded,omitempty"`
	// ImageList, when set, makes the KRM function (rehost fn) add or update
	// a ConfigMap that carries the image list. Off by default; the other
	// commands ignore it.
	ImageList *ImageListConfig `yaml:"imageList,omitempty" json:"imageList,omitempty"`
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
	return c, c.Validate()
}

// ErrEmptyRegistry is the reason given for a registry set to the empty
// string where a user wrote one (a flag, a config field).
var ErrEmptyRegistry = errors.New("empty (an unset variable?): give host[:port][/prefix], or leave it out for the default " + DefaultRegistry)

// Validate checks the config and reports the first problem.
func (c Config) Validate() error {
	if c.APIVersion != "" && c.APIVersion != APIVersion {
		return &ConfigError{Field: "apiVersion", Reason: fmt.Sprintf("got %q, want %q", c.APIVersion, APIVersion)}
	}
	if c.Kind != "" && c.Kind != Kind {
		return &ConfigError{Field: "kind", Reason: fmt.Sprintf("got %q, want %q", c.Kind, Kind)}
	}
	if _, _, err := splitRegistry(c.registry()); err != nil {
		return &ConfigError{Field: "registry", Reason: err.Error()}
	}
	switch c.PathStyle {
	case "", PathStyleStrip, PathStyleNest:
	default:
		return &ConfigError{Field: "pathStyle", Reason: fmt.Sprintf("got %q, want %q or %q", c.PathStyle, PathStyleStrip, PathStyleNest)}
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
	}
	if c.ImageList != nil {
		n := c.ImageList.ConfigMapName
		if n == "" {
			return &ConfigError{Field: "imageList.configMapName", Reason: "required"}
		}
		if err := checkDNSSubdomain(n); err != nil {
			return &ConfigError{Field: "imageList.configMapName", Reason: fmt.Sprintf("%q: %v", n, err)}
		}
	}
	return nil
}

func (c Config) registry() string {
	if c.Registry == "" {
		return DefaultRegistry
	}
	return c.Registry
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
		return "", "", fmt.Errorf("%q: want host[:port][/prefix] without a scheme", s)
	}
	host, prefix, _ = strings.Cut(s, "/")
	if _, err := name.NewRegistry(host, name.StrictValidation); err != nil {
		return "", "", fmt.Errorf("%q: %v", s, err)
	}
	if prefix != "" {
		if err := checkPath(prefix); err != nil {
			return "", "", fmt.Errorf("%q: prefix: %v", s, err)
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
			return nil, fmt.Errorf("%q: want dot-separated keys, each optionally followed by [] for every list item", p)
		}
		out = append(out, seg)
	}
	return out, nil
}
