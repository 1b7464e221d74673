package rewrite

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
)

// Action says what the mapping did to an image.
type Action string

const (
	// Rewritten: the image moves to the target registry.
	Rewritten Action = "rewritten"
	// Excluded: an exclusion matched; the image stays as written.
	Excluded Action = "excluded"
	// InTarget: the image already is in the target registry; it stays as
	// written, which makes rewriting idempotent.
	InTarget Action = "in-target"
)

// Mapping is the result of mapping one image reference.
type Mapping struct {
	// Source is the reference as written, parsed.
	Source Ref
	// Target is where the image lives for the cluster: in the private
	// registry when Action is Rewritten, otherwise Source itself.
	Target Ref
	Action Action
}

// Mapper maps image references to the target registry. It is immutable and
// safe for concurrent use.
type Mapper struct {
	host, prefix string
	style        PathStyle
	excludes     []exclusion
	pins         Pins
	// chartsPath is where charts sit below the registry and its prefix.
	chartsPath string
}

// NewMapper builds a Mapper from the registry, path style and exclusions of c.
func NewMapper(c Config) (*Mapper, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	host, prefix, _ := splitRegistry(c.registry())
	m := &Mapper{host: normalizeHost(host), prefix: prefix, style: c.pathStyle(), chartsPath: c.chartsPath()}
	for _, e := range c.Exclude {
		ex, _ := parseExclude(e) // validated above
		m.excludes = append(m.excludes, ex)
	}
	return m, nil
}

// Map parses value and computes its target. The returned error is an
// *InvalidReferenceError for values that are not image references.
func (m *Mapper) Map(value string) (Mapping, error) {
	src, err := ParseRef(value)
	if err != nil {
		return Mapping{}, err
	}
	return m.MapRef(src)
}

// MapRef computes the target of a parsed reference.
func (m *Mapper) MapRef(src Ref) (Mapping, error) {
	if src.Registry == m.host {
		return Mapping{Source: src, Target: src, Action: InTarget}, nil
	}
	for _, ex := range m.excludes {
		if ex.matches(src) {
			return Mapping{Source: src, Target: src, Action: Excluded}, nil
		}
	}
	path := src.Repository
	if m.style == PathStyleNest {
		path = pathSafeHost(src.Registry) + "/" + path
	}
	if m.prefix != "" {
		path = m.prefix + "/" + path
	}
	if n := utf8.RuneCountInString(path); n > 255 {
		return Mapping{}, &InvalidReferenceError{Value: src.String(), Reason: fmt.Sprintf("target repository %s/%s: repository must be between 1 and 255 characters in length", m.host, path)}
	}
	target := Ref{Registry: m.host, Repository: path, Tag: src.Tag, Digest: src.Digest}
	return m.pin(Mapping{Source: src, Target: target, Action: Rewritten})
}

// Registry is the target registry host (with port).
func (m *Mapper) Registry() string { return m.host }

// Root is the target registry with its prefix, "sea.hub:5000" or
// "sea.hub:5000/prefix": the registry setting that, in strip style, maps
// every image of a public registry without a path.
func (m *Mapper) Root() string {
	if m.prefix != "" {
		return m.host + "/" + m.prefix
	}
	return m.host
}

// Style is the path style.
func (m *Mapper) Style() PathStyle { return m.style }

// Prefix is the repository path prefix of the target registry ("" when the
// registry has none): "prefix" for "sea.hub:5000/prefix".
func (m *Mapper) Prefix() string { return m.prefix }

// Exclusions returns the exclusions exactly as MapRef applies them, for
// programs that restate the mapping in another language (package policy):
// an image is excluded when its registry (normalised, "docker.io") is one
// of hosts, or when its repository name ("docker.io/library/busybox")
// equals one of repos or starts with it followed by "/".
func (m *Mapper) Exclusions() (hosts, repos []string) {
	for _, ex := range m.excludes {
		if ex.host != "" {
			hosts = append(hosts, ex.host)
		}
		repos = append(repos, ex.repos...)
	}
	return hosts, repos
}

// normalizeHost lower-cases a registry host and spells Docker Hub
// "docker.io", as the reference grammar does, also where it was written
// "index.docker.io".
func normalizeHost(h string) string {
	h = strings.ToLower(h)
	if h == "index.docker.io" {
		return dockerHub
	}
	return h
}

// pathSafeHost turns a registry host into a repository path component
// (path style nest): a port's ":" becomes "_"
// ("registry.example.com:8443" -> "registry.example.com_8443"). An IPv6
// address loses its brackets, a "::" that starts or ends it gets the zero
// it stands for, its colons become "_" and its port's ":" a "-"
// ("[::1]:5000" -> "0__1-5000", "[fd00::5]" -> "fd00__5",
// "[::ffff:1.2.3.4]" -> "0__ffff_1.2.3.4"). A DNS host gives at most one
// "_" and an IPv6 address at least two, so two hosts never share a
// component unless they are the same address. The policies (package
// policy) restate this in CEL and JMESPath; docs/mapping.md.
func pathSafeHost(h string) string {
	h = strings.ToLower(h)
	if !strings.HasPrefix(h, "[") {
		return strings.ReplaceAll(h, ":", "_")
	}
	end := strings.IndexByte(h, ']')
	addr, port := h[1:end], h[end+1:]
	if strings.HasPrefix(addr, "::") {
		addr = "0" + addr
	}
	if strings.HasSuffix(addr, "::") {
		addr += "0"
	}
	return strings.ReplaceAll(addr, ":", "_") + strings.ReplaceAll(port, ":", "-")
}

