package manifest

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/rehost/rehost/pkg/rewrite"
)

// Embedded image references are image references written inside string
// values that are not image fields. The strings scanned are: the args and
// command items and env values of containers (every container the finder
// knows: Pod specs, container lists, Tekton steps, Argo templates, ...);
// the data values of ConfigMaps; the values of metadata.annotations, the
// object's and its templates'; the value or default of any name/value pair
// whose name says image (Tekton and Argo parameters, Argo CD Helm
// parameters). In such a string, a token is a candidate when it is
//   - the whole value (leading and trailing white space aside);
//   - the value of a "--flag=value" (or "-flag=value") argument;
//   - the value of a "key: value" or "key=value" line whose key says image,
//     inside a string holding YAML, JSON, properties or env-file text
//     (quotes, a trailing comma and a "# comment" stripped);
//   - in args and command, a word of a shell command line
//     ("crictl pull docker.io/x/y:1 && ..."), then only with a registry host
//     and a tag or digest;
//
// and it is an image reference:
//   - it consists only of the bytes a reference can hold
//     (A-Z a-z 0-9 . _ - / : @, and the brackets of an IPv6 registry host
//     that starts it: "[fd00::1]:5000/x:1"), so URLs with query strings,
//     patterns with "*" (Kyverno's "registry/*") and text are never
//     candidates;
//   - it is not an URL ("://"), a path (leading "/" or "."), a bare digest
//     ("sha256:...") or a host:port address (no "/" and a host with a dot,
//     "localhost", or a numeric port of 4 or more digits);
//   - it names a registry host and has a tag or digest
//     (quay.io/jetstack/cert-manager-acmesolver:v1.16.1), or the context says
//     image and it has a tag, a digest or a registry host: the key, the env
//     or parameter name, the flag name (or, in args and command, the flag
//     just before it: "--engine-image", "longhornio/longhorn-engine:v1.7.2")
//     contains "image", "Image" or "IMAGE";
//   - it parses as a reference (rewrite.ParseRef, the reference grammar of
//     pkg/rewrite).
//
// So "replicate:3", "system:auth-delegator", "v1.2.3", "redis:6379" and
// "foo=bar:baz" are not images, while CSI_ATTACHER_IMAGE=
// longhornio/csi-attacher:v4.7.0 is.

// token is a candidate found in a string: its byte offset and its text;
// whole says it is the string's whole value (white space aside), flag
// names the flag of a --flag=value argument it is the value of.
type token struct {
	at    int
	value string
	whole bool
	flag  string
}

// flagSaysImage reports whether a flag's name says its value is an image
// to run: "--acme-http01-solver-image", "--prometheus-config-reloader".
func flagSaysImage(name string) bool {
	return hasImageWord(name) || name == "prometheus-config-reloader"
}

// imageWords are the spellings of "image" that give a key, an env name or
// a flag name the image context. The fast path looks for the same words.
var imageWords = []string{"image", "Image", "IMAGE"}

func hasImageWord(s string) bool {
	for _, w := range imageWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func hasImageWordBytes(b []byte) bool {
	for _, w := range imageWords {
		if bytes.Contains(b, []byte(w)) {
			return true
		}
	}
	return false
}

// maxToken is the longest token considered: a 255-byte name, a 128-byte tag
// and a sha512 digest.
const maxToken = 255 + 1 + 128 + 1 + 7 + 128

// isRefByte reports whether b can occur in an image reference.
func isRefByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '_' || b == '-' || b == '/' || b == ':' || b == '@'
}

