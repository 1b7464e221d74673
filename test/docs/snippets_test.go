package docs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// snippet is a ```go block that is a whole Go file.
type snippet struct {
	doc     string // the Markdown file's repository path
	line    int    // the line of its opening fence
	body    string
	pkg     string   // its package name
	imports []string // its import paths
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.doc, s.line) }

// collectSnippets returns the ```go blocks of docs that are whole Go files,
// and a message for each block that is neither a whole file nor a fragment
// the rules allow (see checkFragment).
func collectSnippets(root string, docs []*Doc) ([]snippet, []string) {
	var snippets []snippet
	var problems []string
	for _, d := range docs {
		for _, b := range d.Blocks {
			if b.Info != "go" {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", b.Body, parser.ImportsOnly)
			if err != nil {
				if p := checkFragment(root, d, b, err); p != "" {
					problems = append(problems, fmt.Sprintf("%s:%d: %s", d.Path, b.Line, p))
				}
				continue
			}
			s := snippet{doc: d.Path, line: b.Line, body: b.Body, pkg: f.Name.Name}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				s.imports = append(s.imports, p)
			}
			snippets = append(snippets, s)
		}
	}
	return snippets, problems
}

// checkFragment accepts a ```go block that is not a whole file only when a
// <!-- fragment: PATH ExampleName --> comment precedes it, PATH (from the
// repository root) is a _test.go file that declares the function
// ExampleName, and the document links to PATH: the fragment is then shown
// compiled by `go test`. It returns why the block is refused, or "".
func checkFragment(root string, d *Doc, b Block, parseErr error) string {
	notWhole := fmt.Sprintf("```go block is not a whole Go file (%v): write a whole program (package main, imports, func main)", parseErr)
	spec, ok := strings.CutPrefix(b.Marker, "fragment:")
	if !ok {
		return notWhole + ", or mark a fragment with <!-- fragment: PATH ExampleName --> (docs/development.md)"
	}
	f := strings.Fields(spec)
	if len(f) != 2 || !strings.HasSuffix(f[0], "_test.go") || !strings.HasPrefix(f[1], "Example") {
		return fmt.Sprintf("fragment marker %q: want <!-- fragment: PATH/TO/x_test.go ExampleName -->", b.Marker)
	}
	path, name := f[0], f[1]
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return fmt.Sprintf("fragment marker names %s: %v", path, err)
	}
	file, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Sprintf("fragment marker names %s: %v", path, err)
	}
	found := false
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == name {
			found = true
		}
	}
	if !found {
		return fmt.Sprintf("fragment marker names %s, which declares no func %s", path, name)
	}
	for _, l := range d.Links {
		if p, _, ok, err := Resolve(d.Path, l.Target); ok && err == nil && p == path {
			return ""
		}
	}
	return fmt.Sprintf("fragment compiled by %s in %s: the document must link to %s", name, path, path)
}

// depsImports are the import paths of deps/deps.go: the packages this
// module's go.mod requires for the documentation's programs.
func depsImports(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "deps/deps.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		m[p] = true
	}
	return m
}

// isStd reports whether an import path is of the standard library: its
// first element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// snippetPos is a position in a snippet's file, as the go command prints
// it: .../s<N>/snippet.go:LINE[:COL].
var snippetPos = regexp.MustCompile(`(?:[^\s:]*/)?s([0-9]+)/snippet\.go:([0-9]+)((?::[0-9]+)?)`)

