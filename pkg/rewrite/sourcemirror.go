package rewrite

import (
	"fmt"
	"sort"
	"strings"
)

// SourceMirror says that the images whose fully qualified name starts
// with Prefix are pulled from Mirror, Prefix replaced: with
// {Prefix: "docker.io", Mirror: "mirror.corp:5000/dockerhub"},
// docker.io/library/nginx:1.25 is pulled from
// mirror.corp:5000/dockerhub/library/nginx:1.25. It changes where images
// are read from, never their names: targets, image lists and pins keep
// the source's.
//
//	sourceMirrors:
//	- {prefix: docker.io, mirror: mirror.corp:5000/dockerhub}
//	- {prefix: quay.io/jetstack, mirror: mirror.corp:5000/jetstack}
type SourceMirror struct {
	// Prefix is a registry host, or a host and repository path:
	// "docker.io", "quay.io/jetstack", "registry.k8s.io". It covers the
	// repositories it names and those below it, path components whole
	// ("quay.io/jet" does not cover quay.io/jetstack/...). Docker Hub's
	// official images are under "docker.io/library".
	Prefix string `yaml:"prefix" json:"prefix"`
	// Mirror is where they are pulled from: a registry host[:port] and
	// an optional path, "mirror.corp:5000/dockerhub". No scheme.
	Mirror string `yaml:"mirror" json:"mirror"`
}

// String is "PREFIX=MIRROR", the form ParseSourceMirror reads.
func (m SourceMirror) String() string { return m.Prefix + "=" + m.Mirror }

// SourceMirrorError is an invalid source mirror: Field is "prefix",
// "mirror", or "" for the whole "PREFIX=MIRROR".
type SourceMirrorError struct {
	Value  string
	Field  string
	Reason string
}

func (e *SourceMirrorError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%q: %s", e.Value, e.Reason)
	}
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason)
}

// DuplicatePrefixError is a prefix given two mirrors: First and Second
// are the indexes of the two entries in the list given to
// NewSourceMirrors.
type DuplicatePrefixError struct {
	Prefix        string
	First, Second int
}

func (e *DuplicatePrefixError) Error() string {
	return fmt.Sprintf("prefix %s is mapped twice (entries %d and %d): give each prefix one mirror", e.Prefix, e.First, e.Second)
}

// ParseSourceMirror parses "PREFIX=MIRROR" ("docker.io=mirror.corp:5000/dockerhub")
// and checks both sides (see SourceMirror).
func ParseSourceMirror(s string) (SourceMirror, error) {
	prefix, mirror, ok := strings.Cut(s, "=")
	if !ok {
		return SourceMirror{}, &SourceMirrorError{Value: s, Reason: "want PREFIX=MIRROR, like docker.io=mirror.corp:5000/dockerhub"}
	}
	m := SourceMirror{Prefix: strings.TrimSpace(prefix), Mirror: strings.TrimSpace(mirror)}
	if _, _, err := m.parse(); err != nil {
		return SourceMirror{}, err
	}
	return m, nil
}

// Normalized checks m and returns it normalised: hosts in lower case,
// index.docker.io as docker.io, no trailing slash; two mirrors of the
// same prefix have the same Normalized().Prefix.
func (m SourceMirror) Normalized() (SourceMirror, error) {
	prefix, mirror, err := m.parse()
	if err != nil {
		return SourceMirror{}, err
	}
	return SourceMirror{Prefix: prefix, Mirror: mirror}, nil
}

// parse checks m and returns its prefix and mirror normalised: hosts in
// lower case, index.docker.io as docker.io, no trailing slash.
func (m SourceMirror) parse() (prefix, mirror string, err error) {
	if prefix, err = parsePrefix(m.Prefix); err != nil {
		return "", "", err
	}
	if mirror, err = parseMirror(m.Mirror); err != nil {
		return "", "", err
	}
	return prefix, mirror, nil
}

// parsePrefix checks a prefix: a registry host, then path components.
func parsePrefix(p string) (string, error) {
	bad := func(reason string) (string, error) {
		return "", &SourceMirrorError{Value: p, Field: "prefix", Reason: reason}
	}
	s := strings.TrimSuffix(p, "/")
	switch {
	case s == "":
		return bad("empty: want a registry host or host/path, like docker.io or quay.io/jetstack")
	case strings.Contains(s, "://"):
		return bad("want a registry host or host/path without a scheme, like docker.io or quay.io/jetstack")
	case strings.ContainsAny(s, "@"):
		return bad("a digest names an image: want a registry host or host/path")
	}
	host, path, _ := strings.Cut(s, "/")
	if !(host == "localhost" || strings.ContainsAny(host, ".:")) {
		return bad(fmt.Sprintf("%q is not a registry host: start with one, like docker.io/%s", host, s))
	}
	if err := checkHost(host); err != nil {
		return bad(err.Error())
	}
	if path != "" {
		if strings.Contains(path[strings.LastIndexByte(path, '/')+1:], ":") {
			return bad("a tag names an image: want a registry host or host/path")
		}
		if err := checkPath(path); err != nil {
			return bad(err.Error())
		}
		return normalizeHost(host) + "/" + path, nil
	}
	return normalizeHost(host), nil
}