// scanString returns the candidates in s. ctx says the key, env name or
// preceding flag says image. words also looks at the words of a shell
// command line.
func scanString(s string, ctx, words bool) (out []token) {
	add := func(at int, v string, ctx bool) bool {
		if isCandidate(v, ctx) {
			out = append(out, token{at: at, value: v})
			return true
		}
		return false
	}
	defer func() { out = dedupTokens(out) }()
	// The whole value.
	if v, at := trimSpace(s, 0, len(s)); len(v) <= maxToken {
		if add(at, v, ctx) {
			out[len(out)-1].whole = true
		}
	}
	// A --flag=value argument.
	if name, at, ok := flagValue(s); ok {
		v, vat := trimSpace(s, at, len(s))
		if add(vat, v, ctx || flagSaysImage(name)) {
			out[len(out)-1].flag = name
		}
	}
	// The words of a command line ("crictl pull docker.io/x/y:1 && ..."):
	// only references with a registry host and a tag or digest.
	if words && strings.ContainsAny(s, " \t\n") {
		for i := 0; i < len(s); {
			for i < len(s) && isWordBreak(s[i]) {
				i++
			}
			j := i
			for j < len(s) && !isWordBreak(s[j]) {
				j++
			}
			if j > i && j-i <= maxToken {
				add(i, s[i:j], false)
			}
			i = j
		}
	}
	// "key: value" lines whose key says image.
	if hasImageWord(s) && strings.ContainsAny(s, ":=") {
		for start := 0; start < len(s); {
			end := strings.IndexByte(s[start:], '\n')
			if end < 0 {
				end = len(s)
			} else {
				end += start
			}
			if at, n, ok := lineValue(s, start, end); ok {
				add(at, s[at:at+n], true)
			}
			start = end + 1
		}
	}
	return out
}

// dedupTokens sorts tokens by offset and drops those found twice (by two
// of the forms).
func dedupTokens(ts []token) []token {
	if len(ts) < 2 {
		return ts
	}
	slices.SortStableFunc(ts, func(a, b token) int { return cmp.Compare(a.at, b.at) })
	out := ts[:1]
	for _, t := range ts[1:] {
		if t.at != out[len(out)-1].at {
			out = append(out, t)
		}
	}
	return out
}

// trimSpace returns s[from:to] without leading and trailing white space,
// and its offset in s.
func trimSpace(s string, from, to int) (string, int) {
	for from < to && isSpace(s[from]) {
		from++
	}
	for to > from && isSpace(s[to-1]) {
		to--
	}
	return s[from:to], from
}

// flagValue parses "--name=value" or "-name=value" (leading white space
// allowed) and returns the name and the offset of the value.
func flagValue(s string) (name string, at int, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	d := i
	for i < len(s) && i-d < 2 && s[i] == '-' {
		i++
	}
	if i == d {
		return "", 0, false
	}
	n := i
	for i < len(s) && isKeyByte(s[i]) {
		i++
	}
	if i == n || i >= len(s) || s[i] != '=' || !isAlnum(s[n]) {
		return "", 0, false
	}
	return s[n:i], i + 1, true
}

// flagName returns the name of a "--name" or "-name" argument without a
// value.
func flagName(s string) (string, bool) {
	t := strings.TrimSpace(s)
	n := strings.TrimPrefix(strings.TrimPrefix(t, "-"), "-")
	if n == t || n == "" || !isAlnum(n[0]) {
		return "", false
	}
	for i := 0; i < len(n); i++ {
		if !isKeyByte(n[i]) {
			return "", false
		}
	}
	return n, true
}

// lineValue parses the line s[start:end] as `key: value` or `key=value`
// (optionally indented, after "- " list markers, the key optionally
// quoted), with a key that says image, and returns the offset and length of
// the value without its quotes, trailing comma or comment.
func lineValue(s string, start, end int) (at, n int, ok bool) {
	i := start
	for {
		for i < end && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i+1 < end && s[i] == '-' && (s[i+1] == ' ' || s[i+1] == '\t') {
			i++
			continue
		}
		break
	}
	var q byte
	if i < end && (s[i] == '"' || s[i] == '\'') {
		q = s[i]
		i++
	}
	k := i
	for i < end && isKeyByte(s[i]) {
		i++
	}
	key := s[k:i]
	if key == "" || !hasImageWord(key) {
		return 0, 0, false
	}
	if q != 0 {
		if i >= end || s[i] != q {
			return 0, 0, false
		}
		i++
	}
	for i < end && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= end || (s[i] != ':' && s[i] != '=') {
		return 0, 0, false
	}
	i++
	v, vat := trimSpace(s, i, end)
	if c := strings.Index(v, " #"); c >= 0 {
		v, vat = trimSpace(s, vat, vat+c)
	}
	v = strings.TrimSuffix(v, ",")
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v, vat = v[1:len(v)-1], vat+1
	}
	if v == "" {
		return 0, 0, false
	}
	return vat, len(v), true
}

