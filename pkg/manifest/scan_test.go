package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestScanStringEdges pins the embedded scanner at its edges: the longest
// token, the characters at the ends of each class, flags with more than
// two dashes, and lines that end where a key, a quote or a list marker
// would continue (the last line of a string).
func TestScanStringEdges(t *testing.T) {
	name := "quay.io/" + strings.Repeat("a", 255-len("quay.io/"))
	longest := name + ":" + strings.Repeat("t", 128) + "@sha512:" + strings.Repeat("0", 128)
	if len(longest) != maxToken {
		t.Fatalf("longest token is %d bytes, maxToken %d", len(longest), maxToken)
	}
	tooLong := name + "b:" + strings.Repeat("t", 128) + "@sha512:" + strings.Repeat("0", 128)
	for _, tt := range []struct {
		s          string
		ctx, words bool
		want       []token
	}{
		// The longest reference is a token, whole or as a word; one byte
		// more is not.
		{longest, false, false, []token{{0, longest}}},
		{tooLong, false, false, nil},
		{"x " + longest, false, true, []token{{2, longest}}},
		{"x " + tooLong, false, true, nil},
		// Letters at the ends of their ranges.
		{"quay.io/z/zz:1", false, false, []token{{0, "quay.io/z/zz:1"}}},
		{"quay.io/a/b:A1", false, false, []token{{0, "quay.io/a/b:A1"}}},
		{"quay.io/a/b:Z9", false, false, []token{{0, "quay.io/a/b:Z9"}}},
		{"IMAGEZ: quay.io/a/b:1", false, false, []token{{8, "quay.io/a/b:1"}}},
		{"image9: quay.io/a/b:1", false, false, []token{{8, "quay.io/a/b:1"}}},
		// Flags: one or two dashes, after white space; three is no flag.
		{"--x=nginx:1.25", true, false, []token{{4, "nginx:1.25"}}},
		{" --x=nginx:1.25", true, false, []token{{5, "nginx:1.25"}}},
		{"\t-x=nginx:1.25", true, false, []token{{4, "nginx:1.25"}}},
		{"---x=nginx:1.25", true, false, nil},
		// key: value lines, in order, after empty lines and list markers.
		{"image: quay.io/a/b:1\nimage: quay.io/c/d:1", false, false, []token{{7, "quay.io/a/b:1"}, {28, "quay.io/c/d:1"}}},
		{"a: 1\n\nimage: quay.io/a/b:1", false, false, []token{{13, "quay.io/a/b:1"}}},
		{"- image: quay.io/a/b:1", false, false, []token{{9, "quay.io/a/b:1"}}},
		{"-\timage: quay.io/a/b:1", false, false, []token{{9, "quay.io/a/b:1"}}},
		{"image :quay.io/a/b:1 # c", false, false, []token{{7, "quay.io/a/b:1"}}},
		{`  "image": "quay.io/a/b:1",`, false, false, []token{{12, "quay.io/a/b:1"}}},
		// Strings that end inside a line's key, quote, marker or spaces.
		{"image: quay.io/a/b:1\n  ", false, false, []token{{7, "quay.io/a/b:1"}}},
		{"image: quay.io/a/b:1\n-", false, false, []token{{7, "quay.io/a/b:1"}}},
		{"image: quay.io/a/b:1\nimage", false, false, []token{{7, "quay.io/a/b:1"}}},
		{"image: quay.io/a/b:1\nimage  ", false, false, []token{{7, "quay.io/a/b:1"}}},
		{"image: quay.io/a/b:1\n\"image", false, false, []token{{7, "quay.io/a/b:1"}}},
		{"image=''", false, false, nil},
	} {
		if got := scanString(tt.s, tt.ctx, tt.words); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("scanString(%.60q, ctx=%v, words=%v) = %.200v, want %.200v", tt.s, tt.ctx, tt.words, got, tt.want)
		}
	}
}

// TestFlagNameContext: an argument "--name" whose name says image makes
// the next argument an image; a name with a byte no flag name has does not.
func TestFlagNameContext(t *testing.T) {
	for _, tt := range []struct {
		flag string
		want int
	}{{"--engine-image", 1}, {"-image", 1}, {"--engine-image!", 0}, {"--image/x", 0}, {"---image", 0}} {
		in := "kind: Pod\nspec:\n  containers:\n  - name: c\n    image: quay.io/a/b:1\n    args: [\"" + tt.flag + "\", \"nginx:1.25\"]\n"
		rw := mustNew(t, rewrite.Config{}, ListEmbedded())
		if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
			t.Fatal(err)
		}
		if n := countOccurrences(rw.Embedded()); n != tt.want {
			t.Errorf("%s nginx:1.25: %d embedded references, want %d: %+v", tt.flag, n, tt.want, rw.Embedded())
		}
	}
}
