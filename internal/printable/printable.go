// Package printable makes untrusted strings safe to print on one line of
// a terminal or a log: image references and messages read from an OCI
// layout, an archive or a registry may hold terminal escapes, newlines or
// bidirectional controls. Package mirror words its messages with it, and
// the command line draws mirror's reports with it.
package printable

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxQuoted bounds the bytes of an untrusted string that Quote shows.
const maxQuoted = 512

// Quote returns s as it is when it is safe to print as one word (printable
// characters, no space, quote or backslash), otherwise quoted as by
// strconv.Quote, with no terminal escape, newline or bidirectional control
// left raw. Strings longer than 512 bytes are cut.
func Quote(s string) string {
	cut := ""
	if len(s) > maxQuoted {
		n := maxQuoted
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		cut = "…(" + strconv.Itoa(len(s)) + " bytes)"
		s = s[:n]
	}
	if s != "" && cut == "" && plain(s) {
		return s
	}
	return strconv.Quote(s) + cut
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
