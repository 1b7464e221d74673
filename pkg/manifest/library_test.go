package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestImageListComments: "#" starts a comment at the start of a line or
// after white space; inside a token it is part of it (and then invalid).
func TestImageListComments(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	in := "nginx:1.25 # the web server\nredis:7\t# cache\n  # indented comment\n"
	if err := rw.ReadImageList(strings.NewReader(in), "imageList"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rw.Sources(), " "); got != "docker.io/library/nginx:1.25 docker.io/library/redis:7" {
		t.Errorf("sources = %s", got)
	}
	err := rw.ReadImageList(strings.NewReader("nginx:1#2\n"), "imageList")
	if err == nil || !strings.Contains(err.Error(), "imageList:1") {
		t.Errorf("err = %v, want an invalid reference at imageList:1", err)
	}
}

// TestExpandNothing: no path is no input; standard input is the caller's
// decision.
func TestExpandNothing(t *testing.T) {
	in, err := ExpandPaths(nil)
	if err != nil || len(in) != 0 {
		t.Errorf("ExpandPaths(nil) = %v, %v; want nothing", in, err)
	}
}

// TestWriteErrorNamesTheInput: an error of the output writer says which
// input was being written.
func TestWriteErrorNamesTheInput(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	err := rw.Rewrite(errWriter{}, strings.NewReader("kind: Pod\nspec: {containers: [{image: nginx}]}\n"), "app.yaml")
	if err == nil || err.Error() != "app.yaml: writing the output: disk full" {
		t.Errorf("err = %v, want %q", err, "app.yaml: writing the output: disk full")
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestCollisionIsLocated: a collision is a *Error at the second
// occurrence, wrapping the *rewrite.CollisionError that names both.
func TestCollisionIsLocated(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	in := "kind: Pod\nmetadata: {name: a}\nspec: {containers: [{image: docker.io/team/app:1}]}\n---\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{image: quay.io/team/app:1}]}\n"
	_, err := rw.RewriteBytes([]byte(in), "app.yaml")
	var e *Error
	var ce *rewrite.CollisionError
	if !errors.As(err, &e) || !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *manifest.Error wrapping a *rewrite.CollisionError", err)
	}
	if e.Location.File != "app.yaml" || e.Location.Line != 7 || e.Location.Name != "b" || ce.First.Location.Line != 3 {
		t.Errorf("collision at %s (first at %s), want app.yaml:7 (first at line 3)", e.Location, ce.First.Location)
	}
}

// TestConcurrentRewrites: one Rewriter shared by goroutines (run with
// -race) collects the images of every call.
func TestConcurrentRewrites(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			in := "kind: Pod\nspec: {containers: [{image: nginx:1." + string(rune('0'+i)) + "}]}\n"
			_, err := rw.RewriteBytes([]byte(in), "app.yaml")
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := len(rw.ToCache()); got != n {
		t.Errorf("%d images, want %d", got, n)
	}
}
