package manifest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rehost/rehost/pkg/rewrite"
)

func TestSplitter(t *testing.T) {
	tests := []struct {
		name string
		in   string
		docs []string
		line []int
	}{
		{"empty", "", nil, nil},
		{"one document", "a: 1\nb: 2\n", []string{"a: 1\nb: 2\n"}, []int{1}},
		{"no final newline", "a: 1\n---\nb: 2", []string{"a: 1\n", "---\nb: 2"}, []int{1, 2}},
		{"leading marker and comments stay together", "# c\n---\na: 1\n---\nb: 2\n", []string{"# c\n---\na: 1\n", "---\nb: 2\n"}, []int{1, 4}},
		{"directives go with their document", "a: 1\n...\n%YAML 1.1\n---\nb: 2\n", []string{"a: 1\n...\n", "%YAML 1.1\n---\nb: 2\n"}, []int{1, 3}},
		{"markers need a separator", "a: |\n  x\n---x: 1\n----\n--- # c\nb: 1\n", []string{"a: |\n  x\n---x: 1\n----\n", "--- # c\nb: 1\n"}, []int{1, 5}},
		{"marker inside block scalar ends the document", "a: |\n  x\n--- \n  y\n", []string{"a: |\n  x\n", "--- \n  y\n"}, []int{1, 3}},
		{"empty documents", "---\n---\n---\n", []string{"---\n", "---\n", "---\n"}, []int{1, 2, 3}},
		{"CRLF", "a: 1\r\n---\r\nb: 2\r\n", []string{"a: 1\r\n", "---\r\nb: 2\r\n"}, []int{1, 2}},
		{"end marker at EOF", "a: 1\n...", []string{"a: 1\n..."}, []int{1}},
		{"marker at EOF", "a: 1\n---", []string{"a: 1\n", "---"}, []int{1, 2}},
		{"tab after marker", "a: 1\n---\tb: 2\n", []string{"a: 1\n", "---\tb: 2\n"}, []int{1, 2}},
	}
	for _, tt := range tests {
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"byte by byte", iotest.OneByteReader}} {
			t.Run(tt.name+"/"+reader.name, func(t *testing.T) {
				s := newSplitter(reader.wrap(strings.NewReader(tt.in)))
				var docs []string
				var lines []int
				for {
					d, err := s.next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					docs = append(docs, string(d.data))
					lines = append(lines, d.line)
				}
				if strings.Join(docs, "|") != strings.Join(tt.docs, "|") || len(docs) != len(tt.docs) {
					t.Errorf("docs = %q, want %q", docs, tt.docs)
				}
				for i := range lines {
					if i < len(tt.line) && lines[i] != tt.line[i] {
						t.Errorf("lines = %v, want %v", lines, tt.line)
						break
					}
				}
			})
		}
	}
}

// TestSplitterLongDocument crosses many window refills and growths.
func TestSplitterLongDocument(t *testing.T) {
	big := "a: " + strings.Repeat("x", 3*splitBlock) + "\n"
	in := big + "---\n" + strings.Repeat("b: 1\n", splitBlock/2) + "---\nc: 1\n"
	s := newSplitter(iotest.HalfReader(strings.NewReader(in)))
	var got []document
	for {
		d, err := s.next()
		if err != nil {
			break
		}
		got = append(got, d)
	}
	if len(got) != 3 || string(got[0].data) != big || got[1].line != 2 || got[2].line != 3+splitBlock/2 {
		t.Fatalf("got %d docs, lines %d %d", len(got), got[1].line, got[2].line)
	}
}

func TestSplitterReadError(t *testing.T) {
	s := newSplitter(io.MultiReader(strings.NewReader("a: 1\n---\nb: 1\n"), iotest.ErrReader(errors.New("boom"))))
	var err error
	for err == nil {
		_, err = s.next()
	}
	if err.Error() != "boom" {
		t.Fatalf("err = %v", err)
	}
}

