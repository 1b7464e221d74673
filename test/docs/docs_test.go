package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// root is the repository's top directory, relative to this package.
const root = "../.."

// loadDocs parses README.md and every Markdown file under docs/.
func loadDocs(t *testing.T) []*Doc {
	t.Helper()
	paths := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var docs []*Doc
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, ParseDoc(p, data))
	}
	if len(docs) < 10 {
		t.Fatalf("found only %d Markdown files: %v", len(docs), paths)
	}
	return docs
}

// TestLinks: every relative link of README.md and docs/*.md resolves, with
// its anchor, and the index docs/README.md links every page of docs/.
func TestLinks(t *testing.T) {
	docs := loadDocs(t)
	links := 0
	for _, d := range docs {
		links += len(d.Links)
	}
	if links < 50 {
		t.Fatalf("found only %d links: the link parser is broken", links)
	}
	for _, p := range CheckLinks(root, docs) {
		t.Error(p)
	}
	for _, p := range checkIndex(docs) {
		t.Error(p)
	}
}

// checkIndex returns a message for each page of docs/ that docs/README.md
// does not link.
func checkIndex(docs []*Doc) []string {
	var index *Doc
	for _, d := range docs {
		if d.Path == "docs/README.md" {
			index = d
		}
	}
	if index == nil {
		return []string{"docs/README.md, the index of docs/, is missing"}
	}
	linked := map[string]bool{}
	for _, l := range index.Links {
		if p, _, ok, err := Resolve(index.Path, l.Target); ok && err == nil {
			linked[p] = true
		}
	}
	var problems []string
	for _, d := range docs {
		if strings.HasPrefix(d.Path, "docs/") && d != index && !linked[d.Path] {
			problems = append(problems, d.Path+" is not linked from docs/README.md, the index")
		}
	}
	sort.Strings(problems)
	return problems
}
