package docs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The checkers themselves: each must catch what it is for, or the
// documentation tests pass without proving anything.

func TestSlug(t *testing.T) {
	for _, tt := range []struct{ heading, want string }{
		{"Install", "install"},
		{"Copy the images: `rehost mirror`", "copy-the-images-rehost-mirror"},
		{"Charts: `pkg/helm`", "charts-pkghelm"},
		{"A post-renderer in Helm's install action", "a-post-renderer-in-helms-install-action"},
		{"Helm 3 and Helm 4", "helm-3-and-helm-4"},
		{"Images declared in `Chart.yaml`", "images-declared-in-chartyaml"},
		{"See [the docs](docs/README.md) now", "see-the-docs-now"},
		{"snake_case and  two spaces", "snake_case-and--two-spaces"},
		{"Überblick — Ärger", "überblick--ärger"},
		{"<code>x</code> y", "x-y"},
	} {
		if got := Slug(tt.heading); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

const sample = "# Title\n" +
	"\n" +
	"See [one](a.md), ![img](img/x.png \"t\") and [a link\n" +
	"over two lines](b.md#part).\n" +
	"Not a link: `[x](code.md)`, nor ``[y](code2.md)``.\n" +
	"<a id=\"custom\"></a>Text with <a href=\"c.md\">html</a>.\n" +
	"\n" +
	"## Title\n" +
	"\n" +
	"<!-- fragment: pkg/x/example_test.go ExampleY -->\n" +
	"\n" +
	"```go\n" +
	"x := 1\n" +
	"[no](link.md)\n" +
	"# not a heading\n" +
	"```\n" +
	"\n" +
	"````go.mod\n" +
	"module m\n" +
	"```\n" +
	"still inside\n" +
	"````\n" +
	"\n" +
	"[ref]: d.md\n" +
	"## Title\n"

func TestParseDoc(t *testing.T) {
	d := ParseDoc("docs/sample.md", []byte(sample))
	want := []Link{{3, "a.md"}, {3, "img/x.png"}, {3, "b.md#part"}, {24, "d.md"}, {6, "c.md"}}
	if !reflect.DeepEqual(d.Links, want) {
		t.Errorf("links %v, want %v", d.Links, want)
	}
	anchors := map[string]bool{"title": true, "title-1": true, "title-2": true, "custom": true}
	if !reflect.DeepEqual(d.Anchors, anchors) {
		t.Errorf("anchors %v, want %v", d.Anchors, anchors)
	}
	blocks := []Block{
		{Info: "go", Line: 12, Body: "x := 1\n[no](link.md)\n# not a heading\n", Marker: "fragment: pkg/x/example_test.go ExampleY"},
		{Info: "go.mod", Line: 18, Body: "module m\n```\nstill inside\n"},
	}
	if !reflect.DeepEqual(d.Blocks, blocks) {
		t.Errorf("blocks %+v, want %+v", d.Blocks, blocks)
	}
}

// repo writes files into a temporary repository and returns its root.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheckLinks(t *testing.T) {
	files := map[string]string{
		"README.md": "[ok](docs/a.md#section-one) [gone](docs/missing.md) [bad anchor](docs/a.md#nope)\n" +
			"[dir](pkg/) [dir anchor](pkg/#x) [code](pkg/x.go#L3) [code anchor](pkg/x.go#func)\n" +
			"[web](https://example.com/x.md) [self](#rehost) [self bad](#tests) [out](../x.md)\n" +
			"[root](/docs/a.md) [escaped](docs/a%20b.md)\n" +
			"# rehost\n",
		"docs/a.md":   "## Section one\n[up](../README.md#rehost) [sibling](b.md#elsewhere)\n",
		"docs/b.md":   "<a id=\"elsewhere\"></a>\n",
		"docs/a b.md": "x\n",
		"pkg/x.go":    "package x\n",
	}
	root := repo(t, files)
	var docs []*Doc
	for _, p := range []string{"README.md", "docs/a.md"} {
		docs = append(docs, ParseDoc(p, []byte(files[p])))
	}
	want := []string{
		`README.md:1: link "docs/missing.md": missing target: docs/missing.md does not exist`,
		`README.md:1: link "docs/a.md#nope": missing anchor: docs/a.md has no heading or <a id> with slug #nope`,
		`README.md:2: link "pkg/#x": pkg is a directory: it has no anchor #x`,
		`README.md:2: link "pkg/x.go#func": anchor #func in pkg/x.go, which is not Markdown (only line anchors such as #L10 work there)`,
		`README.md:3: link "#tests": missing anchor: README.md has no heading or <a id> with slug #tests`,
		`README.md:3: link "../x.md": points outside the repository`,
	}
	if got := CheckLinks(root, docs); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckIndex(t *testing.T) {
	docs := []*Doc{
		ParseDoc("README.md", []byte("[docs](docs/README.md)\n")),
		ParseDoc("docs/README.md", []byte("[a](a.md) [b](./b.md#x)\n")),
		ParseDoc("docs/a.md", nil),
		ParseDoc("docs/b.md", nil),
		ParseDoc("docs/c.md", nil),
	}
	want := []string{"docs/c.md is not linked from docs/README.md, the index"}
	if got := checkIndex(docs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := checkIndex(docs[:1]); len(got) != 1 {
		t.Errorf("no index: got %q", got)
	}
}

func TestCheckFragment(t *testing.T) {
	root := repo(t, map[string]string{
		"pkg/x/example_test.go": "package x_test\n\nfunc ExampleY() {}\n\nfunc (T) ExampleZ() {}\n\ntype T struct{}\n",
	})
	parseErr := errors.New("expected 'package'")
	for _, tt := range []struct {
		name, marker, links, want string
	}{
		{"allowed", "fragment: pkg/x/example_test.go ExampleY", "[ex](../pkg/x/example_test.go)", ""},
		{"no marker", "", "[ex](../pkg/x/example_test.go)", "is not a whole Go file"},
		{"other comment", "TODO", "", "is not a whole Go file"},
		{"not an example", "fragment: pkg/x/example_test.go Y", "", "want <!-- fragment"},
		{"not a test file", "fragment: pkg/x/x.go ExampleY", "", "want <!-- fragment"},
		{"missing file", "fragment: pkg/y/example_test.go ExampleY", "", "no such file"},
		{"missing func", "fragment: pkg/x/example_test.go ExampleW", "[ex](../pkg/x/example_test.go)", "declares no func ExampleW"},
		{"a method is not it", "fragment: pkg/x/example_test.go ExampleZ", "[ex](../pkg/x/example_test.go)", "declares no func ExampleZ"},
		{"not linked", "fragment: pkg/x/example_test.go ExampleY", "[elsewhere](../pkg/x/)", "the document must link to pkg/x/example_test.go"},
	} {
		d := ParseDoc("docs/d.md", []byte(tt.links+"\n"))
		got := checkFragment(root, d, Block{Info: "go", Line: 3, Marker: tt.marker}, parseErr)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestBuildSnippetsReportsErrors: a program that does not compile, and one
// that vet refuses, are reported at their lines in the Markdown file; a
// good one passes.
func TestBuildSnippetsReportsErrors(t *testing.T) {
	good := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n"
	broken := "package main\n\nimport \"github.com/rehost/rehost/pkg/manifest\"\n\nfunc main() {\n\t_ = manifest.StdIn\n}\n"
	vet := "package lib\n\nimport \"fmt\"\n\nfunc F() { fmt.Printf(\"%d\", \"x\") }\n"
	snippets := []snippet{
		{doc: "README.md", line: 10, body: good, pkg: "main"},
		{doc: "docs/go.md", line: 40, body: broken, pkg: "main"},
		{doc: "docs/go.md", line: 90, body: vet, pkg: "lib"},
	}
	msgs, other, ok := buildSnippets(t, snippets)
	if ok || other != "" {
		t.Errorf("ok %v, unattributed output %q", ok, other)
	}
	if len(msgs[0]) != 0 {
		t.Errorf("the good program: %q", msgs[0])
	}
	if len(msgs[1]) == 0 || !strings.Contains(msgs[1][0], "docs/go.md:46:15: undefined: manifest.StdIn") {
		t.Errorf("the broken program: %q, want docs/go.md:46:15: undefined: manifest.StdIn", msgs[1])
	}
	if len(msgs[2]) == 0 || !strings.Contains(msgs[2][0], "docs/go.md:95:") || !strings.Contains(msgs[2][0], "wrong type") {
		t.Errorf("the program vet refuses: %q", msgs[2])
	}
}
