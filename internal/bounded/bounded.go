// Package bounded quotes untrusted values in messages with a bounded size
// and escapes what is not printable (Clean):
// a value read from an input (a 50 MB image field, a registry's answer, a
// template's error) is shown cut to MaxQuoted bytes, followed by its size,
// so that a message never repeats an input whole. Every rehost module
// quotes input with it (Go's internal rule is by import path: the packages
// under github.com/rehost/rehost may import it, whatever their module).
package bounded

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of a value Quote and Word show.
const MaxQuoted = 512

// Quote is s quoted as by strconv.Quote (so, with %q, one line whatever it
// holds), cut to MaxQuoted bytes when it is longer and then followed by
// "…(N bytes)", N the size of s.
func Quote(s string) string {
	head, cut := split(s, MaxQuoted)
	return strconv.Quote(head) + cut
}

// Word is s as it is when it prints as one word (printable characters, no
// space, quote or backslash, at most MaxQuoted bytes), otherwise Quote(s):
// for values that are usually plain words, such as image references.
func Word(s string) string {
	if s != "" && len(s) <= MaxQuoted && plain(s) {
		return s
	}
	return Quote(s)
}

// Cut is s cut to max bytes, at a character boundary, followed by
// "…(N bytes)" when it is longer: for messages that hold untrusted text
// (a template's error).
func Cut(s string, max int) string {
	head, cut := split(s, max)
	return head + cut
}

// split cuts s to at most max bytes at a character boundary; cut is
// "…(N bytes)" when it did, else "".
func split(s string, max int) (head, cut string) {
	if len(s) <= max {
		return s, ""
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// plain reports whether s prints as one word as it is.
func plain(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || r == '\\' || !unicode.IsPrint(r) {
			return false
		}
	}
	return utf8.ValidString(s)
}

// Clean escapes what is not printable in a message (control characters,
// terminal escapes, newlines, invalid UTF-8, bidirectional controls) as
// strconv.Quote would, and keeps the rest: a message stays one line. It
// is idempotent.
func Clean(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case r == ' ' || unicode.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}
