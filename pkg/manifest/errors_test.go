package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rehost/rehost/pkg/rewrite"
)

func pod(image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\nspec:\n  containers:\n  - name: c\n    image: " + image + "\n"
}

// TestBadInput: every error names the file, the line and, where known, the
// object and field path.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{"tab indentation", "kind: Pod\nspec:\n\tcontainers: []\n# image\n", []string{"in.yaml:3:", "malformed YAML", "cannot start any token"}},
		{"unterminated quote", "---\nkind: Pod\nspec:\n  containers:\n  - image: \"nginx\n", []string{"in.yaml:", "malformed YAML"}},
		{"non-UTF-8", "kind: Pod\nspec:\n  containers:\n  - image: ngin\xffx\n", []string{"in.yaml:4:", "UTF-8"}},
		{"non-UTF-8 in a later document", "kind: A\n---\n# x\nkind: B\nx: \xfe\n", []string{"in.yaml:5:", "UTF-8"}},
		{"empty image", pod(`""`), []string{"in.yaml:9: Pod ns/p: spec.containers[0].image:", "empty image reference"}},
		{"uppercase repository", pod("Nginx:1.25"), []string{"in.yaml:9: Pod ns/p: spec.containers[0].image:", `"Nginx:1.25"`, "repository can only contain"}},
		{"unrendered template", pod(`"{{ .Values.image }}"`), []string{"in.yaml:9:", "unrendered Helm template", "pass the chart directory"}},
		{"number", pod("1234"), []string{"in.yaml:9:", "not a string", "int 1234"}},
		{"null", pod(""), []string{"in.yaml:9:", "not a string", "null"}},
		{"map", pod("{repository: nginx}"), []string{"in.yaml:9:", "not a string", "map"}},
		{"second document, line counted across documents", "kind: ConfigMap\ndata: {}\n---\n" + pod("UPPER"), []string{"in.yaml:12: Pod ns/p"}},
		{"collision", pod("docker.io/team/app:1") + "---\n" + pod("quay.io/team/app:1"), []string{"image collision", "docker.io/team/app (in.yaml:9", "quay.io/team/app (in.yaml:19", "sea.hub:5000/team/app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, err := New(rewrite.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = rw.Rewrite(&out, strings.NewReader(tt.in), "in.yaml")
			if err == nil {
				t.Fatalf("no error; output:\n%s", out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestSkipInvalid: invalid references become warnings and stay untouched;
// valid ones in the same stream are still rewritten.
func TestSkipInvalid(t *testing.T) {
	var warns []error
	rw, err := New(rewrite.Config{SkipInvalid: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
	if err != nil {
		t.Fatal(err)
	}
	in := pod(`"{{ .Values.image }}"`) + "---\n" + pod("nginx")
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "image: nginx", "image: sea.hub:5000/library/nginx", 1)
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "in.yaml:9") {
		t.Errorf("warnings = %v, want one naming in.yaml:9", warns)
	}
	var e *Error
	if !errors.As(warns[0], &e) || e.Location.Field != "spec.containers[0].image" {
		t.Errorf("warning is not a *manifest.Error with the field path: %#v", warns[0])
	}
}

// TestCollisionAcrossInputs: the image set spans every stream of a run.
func TestCollisionAcrossInputs(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	if _, err := rw.RewriteBytes([]byte(pod("k8s.gcr.io/pause:3.9")), "a.yaml"); err != nil {
		t.Fatal(err)
	}
	_, err := rw.RewriteBytes([]byte(pod("registry.k8s.io/pause:3.9")), "b.yaml")
	var ce *rewrite.CollisionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a.yaml:9") || !strings.Contains(err.Error(), "b.yaml:9") {
		t.Fatalf("err = %v, want a collision naming both files", err)
	}
	nest, _ := New(rewrite.Config{PathStyle: rewrite.PathStyleNest})
	for _, f := range []string{"a.yaml", "b.yaml"} {
		img := map[string]string{"a.yaml": "k8s.gcr.io/pause:3.9", "b.yaml": "registry.k8s.io/pause:3.9"}[f]
		if _, err := nest.RewriteBytes([]byte(pod(img)), f); err != nil {
			t.Fatalf("nest style: %v", err)
		}
	}
}

// TestHostile: hostile documents end with a clear error or a correct
// output, quickly, without a panic or a stack overflow.
func TestHostile(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: bomb}\nspec:\n  a0: &a0 [{image: nginx}]\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&bomb, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1)
	}
	bomb.WriteString("  containers: [{image: busybox}]\n")
	deepFlow := "kind: Pod\nspec: {containers: [{image: nginx}]}\nx: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	deepBlock := "kind: Widget\nimage: x\nspec:\n" + strings.Repeat("  ", 1) + strings.Repeat("- ", 100000) + "x\n"
	bigScalar := "kind: ConfigMap\ndata:\n  image: " + strings.Repeat("a", 8<<20) + "\n---\n" + pod(strings.Repeat("a", 4<<20))
	tests := []struct {
		name    string
		in      string
		wantErr string // "" for success
	}{
		{"alias bomb", bomb.String(), ""},
		{"100000 levels of flow nesting", deepFlow, "malformed YAML"},
		{"100000 levels of block nesting", deepBlock, "malformed YAML"},
		{"multi-megabyte scalars", bigScalar, "in.yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, _ := New(rewrite.Config{})
			done := make(chan error, 1)
			var out bytes.Buffer
			go func() { done <- rw.Rewrite(&out, strings.NewReader(tt.in), "in.yaml") }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("did not finish within 30 s")
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %.300v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestNoKindPassesThrough: documents without a kind are copied as they are.
func TestNoKindPassesThrough(t *testing.T) {
	in := "spec:\n  containers:\n  - image: nginx\n---\n- a list\n---\njust a string\n---\n"
	rw, _ := New(rewrite.Config{})
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil || string(out) != in {
		t.Fatalf("got %q, %v", out, err)
	}
}

// TestMergeLoops: a mapping merged into itself, and a fan-out of merges,
// end quickly.
func TestMergeLoops(t *testing.T) {
	self := "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - &base\n        name: a\n        <<: *base\n        image: nginx\n      - <<: *base\n        name: b\n"
	var fan strings.Builder
	fan.WriteString("kind: Pod\nx:\n  m0: &m0 {a: 1}\n")
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&fan, "  m%d: &m%d {<<: [*m%d, *m%d, *m%d]}\n", i, i, i-1, i-1, i-1)
	}
	fan.WriteString("spec:\n  containers:\n  - <<: *m59\n    name: c\n    image: nginx\n  - <<: *m59\n    name: d\n")
	for name, in := range map[string]string{"self merge": self, "merge fan-out": fan.String()} {
		t.Run(name, func(t *testing.T) {
			rw, _ := New(rewrite.Config{})
			done := make(chan error, 1)
			go func() { _, err := rw.RewriteBytes([]byte(in), "in.yaml"); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("did not finish within 20 s")
			}
		})
	}
}

// TestParseErrorLines: yaml.v3's line conventions (1-based for scanner
// errors, 0-based for parser errors, none on the first line) become stream
// lines: where the enclosing construct starts, else where the problem is.
func TestParseErrorLines(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"kind: A\n---\na: 1\nb: 2\nc:\n\td: image\n", "in.yaml:6: malformed YAML: found character that cannot start any token"},
		{"kind: A\n---\na: 1\nb: [1, image\nc: 3\n", "in.yaml:4: malformed YAML: did not find expected ',' or ']'"},
		{"a: image\nb:\n  - x\n  y: 2\n", "in.yaml:3: malformed YAML: did not find expected '-' indicator"},
		{"kind: Pod\nspec:\n  containers:\n  - image: x\n   name: y\n", "in.yaml:3: malformed YAML: did not find expected key"},
		{"a: [image\n", "in.yaml:2: malformed YAML: did not find expected ',' or ']'"}, // found at the end
	}
	for _, tt := range tests {
		rw, _ := New(rewrite.Config{})
		_, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want prefix %q", tt.in, err, tt.want)
		}
	}
}

func TestErrorCap(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 500; i++ {
		in.WriteString(pod("Bad") + "---\n")
	}
	rw, _ := New(rewrite.Config{})
	_, err := rw.RewriteBytes([]byte(in.String()), "in.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxErrors+1 || !strings.Contains(lines[maxErrors], "stopped after the first 20 errors") {
		t.Errorf("%d error lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// TestEarlyStopDoesNotWaitForInput: once the error cap is reached, Rewrite
// returns without waiting for the rest of a slow input. (The input holds
// more than one batch: a partial batch waits for its input by design.)
func TestEarlyStopDoesNotWaitForInput(t *testing.T) {
	var bad strings.Builder
	for i := 0; i < 3*batchDocs; i++ {
		bad.WriteString(pod("Bad") + "---\n")
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(bad.String())) // then the input stays open, like a terminal
	rw, _ := New(rewrite.Config{})
	done := make(chan error, 1)
	go func() { done <- rw.Rewrite(io.Discard, pr, "in.yaml") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped after the first") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Rewrite waited for the input to end")
	}
}
