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
