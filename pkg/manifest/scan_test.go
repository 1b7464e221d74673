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
		name       string
		s          string
		ctx, words bool
		want       []token
	}{
		// The longest reference is a token, whole or as a word; one byte
		// more is not.
		{"longest", longest, false, false, []token{{at: 0, value: longest}}},
		{"too long", tooLong, false, false, nil},
		{"longest as word", "x " + longest, false, true, []token{{at: 2, value: longest}}},
		{"too long as word", "x " + tooLong, false, true, nil},
		// Letters at the ends of their ranges.
		{"last letters", "quay.io/z/zz:1", false, false, []token{{at: 0, value: "quay.io/z/zz:1"}}},
		{"tag A", "quay.io/a/b:A1", false, false, []token{{at: 0, value: "quay.io/a/b:A1"}}},
		{"tag Z", "quay.io/a/b:Z9", false, false, []token{{at: 0, value: "quay.io/a/b:Z9"}}},
		{"key IMAGEZ", "IMAGEZ: quay.io/a/b:1", false, false, []token{{at: 8, value: "quay.io/a/b:1"}}},
		{"key image9", "image9: quay.io/a/b:1", false, false, []token{{at: 8, value: "quay.io/a/b:1"}}},
		// Flags: one or two dashes, after white space; three is no flag.
		{"flag two dashes", "--x=nginx:1.25", true, false, []token{{at: 4, value: "nginx:1.25"}}},
		{"flag after space", " --x=nginx:1.25", true, false, []token{{at: 5, value: "nginx:1.25"}}},
		{"flag one dash after tab", "\t-x=nginx:1.25", true, false, []token{{at: 4, value: "nginx:1.25"}}},
		{"flag three dashes", "---x=nginx:1.25", true, false, nil},
		// key: value lines, in order, after empty lines and list markers.
		{"two lines", "image: quay.io/a/b:1\nimage: quay.io/c/d:1", false, false, []token{{at: 7, value: "quay.io/a/b:1"}, {at: 28, value: "quay.io/c/d:1"}}},
		{"after empty line", "a: 1\n\nimage: quay.io/a/b:1", false, false, []token{{at: 13, value: "quay.io/a/b:1"}}},
		{"list marker", "- image: quay.io/a/b:1", false, false, []token{{at: 9, value: "quay.io/a/b:1"}}},
		{"list marker tab", "-\timage: quay.io/a/b:1", false, false, []token{{at: 9, value: "quay.io/a/b:1"}}},
		{"space before colon", "image :quay.io/a/b:1 # c", false, false, []token{{at: 7, value: "quay.io/a/b:1"}}},
		{"json key", `  "image": "quay.io/a/b:1",`, false, false, []token{{at: 12, value: "quay.io/a/b:1"}}},
		// Strings that end inside a line's key, quote, marker or spaces.
		{"ends in spaces", "image: quay.io/a/b:1\n  ", false, false, []token{{at: 7, value: "quay.io/a/b:1"}}},
		{"ends in marker", "image: quay.io/a/b:1\n-", false, false, []token{{at: 7, value: "quay.io/a/b:1"}}},
		{"ends in key", "image: quay.io/a/b:1\nimage", false, false, []token{{at: 7, value: "quay.io/a/b:1"}}},
		{"ends in key and spaces", "image: quay.io/a/b:1\nimage  ", false, false, []token{{at: 7, value: "quay.io/a/b:1"}}},
		{"ends in quote", "image: quay.io/a/b:1\n\"image", false, false, []token{{at: 7, value: "quay.io/a/b:1"}}},
		{"empty after equals", "image=''", false, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := scanString(tt.s, tt.ctx, tt.words)
			for i := range got {
				got[i].whole, got[i].flag = false, "" // positions and values only
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("scanString(%.60q, ctx=%v, words=%v) = %.200v, want %.200v", tt.s, tt.ctx, tt.words, got, tt.want)
			}
		})
	}
}

// TestFlagNameContext: an argument "--name" whose name says image makes
// the next argument an image; a name with a byte no flag name has does not.
func TestFlagNameContext(t *testing.T) {
	for _, tt := range []struct {
		name string
		flag string
		want int
	}{
		{"double dash", "--engine-image", 1},
		{"single dash", "-image", 1},
		{"bang", "--engine-image!", 0},
		{"slash", "--image/x", 0},
		{"triple dash", "---image", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := "kind: Pod\nspec:\n  containers:\n  - name: c\n    image: quay.io/a/b:1\n    args: [\"" + tt.flag + "\", \"nginx:1.25\"]\n"
			rw := mustNew(t, rewrite.Config{}, ListEmbedded())
			if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
				t.Fatal(err)
			}
			if n := countOccurrences(rw.Embedded()); n != tt.want {
				t.Errorf("%s nginx:1.25: %d embedded references, want %d: %+v", tt.flag, n, tt.want, rw.Embedded())
			}
		})
	}
}

// TestRegistryToken pins the fast path's test for an embedded reference
// with a registry host and a tag or digest: a run of reference bytes with
// a host mark before a "/" and a tag or digest mark after it.
func TestRegistryToken(t *testing.T) {
	for _, tt := range []struct {
		data string
		want bool
	}{
		{"x.io/a:1", true},
		{"/x.io/a:1", true},
		{"a: x.io/a:1", true},
		{"x.io/a@sha256:0", true},
		{"localhost/a:1", true},
		{"localhost:5000/a:1", true},
		{"my.localhost/a:1", true},
		{"localhost.x/a:1", true},
		{"a/localhost/b:1", true}, // conservative: the document is parsed
		{"a/b.io/c:1", true},
		{"a/b:1", false},
		{"x.io/a", false},
		{"localhost:5000/a", false},
		{"localhost", false},
		{"x.io:5000/a", false},
		{"app.kubernetes.io/name: x", false},
		{"app.kubernetes.io/name:", false},
		{"a b/c:1 d.e/f", false},
		{"k: v\nx.io/a:1\n", true},
		{"no slash: x.io:1", false},
		{"x.io/:", false},
		{"x.io/a:1/", true},
		{".a/b:1", true},
		{".a/b:1localhost", true},
		{"localhost/.a:1", true},
		{"x.io/localhost:1", true},
		{"x.io:/a", false},
		{"a. x/y:1", false},
		{"a.: x/y:1", false},
	} {
		t.Run(tt.data, func(t *testing.T) {
			if got := hasRegistryToken([]byte(tt.data)); got != tt.want {
				t.Errorf("hasRegistryToken(%q) = %v, want %v", tt.data, got, tt.want)
			}
		})
	}
	// A bare host:port reads as an address, not as an image with a tag.
	for _, tt := range []struct {
		name string
		v    string
	}{{"abcd:1000", "abcd:1000"}, {"abcd:9999", "abcd:9999"}, {"redis:6379", "redis:6379"}, {"registry.local:5000", "registry.local:5000"}, {"localhost:8080", "localhost:8080"}} {
		v := tt.v
		t.Run(tt.name, func(t *testing.T) {
			if got := scanString(v, true, false); got != nil {
				t.Errorf("scanString(%q) = %v, want no reference (a host and port)", v, got)
			}
		})
	}
	for _, tt := range []struct {
		name string
		v    string
	}{{"abcd:100", "abcd:100"}, {"abcd:10a0", "abcd:10a0"}, {"abcd:a000", "abcd:a000"}} {
		v := tt.v
		t.Run(tt.name, func(t *testing.T) {
			if got := scanString(v, true, false); len(got) != 1 {
				t.Errorf("scanString(%q) = %v, want the reference", v, got)
			}
		})
	}
}
