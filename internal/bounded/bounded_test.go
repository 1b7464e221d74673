package bounded

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	big := strings.Repeat("a", 50<<20)
	for _, tt := range []struct{ in, quote, word string }{
		{"nginx:1.25", `"nginx:1.25"`, "nginx:1.25"},
		{"", `""`, `""`},
		{"a b", `"a b"`, `"a b"`},
		{"\x1b[31mred", `"\x1b[31mred"`, `"\x1b[31mred"`},
		{"line\nbreak", `"line\nbreak"`, `"line\nbreak"`},
		{"\u202eevil", `"\u202eevil"`, `"\u202eevil"`},
		{strings.Repeat("é", 300), `"` + strings.Repeat("é", 256) + `"…(600 bytes)`, `"` + strings.Repeat("é", 256) + `"…(600 bytes)`},
		{big, `"` + big[:MaxQuoted] + `"…(52428800 bytes)`, `"` + big[:MaxQuoted] + `"…(52428800 bytes)`},
	} {
		if got := Quote(tt.in); got != tt.quote {
			t.Errorf("Quote(%.40q) = %.80s, want %.80s", tt.in, got, tt.quote)
		}
		if got := Word(tt.in); got != tt.word {
			t.Errorf("Word(%.40q) = %.80s, want %.80s", tt.in, got, tt.word)
		}
	}
	// A cut never splits a character.
	s := strings.Repeat("x", MaxQuoted-1) + "é" + "tail"
	if got := Cut(s, MaxQuoted); !utf8.ValidString(got) || !strings.HasSuffix(got, "…(517 bytes)") || strings.Contains(got, "é") {
		t.Errorf("Cut = %q", got[MaxQuoted-10:])
	}
	if got := Cut("short", 10); got != "short" {
		t.Errorf("Cut(short) = %q", got)
	}
}

// The cases below came with the quoting of package mirror's reports.

func TestWordTable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"docker.io/library/nginx:1.25", "docker.io/library/nginx:1.25"},
		{"quay.io/x/y@sha256:" + strings.Repeat("a", 64), "quay.io/x/y@sha256:" + strings.Repeat("a", 64)},
		{"registry.例え.jp/app:1", "registry.例え.jp/app:1"},
		{"", `""`},
		{"a b", `"a b"`},
		{`say "hi"`, `"say \"hi\""`},
		{"x\x1b[31my", `"x\x1b[31my"`},
		{"x\ny", `"x\ny"`},
		{"x\ry", `"x\ry"`},
		{"x\u202ey", `"x\u202ey"`},
		{"x\xffy", `"x\xffy"`},
		{strings.Repeat("a", 600), `"` + strings.Repeat("a", 512) + `"…(600 bytes)`},
		{strings.Repeat("é", 300), `"` + strings.Repeat("é", 256) + `"…(600 bytes)`},
	} {
		if got := Word(c.in); got != c.want {
			t.Errorf("Word(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET https://x/v2/: 404 Not Found", "GET https://x/v2/: 404 Not Found"},
		{"line one\nline two", `line one\nline two`},
		{"\x1b]0;title\x07rest", `\x1b]0;title\arest`},
		{"tab\there", `tab\there`},
		{"bad \xff byte", `bad \xff byte`},
		{"bidi \u202e", `bidi \u202e`},
		{"déjà vu", "déjà vu"},
	} {
		got := Clean(c.in)
		if got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Clean(got); again != got {
			t.Errorf("Clean is not idempotent on %q: %q", got, again)
		}
	}
}