func TestHasEscape(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"backslash d", `regex: "^\\d+\\.\\d+$"`, false},
		{"tab newline backslash", `a: "\t\n\\"`, false},
		{"hex escape", `a: "im\x61ge"`, true},
		{"u escape", `a: "\u0069mage"`, true},
		{"U escape", `a: "\U00000069mage"`, true},
		{"escaped slash", `a: "quay.io\/x\/y:1"`, true},
		{"escaped line break", "a: \"ima\\\n  ge\"", true},
		{"escaped backslash then u", `a: "\\u0069"`, false}, // an escaped backslash, then a plain u
		{"backslash then u escape", `a: "\\\u0069"`, true},
		{"trailing backslash", `trailing \`, false},
	} {
		in, want := tt.in, tt.want
		t.Run(tt.name, func(t *testing.T) {
			if got := hasEscape([]byte(in)); got != want {
				t.Errorf("hasEscape(%q) = %v, want %v", in, got, want)
			}
		})
	}
}

// TestSplitterLinesAsYAML: lone CR, NEL, LS and PS end lines for yaml.v3,
// so they do for the document line numbers too.
func TestSplitterLinesAsYAML(t *testing.T) {
	in := "a: 1\rb: 2\u0085c: 3\u2028d: 4\u2029e: 5\r\n---\nkind: X\n"
	s := newSplitter(strings.NewReader(in))
	if _, err := s.next(); err != nil {
		t.Fatal(err)
	}
	d, err := s.next()
	if err != nil {
		t.Fatal(err)
	}
	if d.line != 6 {
		t.Errorf("second document at line %d, want 6", d.line)
	}
}

func TestTopLevelKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want string
	}{
		{"crd", "apiVersion: v1\nkind: CustomResourceDefinition\nspec: {}\n", "CustomResourceDefinition"},
		{"single-quoted", "kind: 'CustomResourceDefinition' # c\n", "CustomResourceDefinition"},
		{"double-quoted CRLF", "kind: \"CustomResourceDefinition\"\r\n", "CustomResourceDefinition"},
		{"quoted key", "\"kind\": Deployment\nnote: \"x\nkind: CustomResourceDefinition\"\n", ""},
		{"stray quote", "kind: CustomResourceDefinition\"\n", ""},
		{"continued", "kind: CustomResourceDefinition\n  Deployment\n", ""},
		{"after empty line and comment", "kind: CustomResourceDefinition\n\n# c\nspec: {}\n", "CustomResourceDefinition"},
		{"twice", "kind: A\nkind: B\n", ""},
		{"nested", "spec:\n  kind: CustomResourceDefinition\n", ""},
		{"after leading empty line", "\nkind: CustomResourceDefinition\n", "CustomResourceDefinition"},
		{"every byte", "kind: azAZ09.-_\n", "azAZ09.-_"},
		{"backquote", "kind: a`\n", ""},
		{"slash", "kind: a/\n", ""},
		{"colon", "kind: a:\n", ""},
		{"at", "kind: a@\n", ""},
		{"bracket", "kind: a[\n", ""},
		{"brace", "kind: a{\n", ""},
	} {
		in, want := tt.in, tt.want
		t.Run(tt.name, func(t *testing.T) {
			if got := topLevelKind([]byte(in)); got != want {
				t.Errorf("topLevelKind(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestReviewedEdgeCases(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	// %YAML 1.2 is read as 1.1, and the directive stays.
	in := "%YAML 1.2\n---\nkind: Pod\nspec:\n  containers:\n  - image: nginx\n"
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil || string(out) != strings.Replace(in, "image: nginx", "image: sea.hub:5000/library/nginx", 1) {
		t.Errorf("%%YAML 1.2: %q %v", out, err)
	}
	// Documents separated by lone-CR line ends are an error, not lost.
	cr := "kind: Pod\rspec:\r  containers:\r  - image: nginx\r---\rkind: Pod\rspec:\r  containers:\r  - image: redis\r"
	if _, err := rw.RewriteBytes([]byte(cr), "cr.yaml"); err == nil || !strings.Contains(err.Error(), "carriage return") {
		t.Errorf("lone CR documents: %v", err)
	}
	// A CRD look-alike with a quoted kind key is parsed, not skipped.
	fake := "\"kind\": Deployment\nmetadata:\n  annotations:\n    note: \"see\nkind: CustomResourceDefinition\"\nspec:\n  template:\n    spec:\n      containers:\n      - image: nginx\n"
	out, err = rw.RewriteBytes([]byte(fake), "fake.yaml")
	if err != nil || !strings.Contains(string(out), "sea.hub:5000/library/nginx") {
		t.Errorf("quoted kind key: %q %v", out, err)
	}
}

func TestJoinWriter(t *testing.T) {
	var b strings.Builder
	j := NewJoinWriter(&b)
	for _, s := range []string{"a: 1", "\ufeffb: 2\n", "----x: 1\n", "--- # c\nd: 4\n"} {
		j.Next()
		if _, err := j.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if want := "a: 1\n---\nb: 2\n---\n----x: 1\n--- # c\nd: 4\n"; b.String() != want {
		t.Errorf("joined %q, want %q", b.String(), want)
	}
}
