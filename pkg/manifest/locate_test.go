package manifest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/internal/textpos"
	"github.com/rehost/rehost/pkg/rewrite"
)

// TestEmbeddedInEveryStyle: embedded references are rewritten in place in
// every scalar style, around escapes, escaped line breaks (LF and CRLF),
// doubled single quotes and folded white space; nothing else changes.
func TestEmbeddedInEveryStyle(t *testing.T) {
	for _, tt := range []struct{ name, v string }{
		{"double-quoted", `"image: quay.io/a/b:1"`},
		{"double-quoted with escapes", `"\tx\nimage: quay.io/a/b:1\nimage: \"quay.io/c/d:1\""`},
		{"escaped line break", "\"image: quay.io/a/b:1\\n\\\n    image: quay.io/c/d:1\""},
		{"escaped CRLF line break", "\"image: quay.io/a/b:1\\n\\\r\n    image: quay.io/c/d:1\""},
		{"double-quoted folded", "\"image: quay.io/a/b:1\n\n    image: quay.io/c/d:1\""},
		{"single-quoted doubled quote first", "'x''y\n\n    image: quay.io/a/b:1'"},
		{"single-quoted doubled quote last", "'image: quay.io/a/b:1\n\n    x''s'"},
		{"single-quoted", `'image: quay.io/a/b:1'`},
		{"single-quoted folded", "'image: quay.io/a/b:1\n\n    image: quay.io/c/d:1'"},
		{"literal", "|\n    image: quay.io/a/b:1\n    image: quay.io/c/d:1"},
		{"folded", ">-\n    image: quay.io/a/b:1\n\n    image: quay.io/c/d:1"},
		{"literal with indicator and comment", "|2 # c\n    image: quay.io/a/b:1"},
	} {
		v := tt.v
		t.Run(tt.name, func(t *testing.T) {
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
		})
	}
}

// TestEmbeddedAtEndOfStream: a reference that ends the stream, without a
// final line break, is rewritten in place in every style.
func TestEmbeddedAtEndOfStream(t *testing.T) {
	for _, tt := range []struct{ name, v string }{
		{"plain", "a-image: quay.io/a/b:1"},
		{"literal", "a: |\n    image: quay.io/a/b:1"},
		{"folded", "a: >-\n    image: quay.io/a/b:1"},
		{"single-quoted", "a-image: 'quay.io/a/b:1'"},
		{"double-quoted", "a: \"image: quay.io/a/b:1\""},
	} {
		v := tt.v
		t.Run(tt.name, func(t *testing.T) {
			in := "kind: ConfigMap\nmetadata: {name: c}\ndata:\n  " + v
			var warns []error
			rw := mustNew(t, rewrite.Config{RewriteEmbedded: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
			out, err := rw.RewriteBytes([]byte(in), "in.yaml")
			want := strings.Replace(in, "quay.io/a/b", "sea.hub:5000/a/b", 1)
			if err != nil || string(out) != want || len(warns) != 0 {
				t.Errorf("%q:\n got %q, %v, warnings %v\nwant %q", v, out, err, warns, want)
			}
		})
	}
}

// TestEmbeddedColumns: embedded references after escapes of every length
// are located and rewritten in place, and each gets its own line and
// column, several on one line, after a byte order mark on the first line.
func TestEmbeddedColumns(t *testing.T) {
	in := "\ufeff{kind: ConfigMap, data: {a: \"image: quay.io/a/b:1\\nimage: quay.io/c/d:1\"}}\n---\n" +
		"kind: ConfigMap\ndata:\n  b: \"\\x41\\u00e9\\U0001F600\\nimage: quay.io/e/f:1\\nimage: quay.io/g/h:1\"\n"
	rw := mustNew(t, rewrite.Config{RewriteEmbedded: true})
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	want := strings.NewReplacer("quay.io/", "sea.hub:5000/").Replace(in)
	if err != nil || string(out) != want {
		t.Fatalf("got %q, %v\nwant %q", out, err, want)
	}
	var got []string
	for _, img := range rw.Images() {
		for _, l := range img.Occurrences {
			got = append(got, fmt.Sprintf("%s %d:%d", l.Value, l.Line, l.Column))
		}
	}
	wantLocs := "quay.io/a/b:1 1:37 quay.io/c/d:1 1:59 quay.io/e/f:1 5:36 quay.io/g/h:1 5:58"
	if strings.Join(got, " ") != wantLocs {
		t.Errorf("locations %q, want %q", strings.Join(got, " "), wantLocs)
	}
}

// TestLineStarts: lines end at "\n", "\r\n", "\r", NEL, LS and PS, as
// yaml.v3 counts them; a lone 0xC2 or 0xE2 lead byte ends none.
func TestLineStarts(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []int
	}{
		{"empty", "", []int{0}},
		{"LF", "a\nb", []int{0, 2}},
		{"CRLF and CR", "a\r\nb\rc\n", []int{0, 3, 5, 7}},
		{"final CR", "a\r", []int{0, 2}},
		{"NEL", "a\u0085b", []int{0, 3}},
		{"LS and PS", "a\u2028b\u2029c", []int{0, 4, 8}},
		{"no break", "a\u00e9b\u2030c", []int{0}},
		{"lone C2", "a\xc2", []int{0}},
		{"cut E2 80", "a\xe2\x80", []int{0}},
		{"only NEL", "\u0085", []int{0, 2}},
		{"only LS", "\u2028", []int{0, 3}},
		{"leading CR", "\ra", []int{0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := textpos.LineStarts([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("textpos.LineStarts(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if got := lineBreaks([]byte(tt.in)); got != len(tt.want)-1 {
				t.Errorf("lineBreaks(%q) = %d, want %d", tt.in, got, len(tt.want)-1)
			}
		})
	}
}

// TestEmbeddedAfterEscapedReference: a reference written with an escape is
// left as written with a warning; the references after it in the same
// string are still rewritten in place.
func TestEmbeddedAfterEscapedReference(t *testing.T) {
	in := "kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: \"image: \\x71uay.io/a/b:1\\nimage: quay.io/c/d:1\"\n"
	var warns []error
	rw := mustNew(t, rewrite.Config{RewriteEmbedded: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	want := strings.Replace(in, "image: quay.io/c/d:1", "image: sea.hub:5000/c/d:1", 1)
	if err != nil || string(out) != want || len(warns) != 1 || !strings.Contains(warns[0].Error(), "cannot rewrite quay.io/a/b:1 in place") {
		t.Errorf("got %q, %v, warnings %v\nwant %q and one warning about quay.io/a/b:1", out, err, warns, want)
	}
}
