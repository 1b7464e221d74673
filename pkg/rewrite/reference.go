package rewrite

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/internal/refgrammar"
)

// dockerHub is how rehost spells Docker Hub in image lists and targets, as
// docker and containerd normalise it; "index.docker.io" is the same
// registry.
const dockerHub = "docker.io"

// repositoryChars are the characters of a repository path.
const repositoryChars = "abcdefghijklmnopqrstuvwxyz0123456789_-./"

// digestHexLen is the length of the hex encoding of each digest algorithm
// the OCI image spec registers.
var digestHexLen = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// checkHost checks a registry host ("sea.hub:5000", "localhost", "[::1]:5000").
func checkHost(host string) error {
	ok := refgrammar.Host(host)
	if ok && strings.HasPrefix(host, "[") {
		// An IP literal is an IPv6 address (RFC 3986).
		addr, err := netip.ParseAddr(host[1:strings.IndexByte(host, ']')])
		ok = err == nil && addr.Is6()
	}
	if !ok {
		return fmt.Errorf("registry host %s is not a domain name, IP address or localhost, with an optional port", bounded.Quote(host))
	}
	return nil
}

// checkPath checks every component of a repository path.
func checkPath(path string) error {
	for _, c := range strings.Split(path, "/") {
		if !refgrammar.Component(c) {
			return fmt.Errorf("repository path component %s of %s must be lower-case letters and digits, separated by '.', '_', '__' or '-'", bounded.Quote(c), bounded.Quote(path))
		}
	}
	return nil
}

// checkDigest checks "algorithm:hex": a registered algorithm and its
// length of lower-case hex digits.
func checkDigest(d string) error {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok || alg == "" || hex == "" {
		return fmt.Errorf("digest %s: want algorithm:hex, like sha256:<64 hex digits>", bounded.Quote(d))
	}
	n, known := digestHexLen[alg]
	if !known {
		return fmt.Errorf("digest %s: unsupported algorithm %s (want sha256, sha384 or sha512)", bounded.Quote(d), bounded.Quote(alg))
	}
	if len(hex) != n || strings.IndexFunc(hex, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }) >= 0 {
		return fmt.Errorf("digest %s: want %d lower-case hex digits after %s:", bounded.Quote(d), n, alg)
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

// ParseRef parses an image reference as a container runtime would: the
// distribution reference grammar (the one docker and containerd use),
// with Docker Hub's normalisation ("nginx" is "docker.io/library/nginx";
// "index.docker.io" is "docker.io"). It accepts a tag, a digest (sha256,
// sha384 or sha512), or both ("repo:tag@sha256:…"), and keeps them as
// written. The first path component is the registry host when it is
// "localhost" or holds a '.' or ':'.
//
// It is written here rather than taken from a library so that the core
// module requires no reference parser: go-containerregistry's pkg/name
// would bring its whole module (docker/cli, image-spec, …) to every
// importer, and github.com/distribution/reference accepts sha384 and
// sha512 digests only in programs that link crypto/sha512 (go-digest's
// process-wide algorithm registry) and reads an invalid host such as
// "bad_host.io/x" as a path without a registry. The test module
// test/parity holds it equal to go-containerregistry's parser with the
// grammar checks rehost made on top, on the corpora and by fuzzing.
func ParseRef(s string) (Ref, error) {
	bad := func(reason string) (Ref, error) {
		return Ref{}, &InvalidReferenceError{Value: s, Reason: reason}
	}
	switch {
	case s == "":
		return bad("empty image reference")
	case strings.Contains(s, "{{"):
		return Ref{}, &InvalidReferenceError{Value: s, Reason: "unrendered Helm template", Hint: "render the chart first: pass the chart directory to rehost instead of its templates"}
	case strings.TrimSpace(s) != s:
		return bad("leading or trailing white space")
	}
	name, digest, hasDigest := strings.Cut(s, "@")
	if hasDigest {
		if strings.Contains(digest, "@") {
			return bad("a digest must contain exactly one '@' separator (e.g. registry/repository@digest)")
		}
		if err := checkDigest(digest); err != nil {
			return bad(err.Error())
		}
	}
	var tag string
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name[i+1:], "/") {
		name, tag = name[:i], name[i+1:]
		switch {
		case tag == "":
			return bad("a tag name must follow the colon")
		case !refgrammar.Tag(tag):
			return bad(fmt.Sprintf("tag %s must start with a letter, digit or _ and have at most 128 characters", bounded.Quote(tag)))
		}
	}
	if name == "" {
		return bad("a repository name must be specified")
	}
	host, path := "", name
	if first, rest, ok := strings.Cut(name, "/"); ok && (first == "localhost" || strings.ContainsAny(first, ".:")) {
		host, path = first, rest
	}
	if n := utf8.RuneCountInString(path); n < 1 || n > 255 {
		return bad("repository must be between 1 and 255 characters in length: " + bounded.Cut(path, bounded.MaxQuoted))
	}
	if strings.IndexFunc(path, func(r rune) bool { return !strings.ContainsRune(repositoryChars, r) }) >= 0 {
		return bad("repository can only contain the characters `" + repositoryChars + "`: " + bounded.Cut(path, bounded.MaxQuoted))
	}
	if host == "" {
		host = dockerHub
	} else if err := checkHost(host); err != nil {
		return bad(err.Error())
	}
	// Official images get "library/" only where Docker Hub is spelled as
	// docker and containerd spell it (case and all); "Docker.IO/nginx"
	// stays a one-component path, as they read it.
	if (host == dockerHub || host == "index.docker.io") && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	host = normalizeHost(host)
	if err := checkPath(path); err != nil {
		return bad(err.Error())
	}
	return Ref{Registry: host, Repository: path, Tag: tag, Digest: digest}, nil
}

// RepositoryName is the fully qualified repository, "docker.io/library/nginx".
func (r Ref) RepositoryName() string { return r.Registry + "/" + r.Repository }

// String is the reference as a runtime would pull it, tag and digest as
// written: "docker.io/library/nginx" stays without a tag.
func (r Ref) String() string {
	var b strings.Builder
	b.Grow(len(r.Registry) + 1 + len(r.Repository) + 1 + len(r.Tag) + 1 + len(r.Digest))
	b.WriteString(r.Registry)
	b.WriteByte('/')
	b.WriteString(r.Repository)
	if r.Tag != "" {
		b.WriteByte(':')
		b.WriteString(r.Tag)
	}
	if r.Digest != "" {
		b.WriteByte('@')
		b.WriteString(r.Digest)
	}
	return b.String()
}

// isQualified reports whether q is r.Qualified(), without building it.
func (r Ref) isQualified(q string) bool {
	rest, ok := strings.CutPrefix(q, r.Registry)
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, "/"); !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, r.Repository); !ok {
		return false
	}
	if r.Tag == "" && r.Digest == "" {
		return rest == ":latest"
	}
	if r.Tag != "" {
		if rest, ok = strings.CutPrefix(rest, ":"); !ok {
			return false
		}
		if rest, ok = strings.CutPrefix(rest, r.Tag); !ok {
			return false
		}
	}
	if r.Digest != "" {
		if rest, ok = strings.CutPrefix(rest, "@"); !ok {
			return false
		}
		if rest, ok = strings.CutPrefix(rest, r.Digest); !ok {
			return false
		}
	}
	return rest == ""
}

// Qualified is the fully qualified reference with ":latest" made explicit
// when neither tag nor digest was written: the form of a sealer imageList.
func (r Ref) Qualified() string {
	if r.Tag == "" && r.Digest == "" {
		return r.RepositoryName() + ":latest"
	}
	return r.String()
}