// parseMirror checks a mirror: host[:port][/path], no scheme.
func parseMirror(m string) (string, error) {
	if strings.TrimSpace(m) == "" {
		return "", &SourceMirrorError{Value: m, Field: "mirror", Reason: "empty: want host[:port][/path], like mirror.corp:5000/dockerhub"}
	}
	host, path, err := splitRegistry(m)
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), fmt.Sprintf("%q: ", strings.TrimSuffix(m, "/")))
		reason = strings.Replace(reason, "prefix: ", "path: ", 1)
		if strings.Contains(m, "://") {
			reason = "want host[:port][/path] without a scheme, like mirror.corp:5000/dockerhub"
		}
		return "", &SourceMirrorError{Value: m, Field: "mirror", Reason: reason}
	}
	host = strings.ToLower(host)
	if path != "" {
		return host + "/" + path, nil
	}
	return host, nil
}

// SourceMirrors finds where an image is pulled from. It is pure: it
// makes no request, and a front end decides what to do when the mirror
// lacks an image (rehost mirror falls back to the source, unless told
// not to).
type SourceMirrors struct {
	entries []mirrorEntry // longest prefix first
}

type mirrorEntry struct {
	prefix, mirror string // normalised
}

// NewSourceMirrors checks the mirrors (a *SourceMirrorError naming the
// entry, or a *DuplicatePrefixError for a prefix given twice, however
// spelt: "Docker.io" and "index.docker.io" are docker.io) and orders
// them longest prefix first. No mirrors give a SourceMirrors that finds
// none.
func NewSourceMirrors(ms []SourceMirror) (*SourceMirrors, error) {
	s := &SourceMirrors{}
	seen := map[string]int{}
	for i, m := range ms {
		prefix, mirror, err := m.parse()
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if j, ok := seen[prefix]; ok {
			return nil, &DuplicatePrefixError{Prefix: prefix, First: j, Second: i}
		}
		seen[prefix] = i
		s.entries = append(s.entries, mirrorEntry{prefix: prefix, mirror: mirror})
	}
	sort.SliceStable(s.entries, func(i, j int) bool {
		return strings.Count(s.entries[i].prefix, "/") > strings.Count(s.entries[j].prefix, "/") ||
			strings.Count(s.entries[i].prefix, "/") == strings.Count(s.entries[j].prefix, "/") && len(s.entries[i].prefix) > len(s.entries[j].prefix)
	})
	return s, nil
}

// Len is how many mirrors there are.
func (s *SourceMirrors) Len() int {
	if s == nil {
		return 0
	}
	return len(s.entries)
}

// List returns the mirrors, normalised, in the order they are tried:
// longest prefix first.
func (s *SourceMirrors) List() []SourceMirror {
	if s == nil {
		return nil
	}
	out := make([]SourceMirror, len(s.entries))
	for i, e := range s.entries {
		out[i] = SourceMirror{Prefix: e.prefix, Mirror: e.mirror}
	}
	return out
}

// Find maps name, a fully qualified repository or any "host/path"
// ("docker.io/library/nginx"; a chart repository's host and path), to
// its mirror: the entry of the longest prefix that covers it, path
// components whole, replaced by its mirror
// ("mirror.corp:5000/dockerhub/library/nginx"). The host is compared
// without case, and index.docker.io is docker.io. ok is false when no
// prefix covers name.
func (s *SourceMirrors) Find(name string) (mirrored string, prefix string, ok bool) {
	if s.Len() == 0 {
		return "", "", false
	}
	host, path, _ := strings.Cut(name, "/")
	n := normalizeHost(host)
	if path != "" {
		n += "/" + path
	}
	for _, e := range s.entries {
		rest, found := strings.CutPrefix(n, e.prefix)
		if !found || rest != "" && rest[0] != '/' {
			continue
		}
		return e.mirror + rest, e.prefix, true
	}
	return "", "", false
}

// Mirror returns where the image r is pulled from: r with its registry
// and repository those of its mirror (tag and digest kept), and the
// prefix that matched; prefix is "" when no prefix covers r. The
// registry of the result is the mirror's host, whatever its spelling: a
// single-label host ("mirror") is not read as a Docker Hub path, since
// the result is not parsed again. It is an error when r is the prefix
// itself and the mirror has no path: no repository is left.
func (s *SourceMirrors) Mirror(r Ref) (m Ref, prefix string, err error) {
	mirrored, prefix, ok := s.Find(r.RepositoryName())
	if !ok {
		return Ref{}, "", nil
	}
	host, path, _ := strings.Cut(mirrored, "/")
	if path == "" {
		return Ref{}, prefix, &SourceMirrorError{Value: prefix, Field: "prefix", Reason: fmt.Sprintf("names the repository %s itself, and its mirror %s has no path: give the mirror a repository path", r.RepositoryName(), mirrored)}
	}
	return Ref{Registry: host, Repository: path, Tag: r.Tag, Digest: r.Digest}, prefix, nil
}
