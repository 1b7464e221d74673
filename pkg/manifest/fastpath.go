package manifest

import (
	"bytes"
	"strings"
)

// mayHoldImages is the fast path: it reports false, without parsing, for
// documents that hold no image reference:
//   - CustomResourceDefinitions (never searched);
//   - documents without a backslash escape that stands for other characters
//     (hasEscape: "\x", "\u", "\U", "\/", an escaped line break), without any image word ("image", "Image", "IMAGE": image
//     fields, the context of bare embedded references), configured leaf
//     key (registry settings: as a map key, "hub:"), composite URL scheme
//     ("oci://") or kind whose absent fields matter (an Installation whose
//     registry rehost adds, an operator's kind it warns about), and without a run of
//     reference bytes that holds a registry host, a "/" and a tag or digest
//     (an embedded reference that needs no context).
//
// Every reference the finder reports lies verbatim in the document's bytes
// when the document has no such escape (the other escapes stand for white
// space, quotes, backslashes or control characters, none of which can be
// part of an image word or a reference), so this never skips one.
func (rw *Rewriter) mayHoldImages(data []byte) bool {
	kind := topLevelKind(data)
	if kind == crdKind {
		return false
	}
	if hasEscape(data) || hasImageWordBytes(data) {
		return true
	}
	for _, k := range rw.finder.keys {
		if bytes.Contains(data, []byte(k)) {
			return true
		}
	}
	for _, sc := range rw.finder.schemes {
		if bytes.Contains(data, []byte(sc)) {
			return true
		}
	}
	// A kind whose absent fields matter: by its kind line when there is
	// one (a ConfigMap of Prometheus rules is not a Prometheus), else
	// (JSON, a List) by its name anywhere.
	for _, k := range rw.finder.kindWords {
		if kind != "" && !strings.HasSuffix(kind, "List") {
			if kind == k {
				return true
			}
		} else if bytes.Contains(data, []byte(k)) {
			return true
		}
	}
	return hasRegistryToken(data)
}

// yaml11 returns data with a "%YAML 1.2" directive read as 1.1, the version
// yaml.v3 accepts (the directive changes nothing rehost looks at); the bytes
// keep their length, so positions stay.
func yaml11(data []byte) []byte {
	const v12 = "%YAML 1.2"
	i := bytes.Index(data, []byte(v12))
	if i < 0 || (i > 0 && data[i-1] != '\n') {
		return data
	}
	c := bytes.Clone(data)
	c[i+len(v12)-1] = '1'
	return c
}

// hasEscape reports whether data holds a backslash escape that can stand
// for other characters in a double-quoted scalar: "\x", "\u", "\U", "\/"
// (JSON) or an escaped line break. Other escapes ("\d", "\." in the regular
// expressions of ConfigMaps and CRDs) cannot spell an image word or a
// reference byte.
func hasEscape(data []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 || i+j+1 >= len(data) {
			return false
		}
		switch data[i+j+1] {
		case 'x', 'u', 'U', '/', '\n', '\r':
			return true
		}
		i += j + 2
	}
}

var kindLine = []byte("\nkind:")

// topLevelKind returns the value of the only "kind:" line at column 0, or
// "" when there is none or more than one. A line at column 0 is a key of the
// document's root mapping (or inside a multi-line quoted string, and then
// the document has no top-level kind line of its own, so it has no kind at
// all or two such lines).
func topLevelKind(data []byte) string {
	// A quoted "kind" key could be the real one: look no further.
	if bytes.Contains(data, []byte(`"kind"`)) || bytes.Contains(data, []byte(`'kind'`)) {
		return ""
	}
	var at []int
	if bytes.HasPrefix(data, kindLine[1:]) {
		at = append(at, 0)
	}
	for i := 0; ; {
		j := bytes.Index(data[i:], kindLine)
		if j < 0 {
			break
		}
		at = append(at, i+j+1)
		i += j + 1
	}
	if len(at) != 1 {
		return ""
	}
	v, rest, _ := bytes.Cut(data[at[0]+len("kind:"):], []byte("\n"))
	// An indented line after it continues a multi-line plain value.
	if next, _, _ := bytes.Cut(rest, []byte("\n")); len(next) > 0 && (next[0] == ' ' || next[0] == '\t') && !isBlankOrComment(next) {
		return ""
	}
	if c := bytes.Index(v, []byte(" #")); c >= 0 {
		v = v[:c]
	}
	v = bytes.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	// Only a single word of name characters is trusted.
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return ""
		}
	}
	return string(v)
}