// isWordBreak reports whether b separates the words of a command line:
// white space, quotes, shell operators, "=" and ",".
func isWordBreak(b byte) bool {
	return strings.IndexByte(" \t\r\n\"'`;&|()<>{}[],=", b) >= 0
}

func isKeyByte(b byte) bool {
	return isAlnum(b) || b == '_' || b == '-' || b == '.'
}

func isAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// isCandidate reports whether v is an image reference by the rules above;
// ctx says the context says image.
func isCandidate(v string, ctx bool) bool {
	if v == "" || len(v) > maxToken {
		return false
	}
	from := 0
	if v[0] == '[' {
		// A bracketed IPv6 registry host ("[fd00::1]:5000/x:1"): the
		// brackets hold the address, before the first "/".
		end := strings.IndexByte(v, ']')
		if end < 0 || strings.IndexByte(v, '/') < end || strings.ContainsAny(v[1:end], "[/") {
			return false
		}
		for i := 1; i < end; i++ {
			if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.') {
				return false
			}
		}
		from = end + 1
	}
	for i := from; i < len(v); i++ {
		if !isRefByte(v[i]) {
			return false
		}
	}
	switch v[0] {
	case '/', '.', '-', ':', '@', '_':
		return false
	}
	if strings.Contains(v, "://") || strings.HasPrefix(v, "sha256:") || strings.HasPrefix(v, "sha512:") || strings.HasPrefix(v, "sha384:") {
		return false
	}
	// Decide on the syntax first, cheaply; then parse.
	host := hasHost(v)
	id := strings.Contains(v[strings.LastIndexByte(v, '/')+1:], ":") || strings.Contains(v, "@")
	if !(host && id || ctx && (host || id)) {
		return false
	}
	if !strings.Contains(v, "/") && isHostPort(v) {
		return false
	}
	_, err := rewrite.ParseRef(v)
	return err == nil
}

// hasHost reports whether the first component of a reference names a
// registry, as the reference grammar decides (the rule of Docker's
// reference grammar): it holds a "." or a ":" or is "localhost".
func hasHost(v string) bool {
	first, _, ok := strings.Cut(v, "/")
	return ok && (strings.ContainsAny(first, ".:") || first == "localhost")
}

// isHostPort reports whether a reference without "/" reads better as a
// host:port address: "registry.local:5000", "localhost:8080", "redis:6379".
func isHostPort(v string) bool {
	host, port, ok := strings.Cut(v, ":")
	if !ok || strings.Contains(v, "@") {
		return false
	}
	if strings.Contains(host, ".") || host == "localhost" {
		return true
	}
	if len(port) < 4 {
		return false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// hasRegistryToken reports whether data holds a run of reference bytes with
// a "/" that has a host mark ("." or ":" or "localhost") before it and a tag
// or digest mark (":" or "@") after it. Every embedded candidate with a
// registry host and a tag or digest lies verbatim in such a run in the
// document's bytes (when the document has no backslash): the fast path
// skips documents without one (and without an image word).
func hasRegistryToken(data []byte) bool {
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '/')
		if j < 0 {
			return false
		}
		p := i + j
		s, e := p, p+1
		for s > i && isRefByte(data[s-1]) {
			s--
		}
		for e < len(data) && isRefByte(data[e]) {
			e++
		}
		if runHoldsReference(data[s:e]) {
			return true
		}
		i = e
	}
	return false
}

func runHoldsReference(run []byte) bool {
	h := bytes.IndexAny(run, ".:")
	if l := bytes.Index(run, []byte("localhost")); l >= 0 && (h < 0 || l+len("localhost")-1 < h) {
		h = l + len("localhost") - 1
	}
	if h < 0 {
		return false
	}
	// A tag or digest mark is followed by the tag or digest; a ":" that
	// ends the run is a YAML key's ("app.kubernetes.io/name:").
	t := bytes.LastIndexAny(run[:len(run)-1], ":@")
	q := bytes.IndexByte(run[h+1:], '/')
	return q >= 0 && h+1+q < t
}

// appendField appends f to fs, doubling the capacity when it is full:
// append grows a large slice by a quarter at a time, which for a document
// of many embedded references allocates five times the final size.
func appendField(fs []Field, f Field) []Field {
	if len(fs) == cap(fs) {
		fs = slices.Grow(fs, max(len(fs), 8))
	}
	return append(fs, f)
}
