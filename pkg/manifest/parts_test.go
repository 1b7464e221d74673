package manifest

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// failAfter is a writer that fails once n bytes were written.
type failAfter struct {
	b strings.Builder
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.b.Len()+len(p) > f.n {
		return 0, errors.New("disk full")
	}
	return f.b.Write(p)
}

// partsRun is what a run gives: its output, error, images and warnings.
type partsRun struct {
	out    string
	err    string
	images []rewrite.Image
	warns  []string
}

// runParts rewrites parts with RewriteParts (one) or with a RewriteAt call
// per part after writing its head, stopping at the first error (the
// reference).
func runParts(t *testing.T, parts []Part, one, write bool, limit int, opts ...Option) partsRun {
	t.Helper()
	var r partsRun
	opts = append(opts, WithWarnings(func(err error) { r.warns = append(r.warns, err.Error()) }))
	rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"}, opts...)
	fw := &failAfter{n: limit}
	var w io.Writer
	if write {
		w = fw
	}
	var err error
	if one {
		err = rw.RewriteParts(w, parts)
	} else {
		for _, p := range parts {
			if w != nil {
				if _, err = io.WriteString(w, p.Head); err != nil {
					break
				}
			}
			if err = rw.RewriteAt(w, strings.NewReader(p.Text), p.Name, p.Line); err != nil {
				break
			}
		}
	}
	if err != nil {
		r.err = err.Error()
	}
	r.out, r.images = fw.b.String(), rw.Images()
	return r
}

// TestRewritePartsIsRewriteAtPerPart: RewriteParts writes, collects, warns
// and fails as a RewriteAt call per part does (what rendered.Chart did
// before), whatever the parts' sizes, errors and the writer's failures.
func TestRewritePartsIsRewriteAtPerPart(t *testing.T) {
	tests := partsCases()
	many := func(n int) []Part { return tests[2].parts[:n] }
	for _, tt := range tests {
		for _, write := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/write=%t", tt.name, write), func(t *testing.T) {
				want := runParts(t, tt.parts, false, write, 1<<30)
				got := runParts(t, tt.parts, true, write, 1<<30)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("RewriteParts:\n%+v\nwant (RewriteAt per part):\n%+v", got, want)
				}
			})
		}
	}
	// The writer fails in a head, in a document, at the end.
	parts := many(300)
	full := runParts(t, parts, false, true, 1<<30)
	for _, limit := range []int{0, 10, 30, 200, len(full.out) / 2, len(full.out) - 1, len(full.out)} {
		t.Run(fmt.Sprintf("writer fails after %d bytes", limit), func(t *testing.T) {
			want := runParts(t, parts, false, true, limit)
			got := runParts(t, parts, true, true, limit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("RewriteParts:\n%+v\nwant (RewriteAt per part):\n%+v", got, want)
			}
		})
	}
	t.Run("list only", func(t *testing.T) {
		for _, write := range []bool{false, true} {
			want := runParts(t, parts[:3], false, write, 1<<30, ListOnly())
			got := runParts(t, parts[:3], true, write, 1<<30, ListOnly())
			if !reflect.DeepEqual(got, want) || (write && !strings.Contains(got.err, ErrListOnly.Error())) {
				t.Errorf("write=%t: RewriteParts:\n%+v\nwant (RewriteAt per part):\n%+v", write, got, want)
			}
		}
	})
}

// partsCase is a test case of parts.
type partsCase struct {
	name  string
	parts []Part
}

// partsCases are parts of all sizes, with errors and warnings.
func partsCases() []partsCase {
	pod := func(i int, image string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n  - name: c\n    image: %s\n", i, image)
	}
	part := func(name string, line int, text string) Part {
		return Part{Name: name, Line: line, Head: "---\n# Source: " + name + "\n", Text: text}
	}
	many := func(n, bad int, badImage string) []Part {
		var ps []Part
		for i := 0; i < n; i++ {
			img := fmt.Sprintf("nginx:1.%d", i)
			if i == bad {
				img = badImage
			}
			ps = append(ps, part(fmt.Sprintf("c/templates/t%d.yaml", i%7), 3+11*i, pod(i, img)))
		}
		return ps
	}
	// A part of n documents, every other one with an invalid image when
	// bad: the valid images say which documents were recorded before the
	// run stopped.
	long := func(name string, n int, bad bool) Part {
		var b strings.Builder
		for i := 0; i < n; i++ {
			img := fmt.Sprintf("redis:%d", i)
			if bad && i%2 == 0 {
				img = fmt.Sprintf("REDIS%d", i)
			}
			fmt.Fprintf(&b, "---\n%s", pod(i, img))
		}
		return part(name, 1, b.String())
	}
	return []partsCase{
		{"none", nil},
		{"one", []Part{part("c/templates/a.yaml", 3, pod(0, "nginx"))}},
		{"many one-document parts", many(300, -1, "")},
		{"an error in part 150 of 300", many(300, 150, "NGINX")},
		{"an error in the first part", many(5, 0, "NGINX")},
		{"an error in the last part", many(5, 4, "NGINX")},
		{"empty parts and blank text", []Part{
			part("c/templates/e.yaml", 1, ""),
			part("c/templates/a.yaml", 3, pod(0, "nginx")),
			part("c/templates/e.yaml", 1, ""),
			part("c/templates/b.yaml", 1, "\n"),
			part("c/templates/c.yaml", 1, "# only a comment\n"),
			part("c/templates/e.yaml", 1, ""),
		}},
		{"parts of several documents", []Part{
			part("c/templates/a.yaml", 3, pod(0, "nginx")+"---\n"+pod(1, "redis")+"...\n"),
			part("c/templates/b.yaml", 7, "---\n"+pod(2, "busybox")+"---\n---\n"),
		}},
		{"a part of 200 documents between small parts", []Part{
			part("c/templates/a.yaml", 3, pod(0, "nginx")),
			long("c/templates/long.yaml", 200, false),
			part("c/templates/b.yaml", 3, pod(1, "redis")),
		}},
		{"a part of 200 documents, every other one with an error", []Part{
			part("c/templates/a.yaml", 3, pod(0, "nginx")),
			long("c/templates/long.yaml", 200, true),
			part("c/templates/b.yaml", 3, pod(1, "redis")),
		}},
		{"a part of 30 documents, every other one with an error", []Part{
			part("c/templates/a.yaml", 3, pod(0, "nginx")),
			long("c/templates/long.yaml", 30, true),
		}},
		{"invalid YAML and UTF-8", []Part{
			part("c/templates/a.yaml", 3, pod(0, "nginx")),
			part("c/templates/bad.yaml", 12, "kind: Pod\nspec: [\n"),
			part("c/templates/utf.yaml", 12, "kind: \xff\n"),
		}},
		{"warnings", []Part{
			part("c/templates/a.yaml", 3, "kind: Pod\nspec:\n  containers:\n  - name: c\n    image: nginx\n    image: redis\n"),
			part("c/templates/b.yaml", 9, pod(1, "nginx")),
		}},
	}
}
