package manifest

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// failingWriter fails every write after the first n.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

// TestJoinWriterErrors: a failing writer's error comes back, from the
// separator and from the content.
func TestJoinWriterErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
	}{{"first write", 0}, {"separator", 1}, {"second write", 2}} {
		n := tt.n
		t.Run(tt.name, func(t *testing.T) {
			j := NewJoinWriter(&failingWriter{n: n})
			var err error
			for _, s := range []string{"a: 1\n", "b: 2\n"} {
				j.Next()
				if _, err = j.Write([]byte(s)); err != nil {
					break
				}
			}
			// Writes: "a: 1\n", then "---\n", then "b: 2\n".
			if n < 3 && (err == nil || err.Error() != "disk full") {
				t.Errorf("writer failing after %d writes: err = %v, want disk full", n, err)
			}
		})
	}
	var b strings.Builder
	j := NewJoinWriter(&b)
	if n, err := j.Write([]byte("a: 1\n")); n != 5 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
}

// TestWorkers: any number of workers gives the same output; fewer than one
// means one.
func TestWorkers(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 3*batchDocs; i++ {
		in.WriteString(pod("nginx:1.25") + "---\n")
	}
	want := strings.ReplaceAll(in.String(), "image: nginx:1.25", "image: sea.hub:5000/library/nginx:1.25")
	for _, tt := range []struct {
		name string
		n    int
	}{{"n=-3", -3}, {"n=0", 0}, {"n=1", 1}, {"n=2", 2}, {"n=7", 7}} {
		n := tt.n
		t.Run(tt.name, func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{}, WithWorkers(n))
			if n < 1 && rw.workers != 1 || n >= 1 && rw.workers != n {
				t.Errorf("WithWorkers(%d): %d workers", n, rw.workers)
			}
			out, err := rw.RewriteBytes([]byte(in.String()), "in.yaml")
			if err != nil || string(out) != want {
				t.Errorf("WithWorkers(%d): err %v, output as expected %v", n, err, string(out) == want)
			}
		})
	}
}

// cappedInput serves data, then fails: reading past data means Rewrite
// did not stop where it should have.
type cappedInput struct{ r io.Reader }

func (c *cappedInput) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, errors.New("read past the error cap")
	}
	return n, err
}

// TestErrorCapAtBatchBoundary: a batch that brings the errors to exactly
// the cap stops the run; what follows is not read, its failure not
// reported.
func TestErrorCapAtBatchBoundary(t *testing.T) {
	var in strings.Builder
	for i := 0; i < batchDocs; i++ {
		img := "nginx"
		if i < maxErrors {
			img = "Bad"
		}
		in.WriteString(pod(img) + "---\n")
	}
	rw := mustNew(t, rewrite.Config{})
	err := rw.Rewrite(io.Discard, &cappedInput{strings.NewReader(in.String())}, "in.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxErrors || strings.Contains(err.Error(), "read past") {
		t.Errorf("%d error lines, want the %d invalid images alone:\n%s", len(lines), maxErrors, err)
	}
}

// TestWriteErrorStops: a write error ends the run: later documents are not
// checked, their errors not reported.
func TestWriteErrorStops(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 2*batchDocs; i++ {
		in.WriteString(pod("nginx") + "---\n")
	}
	in.WriteString(pod("Bad"))
	rw := mustNew(t, rewrite.Config{})
	err := rw.Rewrite(&failingWriter{}, strings.NewReader(in.String()), "in.yaml")
	if err == nil || !strings.Contains(err.Error(), "disk full") || strings.Contains(err.Error(), "Bad") {
		t.Errorf("err = %v, want the write error alone", err)
	}
}