// exclusion matches a registry host, or a repository and everything below it.
type exclusion struct {
	host string // set for a host exclusion
	// repos are repository prefixes, "docker.io/library/busybox". A Docker
	// Hub prefix of one component written with its host
	// ("docker.io/bitnami") is ambiguous between an official image and a
	// namespace, and matches both; without a host ("busybox") it is the
	// official image.
	repos []string
}

func parseExclude(s string) (exclusion, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	if s == "" {
		return exclusion{}, fmt.Errorf("empty exclusion")
	}
	if !strings.Contains(s, "/") && (s == "localhost" || strings.ContainsAny(s, ".:")) {
		if err := checkHost(s); err != nil {
			return exclusion{}, fmt.Errorf("%s: %v", bounded.Quote(s), err)
		}
		return exclusion{host: normalizeHost(s)}, nil
	}
	r, err := ParseRef(s)
	if err == nil && (r.Tag != "" || r.Digest != "") {
		err = fmt.Errorf("a tag or digest names an image, not a repository")
	}
	if err != nil {
		var ie *InvalidReferenceError
		if errors.As(err, &ie) {
			err = errors.New(ie.Reason)
		}
		return exclusion{}, fmt.Errorf("%s: want a registry host or a repository prefix: %v", bounded.Quote(s), err)
	}
	host := r.Registry
	ex := exclusion{repos: []string{r.RepositoryName()}}
	first, _, _ := strings.Cut(s, "/")
	explicitHost := strings.ContainsAny(first, ".:") || first == "localhost"
	if host == dockerHub && explicitHost && !strings.Contains(s, "library/") && !strings.Contains(strings.TrimPrefix(r.Repository, "library/"), "/") {
		// "docker.io/bitnami": a namespace or the official image bitnami
		// (ParseRef added "library/"; the namespace reading drops
		// it). A bare "busybox" is the official image, as docker pull
		// reads it.
		ex.repos = append(ex.repos, host+"/"+strings.TrimPrefix(r.Repository, "library/"))
	}
	return ex, nil
}

func (e exclusion) matches(r Ref) bool {
	if e.host != "" {
		return r.Registry == e.host
	}
	n := r.RepositoryName()
	for _, p := range e.repos {
		if n == p || strings.HasPrefix(n, p+"/") {
			return true
		}
	}
	return false
}

// RegistryMapping is the result of mapping a registry setting.
type RegistryMapping struct {
	// Source is the setting as written; Target the setting that makes the
	// operator pull from the target registry (Source itself when Action is
	// not Rewritten).
	Source, Target string
	Action         Action
	// Narrower lists the exclusions that name repositories below the
	// setting: the operator pulls them from Target all the same, since one
	// setting serves all its images.
	Narrower []string
}

// registryProbe is the image name appended to a registry setting to map it
// as a reference: two components, so that Docker Hub adds no "library/".
const registryProbe = "rehost-probe/x"

// MapRegistry maps a registry setting: a registry host with an optional
// repository path prefix that an operator puts before the names of the
// images it starts ("quay.io/" for tigera's Installation.spec.registry,
// "docker.io/istio" for Istio's hub). The target setting gives, for every
// image name, the reference Map gives the full image: with --registry
// sea.hub:5000, "docker.io/istio" becomes "sea.hub:5000/istio" (strip) or
// "sea.hub:5000/docker.io/istio" (nest). A trailing "/" is kept. The value
// is an *InvalidReferenceError when it is not a registry with an optional
// path.
func (m *Mapper) MapRegistry(value string) (RegistryMapping, error) {
	s, slash := strings.CutSuffix(value, "/")
	bad := func(reason string) (RegistryMapping, error) {
		return RegistryMapping{}, &InvalidReferenceError{Value: value, Reason: reason}
	}
	if s == "" || strings.ContainsAny(s, "@") {
		return bad("want a registry host with an optional repository path, like quay.io/ or docker.io/istio")
	}
	src, err := ParseRef(s + "/" + registryProbe)
	if err != nil || src.Tag != "" {
		return bad("want a registry host with an optional repository path, like quay.io/ or docker.io/istio")
	}
	mp, err := m.MapRef(src)
	if err != nil {
		return RegistryMapping{}, err
	}
	out := RegistryMapping{Source: value, Target: value, Action: mp.Action}
	if mp.Action == Rewritten {
		out.Target = strings.TrimSuffix(mp.Target.RepositoryName(), "/"+registryProbe)
		if slash {
			out.Target += "/"
		}
		prefix := strings.TrimSuffix(src.RepositoryName(), "/"+registryProbe)
		for _, ex := range m.excludes {
			for _, r := range ex.repos {
				if strings.HasPrefix(r, prefix+"/") {
					out.Narrower = append(out.Narrower, r)
				}
			}
		}
	}
	return out, nil
}