// buildSnippets writes each snippet into a package of its own under a
// temporary directory of this module, compiles and vets them all with the
// go command, and returns the go command's messages for each snippet (by
// index), positions translated to lines of the Markdown file ("docs/go.md:
// 57:2: undefined: x"). other holds what no snippet claims; ok is false
// when a command failed.
func buildSnippets(t *testing.T, snippets []snippet) (msgs map[int][]string, other string, ok bool) {
	t.Helper()
	dir, err := os.MkdirTemp(".", "_snippets")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	for i, s := range snippets {
		p := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "snippet.go"), []byte(s.body), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(p))
	}
	msgs = map[int][]string{}
	ok = true
	var rest []string
	// go list -export compiles each package with the Go compiler, as go
	// build does, without linking: linking is what TestGoModSnippets
	// proves, and linking Helm into every program would cost seconds each.
	for _, args := range [][]string{{"list", "-export", "-f", "{{.Export}}"}, {"vet"}} {
		cmd := exec.Command("go", append(args, pkgs...)...)
		var out bytes.Buffer
		cmd.Stderr = &out // go list prints the export files on stdout
		if args[0] == "vet" {
			cmd.Stdout = &out
		}
		if err := cmd.Run(); err != nil {
			ok = false
			if _, isExit := err.(*exec.ExitError); !isExit {
				t.Fatalf("go %s: %v", args[0], err)
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if line == "" || strings.HasPrefix(line, "# ") {
				continue
			}
			m := snippetPos.FindStringSubmatchIndex(line)
			if m == nil {
				rest = append(rest, line)
				continue
			}
			i, _ := strconv.Atoi(line[m[2]:m[3]])
			n, _ := strconv.Atoi(line[m[4]:m[5]])
			if i >= len(snippets) {
				rest = append(rest, line)
				continue
			}
			s := snippets[i]
			pos := fmt.Sprintf("%s:%d%s", s.doc, s.line+n, line[m[6]:m[7]])
			msgs[i] = append(msgs[i], fmt.Sprintf("go %s: %s%s%s", args[0], line[:m[0]], pos, line[m[1]:]))
		}
	}
	return msgs, strings.Join(rest, "\n"), ok
}

// TestGoSnippets builds every ```go block of README.md and docs/*.md (see
// package docs).
func TestGoSnippets(t *testing.T) {
	snippets, problems := collectSnippets(root, loadDocs(t))
	for _, p := range problems {
		t.Error(p)
	}
	if len(snippets) < 5 {
		t.Fatalf("found only %d Go programs in the documentation", len(snippets))
	}
	deps := depsImports(t)
	for _, s := range snippets {
		for _, imp := range s.imports {
			if !isStd(imp) && !deps[imp] {
				t.Errorf("%s: imports %s, which deps/deps.go does not import: add it there, then GOWORK=off go mod tidy", s, imp)
			}
		}
	}
	msgs, other, ok := buildSnippets(t, snippets)
	for i, s := range snippets {
		if len(msgs[i]) > 0 {
			t.Errorf("%s: the ```go block (package %s) does not build:\n\t%s", s, s.pkg, strings.Join(msgs[i], "\n\t"))
		}
	}
	if !ok && len(msgs) == 0 || other != "" {
		t.Errorf("building the documentation's programs (ok %v):\n%s", ok, other)
	}
}

// TestGoModSnippets tries each ```go.mod block as a consumer would: in a
// directory outside the workspace, with the ```go block that follows it as
// the program, its replace paths ../rehost pointed at this checkout, `go
// mod tidy` then `go build` must succeed with GOWORK=off. A go.mod that
// lacks a require or replace line the program needs fails.
func TestGoModSnippets(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, d := range loadDocs(t) {
		for i, b := range d.Blocks {
			if b.Info != "go.mod" {
				continue
			}
			var prog *Block
			for j := i + 1; j < len(d.Blocks) && prog == nil; j++ {
				if d.Blocks[j].Info == "go" {
					prog = &d.Blocks[j]
				}
			}
			name := fmt.Sprintf("%s:%d", d.Path, b.Line)
			if prog == nil {
				t.Errorf("%s: a ```go.mod block needs a ```go block after it, the program it builds", name)
				continue
			}
			if !strings.Contains(b.Body, "=> ../rehost") {
				t.Errorf("%s: the go.mod must replace rehost's modules with a clone at ../rehost (=> ../rehost...)", name)
				continue
			}
			tried++
			t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
				dir := t.TempDir()
				mod := strings.ReplaceAll(b.Body, "=> ../rehost", "=> "+filepath.ToSlash(abs))
				if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog.Body), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", os.DevNull, "."}} {
					cmd := exec.Command("go", args...)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "GOWORK=off")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("go %s, with the go.mod of %s and the program of %s:%d: %v\n%s", strings.Join(args, " "), name, d.Path, prog.Line, err, out)
					}
				}
			})
		}
	}
	if tried < 2 {
		t.Errorf("found %d ```go.mod blocks to try, want at least 2 (docs/go.md)", tried)
	}
}
