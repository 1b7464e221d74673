package printable

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
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
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
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