// TestMergeSequence: a container merging a list of mappings takes each key
// from the first mapping that has it. Listing finds it; rewriting it would
// also change x.b.image, which is no image field, so it is an error.
func TestMergeSequence(t *testing.T) {
	in := "kind: Pod\nx:\n  a: &a {name: a}\n  b: &b {image: quay.io/a/b:1}\n  c: &c {image: quay.io/a/c:1}\nspec:\n  containers:\n  - <<: [*a, *b, *c]\n    name: c\n"
	rw := mustNew(t, rewrite.Config{})
	if err := rw.Rewrite(nil, strings.NewReader(in), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	if imgs := rw.Images(); len(imgs) != 1 || imgs[0].Source != "quay.io/a/b:1" {
		t.Errorf("images %+v, want quay.io/a/b:1 alone", imgs)
	}
	if _, err := mustNew(t, rewrite.Config{}).RewriteBytes([]byte(in), "in.yaml"); err == nil || !strings.Contains(err.Error(), "shared through a YAML anchor") {
		t.Errorf("rewrite: err = %v, want the shared-anchor error", err)
	}
}

// TestNotVerbatim: a reference inside a string written with an escape
// cannot be rewritten in place: left as written with a warning when
// embedded, an error in a composed image field; both say why.
func TestNotVerbatim(t *testing.T) {
	var warns []error
	rw := mustNew(t, rewrite.Config{RewriteEmbedded: true}, WithWarnings(func(err error) { warns = append(warns, err) }))
	in := envDoc(`"quay.io/a\x2fb:1"`)
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	want := "in.yaml:9: Pod p: spec.containers[0].env[0].value: embedded image reference left as written: cannot rewrite quay.io/a/b:1 in place: not written verbatim in the file (escape sequences)"
	if err != nil || string(out) != in || len(warns) != 1 || warns[0].Error() != want {
		t.Errorf("embedded: err %v, warnings %v, want one: %s", err, warns, want)
	}

	rw = mustNew(t, rewrite.Config{})
	_, err = rw.RewriteBytes([]byte("apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p}\nspec:\n  baseImage: \"quay.io/prometheus\\x2fprometheus\"\n  version: v2\n"), "in.yaml")
	want = "in.yaml:5: Prometheus p: spec.baseImage: cannot rewrite quay.io/prometheus/prometheus in place: not written verbatim in the file (escape sequences)"
	if err == nil || err.Error() != want {
		t.Errorf("composed: err %v, want %s", err, want)
	}
}

// brokenInput serves data, then fails.
type brokenInput struct{ r io.Reader }

func (b *brokenInput) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

// TestReadError: an input that fails is an error naming the input, after
// the documents read before it.
func TestReadError(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
	}{{"empty", ""}, {"one document", pod("nginx") + "---\n"}, {"two documents", pod("nginx") + "---\n" + pod("busybox")}} {
		in := tt.in
		t.Run(tt.name, func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{})
			var out strings.Builder
			err := rw.Rewrite(&out, &brokenInput{strings.NewReader(in)}, "in.yaml")
			if err == nil || err.Error() != "in.yaml: connection reset" {
				t.Errorf("%q: err = %v, want in.yaml: connection reset", in, err)
			}
		})
	}
}

// TestYAML12Directive: a "%YAML 1.2" directive, first or after comments,
// is read as the 1.1 yaml.v3 accepts; elsewhere it is left alone.
func TestYAML12Directive(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
	}{{"first", "%YAML 1.2\n---\n" + pod("nginx")}, {"after a comment", "# c\n%YAML 1.2\n---\n" + pod("nginx")}} {
		in := tt.in
		t.Run(tt.name, func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{})
			out, err := rw.RewriteBytes([]byte(in), "in.yaml")
			if err != nil || string(out) != strings.Replace(in, "image: nginx", "image: sea.hub:5000/library/nginx", 1) {
				t.Errorf("%q: %q, %v", in, out, err)
			}
		})
	}
	if got := string(yaml11([]byte("a: \"%YAML 1.2\"\n"))); got != "a: \"%YAML 1.2\"\n" {
		t.Errorf("directive text inside a value changed: %q", got)
	}
}

// TestComposedAtEnd: a composed field whose value ends the stream, without
// a final line break, is rewritten in place; it warns only about a pin.
func TestComposedAtEnd(t *testing.T) {
	in := "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: p}\nspec:\n  version: v2.54.1\n  baseImage: quay.io/prometheus/prometheus"
	var warns []error
	rw := mustNew(t, rewrite.Config{}, WithWarnings(func(err error) { warns = append(warns, err) }))
	out, err := rw.RewriteBytes([]byte(in), "in.yaml")
	if err != nil || string(out) != strings.Replace(in, "quay.io/prometheus", "sea.hub:5000/prometheus", 1) || len(warns) != 0 {
		t.Errorf("out %q, err %v, warnings %v", out, err, warns)
	}

	pins, err := rewrite.ParsePins(strings.NewReader("quay.io/prometheus/prometheus:v2.54.1\tsea.hub:5000/prometheus/prometheus:v2.54.1@"+digest+"\n"), "pins")
	if err != nil {
		t.Fatal(err)
	}
	warns = nil
	rw = mustNew(t, rewrite.Config{}, WithPins(pins), WithWarnings(func(err error) { warns = append(warns, err) }))
	if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil || len(warns) != 1 || !strings.Contains(warns[0].Error(), "pin of quay.io/prometheus/prometheus:v2.54.1 not written") {
		t.Errorf("pinned: err %v, warnings %v, want one about the pin", err, warns)
	}
}
