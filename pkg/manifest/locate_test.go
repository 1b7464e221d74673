package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestEmbeddedInEveryStyle: embedded references are rewritten in place in
// every scalar style, around escapes, escaped line breaks (LF and CRLF),
// doubled single quotes and folded white space; nothing else changes.
func TestEmbeddedInEveryStyle(t *testing.T) {
	for _, v := range []string{
		`"image: quay.io/a/b:1"`,
		`"\tx\nimage: quay.io/a/b:1\nimage: \"quay.io/c/d:1\""`,
		"\"image: quay.io/a/b:1\\n\\\n    image: quay.io/c/d:1\"",
		"\"image: quay.io/a/b:1\\n\\\r\n    image: quay.io/c/d:1\"",
		"\"image: quay.io/a/b:1\n\n    image: quay.io/c/d:1\"",
		"'x''y\n\n    image: quay.io/a/b:1'",
		"'image: quay.io/a/b:1\n\n    x''s'",
		`'image: quay.io/a/b:1'`,
		"'image: quay.io/a/b:1\n\n    image: quay.io/c/d:1'",
		"|\n    image: quay.io/a/b:1\n    image: quay.io/c/d:1",
		">-\n    image: quay.io/a/b:1\n\n    image: quay.io/c/d:1",
		"|2 # c\n    image: quay.io/a/b:1",
	} {
		in := "kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: " + v + "\n  b-image: quay.io/e/f:1\n  c-image: \"quay.io/e/f:1\"\n"
		if strings.Contains(v, "\r\n") {
			in = strings.ReplaceAll(in, "\n", "\r\n")
			in = strings.ReplaceAll(in, "\r\r\n", "\r\n")
		}
		var warns []error
		rw := mustNew(t, rewrite.Config{RewriteEmbedded: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
		out, err := rw.RewriteBytes([]byte(in), "in.yaml")
		want := strings.NewReplacer("quay.io/a/b", "sea.hub:5000/a/b", "quay.io/c/d", "sea.hub:5000/c/d", "quay.io/e/f", "sea.hub:5000/e/f").Replace(in)
		if err != nil || string(out) != want || len(warns) != 0 {
			t.Errorf("%q:\n got %q, %v, warnings %v\nwant %q", v, out, err, warns, want)
		}
	}
}

// TestEmbeddedAtEndOfStream: a reference that ends the stream, without a
// final line break, is rewritten in place in every style.
func TestEmbeddedAtEndOfStream(t *testing.T) {
	for _, v := range []string{"a-image: quay.io/a/b:1", "a: |\n    image: quay.io/a/b:1", "a: >-\n    image: quay.io/a/b:1", "a-image: 'quay.io/a/b:1'", "a: \"image: quay.io/a/b:1\""} {
		in := "kind: ConfigMap\nmetadata: {name: c}\ndata:\n  " + v
		var warns []error
		rw := mustNew(t, rewrite.Config{RewriteEmbedded: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
		out, err := rw.RewriteBytes([]byte(in), "in.yaml")
		want := strings.Replace(in, "quay.io/a/b", "sea.hub:5000/a/b", 1)
		if err != nil || string(out) != want || len(warns) != 0 {
			t.Errorf("%q:\n got %q, %v, warnings %v\nwant %q", v, out, err, warns, want)
		}
	}
}
