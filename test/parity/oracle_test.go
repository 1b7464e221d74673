package parity

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/rehost/rehost/pkg/rewrite"
)

// The reference parser rehost used until it had its own, kept verbatim as
// the oracle (only the names it needs from package rewrite qualified).

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

// ggcrParseRef is rewrite.ParseRef as it was before rehost had its own
// parser (commit 8c1c38f): go-containerregistry's name package. It accepts a tag, a digest, or
// both ("repo:tag@sha256:…").
func ggcrParseRef(s string) (rewrite.Ref, error) {
	if s == "" {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: "empty image reference"}
	}
	if strings.Contains(s, "{{") {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: "unrendered Helm template", Hint: "render the chart first: pass the chart directory to rehost instead of its templates"}
	}
	if strings.TrimSpace(s) != s {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: "leading or trailing white space"}
	}
	base, digest, hasDigest := strings.Cut(s, "@")
	var repo name.Repository
	var tag string
	if hasDigest {
		d, err := name.NewDigest(s)
		if err != nil {
			return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: err.Error()}
		}
		repo, digest = d.Context(), d.DigestStr()
	}
	// An empty default tag tells us whether a tag was written at all.
	t, err := name.NewTag(base, name.WithDefaultTag(""))
	if err != nil {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: err.Error()}
	}
	if !hasDigest {
		repo = t.Context()
	}
	tag = t.TagStr()
	if host := repo.RegistryStr(); !validHost.MatchString(host) {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: fmt.Sprintf("registry host %q is not a domain name, IP address or localhost, with an optional port", host)}
	}
	if err := checkPath(repo.RepositoryStr()); err != nil {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: err.Error()}
	}
	if tag != "" && !validTag.MatchString(tag) {
		return rewrite.Ref{}, &rewrite.InvalidReferenceError{Value: s, Reason: fmt.Sprintf("tag %q must start with a letter, digit or _ and have at most 128 characters", tag)}
	}
	return rewrite.Ref{Registry: normalizeHost(repo.RegistryStr()), Repository: repo.RepositoryStr(), Tag: tag, Digest: digest}, nil
}

// normalizeHost lower-cases a registry host and spells Docker Hub "docker.io".
func normalizeHost(h string) string {
	h = strings.ToLower(h)
	if h == name.DefaultRegistry {
		return "docker.io"
	}
	return h
}
