package rewrite

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// dockerHub is how rehost spells Docker Hub in image lists and targets.
// go-containerregistry normalises it to "index.docker.io"; users and sealer
// write "docker.io".
const dockerHub = "docker.io"

// validHost is the domain of the distribution reference grammar (which
// go-containerregistry's weak validation does not enforce): dot-separated
// labels of letters, digits and inner hyphens, or a bracketed IPv6 address,
// with an optional port.
var validHost = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$`)

// validComponent is a repository path component and validTag a tag of the
// distribution reference grammar; go-containerregistry checks only their
// characters.
var (
	validComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	validTag       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// checkPath checks every component of a repository path.
func checkPath(path string) error {
	for _, c := range strings.Split(path, "/") {
		if !validComponent.MatchString(c) {
			return fmt.Errorf("repository path component %q of %q must be lower-case letters and digits, separated by '.', '_', '__' or '-'", c, path)
		}
	}
	return nil
}

// Ref is a parsed image reference. It keeps the tag and digest exactly as
// written, so a reference without a tag stays without one when it is mapped.
type Ref struct {
	// Registry is the registry host (with port), "docker.io" for Docker Hub.
	Registry string
	// Repository is the repository path inside the registry, with the
	// implicit "library/" of Docker Hub official images made explicit.
	Repository string
	// Tag is the tag as written, or "" when none was written.
	Tag string
	// Digest is the digest as written ("sha256:…"), or "" when none was written.
	Digest string
}

// ParseRef parses an image reference as a container runtime would,
// using go-containerregistry's name package. It accepts a tag, a digest, or
// both ("repo:tag@sha256:…").
func ParseRef(s string) (Ref, error) {
	if s == "" {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: "empty image reference"}
	}
	if strings.Contains(s, "{{") {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: "unrendered Helm template", Hint: "render the chart first: pass the chart directory to rehost instead of its templates"}
	}
	if strings.TrimSpace(s) != s {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: "leading or trailing white space"}
	}
	base, digest, hasDigest := strings.Cut(s, "@")
	var repo name.Repository
	var tag string
	if hasDigest {
		d, err := name.NewDigest(s)
		if err != nil {
			return Ref{}, &InvalidReferenceError{Value: s, Reason: err.Error()}
		}
		repo, digest = d.Context(), d.DigestStr()
	}
	// An empty default tag tells us whether a tag was written at all.
	t, err := name.NewTag(base, name.WithDefaultTag(""))
	if err != nil {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: err.Error()}
	}
	if !hasDigest {
		repo = t.Context()
	}
	tag = t.TagStr()
	if host := repo.RegistryStr(); !validHost.MatchString(host) {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: fmt.Sprintf("registry host %q is not a domain name, IP address or localhost, with an optional port", host)}
	}
	if err := checkPath(repo.RepositoryStr()); err != nil {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: err.Error()}
	}
	if tag != "" && !validTag.MatchString(tag) {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: fmt.Sprintf("tag %q must start with a letter, digit or _ and have at most 128 characters", tag)}
	}
	return Ref{Registry: normalizeHost(repo.RegistryStr()), Repository: repo.RepositoryStr(), Tag: tag, Digest: digest}, nil
}

// RepositoryName is the fully qualified repository, "docker.io/library/nginx".
func (r Ref) RepositoryName() string { return r.Registry + "/" + r.Repository }

// suffix is ":tag", "@digest" or ":tag@digest", as written.
func (r Ref) suffix() string {
	var b strings.Builder
	if r.Tag != "" {
		b.WriteString(":" + r.Tag)
	}
	if r.Digest != "" {
		b.WriteString("@" + r.Digest)
	}
	return b.String()
}

// String is the reference as a runtime would pull it, tag and digest as
// written: "docker.io/library/nginx" stays without a tag.
func (r Ref) String() string { return r.RepositoryName() + r.suffix() }

// Qualified is the fully qualified reference with ":latest" made explicit
// when neither tag nor digest was written: the form of a sealer imageList.
func (r Ref) Qualified() string {
	if r.Tag == "" && r.Digest == "" {
		return r.RepositoryName() + ":latest"
	}
	return r.String()
}
