package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

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
// output, without a panic or a stack overflow. A hang fails by go test's
// -timeout; how fast they end is BenchmarkHostile's business, and
// TestHostileWorkIsLinear bounds the work by operation counts.
func TestHostile(t *testing.T) {
	big := strings.Repeat("a", 4<<20)
	bigScalar := "kind: ConfigMap\ndata:\n  image: " + strings.Repeat("a", 8<<20) + "\n---\n" + pod(big)
	tests := []struct {
		name    string
		in      string
		wantErr string // the whole error; "" for success
	}{
		{"alias bomb", aliasBomb(40), ""},
		{"100000 levels of flow nesting", hostileDeepFlow, "in.yaml:3: malformed YAML: exceeded max depth of 10000"},
		{"100000 levels of block nesting", hostileDeepBlock, "in.yaml:3: malformed YAML: exceeded max depth of 10000"},
		// Issue 29, item 12: the message shows the value cut, with its
		// size; the error's data keeps it whole (checkBigError).
		{"multi-megabyte scalars", bigScalar, `in.yaml:13: Pod ns/p: spec.containers[0].image: invalid image reference "` + big[:512] + `"…(4194304 bytes): repository must be between 1 and 255 characters in length: ` + big[:512] + `…(4194304 bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rw, _ := New(rewrite.Config{})
			var out bytes.Buffer
			err := rw.Rewrite(&out, strings.NewReader(tt.in), "in.yaml")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("err = %.300v\nwant %.300s", err, tt.wantErr)
			}
			if tt.in == bigScalar {
				checkBigError(t, err, big)
			}
		})
	}
}

// checkBigError checks the multi-megabyte error part by part: one *Error
// naming the file, line, object and field, wrapping the invalid reference
// whole (its message is cut: at most 2 KB).
func checkBigError(t *testing.T, err error, big string) {
	t.Helper()
	var e *Error
	var ie *rewrite.InvalidReferenceError
	if !errors.As(err, &e) || !errors.As(err, &ie) {
		t.Fatalf("err = %.300v, want a *manifest.Error wrapping a *rewrite.InvalidReferenceError", err)
	}
	// The value is the reference error's, not repeated in the location.
	want := rewrite.Location{File: "in.yaml", Line: 13, Column: 12, Kind: "Pod", Namespace: "ns", Name: "p", Field: "spec.containers[0].image"}
	if e.Location != want {
		got := e.Location
		got.Value = fmt.Sprintf("<%d bytes>", len(got.Value))
		t.Errorf("location %#v, want %#v", got, want)
	}
	if ie.Value != big || ie.Reason != "repository must be between 1 and 255 characters in length: "+big[:512]+"…(4194304 bytes)" || ie.Hint != "" {
		t.Errorf("invalid reference: value %d bytes, reason %.100q, hint %q", len(ie.Value), ie.Reason, ie.Hint)
	}
	if n := len(err.Error()); n > 2<<10 {
		t.Errorf("the message has %d bytes", n)
	}
}

var (
	hostileDeepFlow  = "kind: Pod\nspec: {containers: [{image: nginx}]}\nx: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	hostileDeepBlock = "kind: Widget\nimage: x\nspec:\n" + strings.Repeat("  ", 1) + strings.Repeat("- ", 100000) + "x\n"
)

// aliasBomb is a custom resource whose container list is reached through
// 4^depth alias paths.
func aliasBomb(depth int) string {
	var bomb strings.Builder
	bomb.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: bomb}\nspec:\n  a0: &a0 [{image: nginx}]\n")
	for i := 1; i < depth; i++ {
		fmt.Fprintf(&bomb, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1)
	}
	bomb.WriteString("  containers: [{image: busybox}]\n")
	return bomb.String()
}

// mergeFanOut is a Pod whose containers merge a mapping reached through
// 3^depth merge paths.
func mergeFanOut(depth int) string {
	var fan strings.Builder
	fan.WriteString("kind: Pod\nx:\n  m0: &m0 {a: 1}\n")
	for i := 1; i < depth; i++ {
		fmt.Fprintf(&fan, "  m%d: &m%d {<<: [*m%d, *m%d, *m%d]}\n", i, i, i-1, i-1, i-1)
	}
	fmt.Fprintf(&fan, "spec:\n  containers:\n  - <<: *m%d\n    name: c\n    image: nginx\n  - <<: *m%d\n    name: d\n", depth-1, depth-1)
	return fan.String()
}

// workOf runs f and returns the heap allocations it made (count and
// bytes), a measure of work that does not depend on the machine's load.
// The tests calling it are not parallel.
func workOf(f func()) (mallocs, bytes uint64) {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.Mallocs - a.Mallocs, b.TotalAlloc - a.TotalAlloc
}

// leastWorkOf is workOf, the least of several runs under the race detector:
// its sync.Pool drops items at random (see race_test.go), so a run
// allocates afresh what a pool would have handed back. Dropped items only
// add allocations, so the least of a few runs comes closest to the
// program's own work; without -race, and for runs of a megabyte or more
// (the race detector makes them slow, and a dropped item weighs little
// there), one run is measured.
func leastWorkOf(f func()) (mallocs, bytes uint64) {
	mallocs, bytes = workOf(f)
	if !raceEnabled || bytes >= 1<<20 {
		return mallocs, bytes
	}
	for i := 1; i < 5; i++ {
		m, b := workOf(f)
		mallocs, bytes = min(mallocs, m), min(bytes, b)
	}
	return mallocs, bytes
}

// TestHostileWorkIsLinear bounds the work of hostile inputs by operation
// counts instead of time: growing an alias bomb or a merge fan-out by a few
// levels multiplies its paths by 4^k or 3^k but must not multiply the
// work; a scalar four times as long must cost at most about four times as
// much (not sixteen). The bounds are the same with and without -race
// (leastWorkOf), except that under -race the bytes of runs allocating
// less than a megabyte are not compared: there the state the race
// detector's pool drops (a regexp's, a few kilobytes a match) weighs more
// than the input, and an alias bomb's bytes grow 2.2 times at the least of
// five runs (1.3 to 1.8 without -race). Their allocation counts, which a
// dropped item barely moves, are compared in both builds.
func TestHostileWorkIsLinear(t *testing.T) {
	rewriteAll := func(in string, cfg rewrite.Config) func() {
		return func() {
			rw, _ := New(cfg)
			if _, err := rw.RewriteBytes([]byte(in), "in.yaml"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct {
		name         string
		small, large string
		cfg          rewrite.Config
		maxRatio     float64 // of allocations, large over small
	}{
		// 4^6 and 4^10 paths: exponential work would be 256 times more.
		{"alias bomb 6 -> 10 levels", aliasBomb(6), aliasBomb(10), rewrite.Config{RewriteEmbedded: true}, 2},
		// 3^6 and 3^12 paths: exponential work would be 729 times more.
		{"merge fan-out 6 -> 12 levels", mergeFanOut(6), mergeFanOut(12), rewrite.Config{RewriteEmbedded: true}, 2},
		// 1 MB and 4 MB: linear work is at most 4 times more, quadratic 16.
		{"scalar 1 MB -> 4 MB", "kind: ConfigMap\ndata:\n  image: " + strings.Repeat("a", 1<<20) + "\n", "kind: ConfigMap\ndata:\n  image: " + strings.Repeat("a", 4<<20) + "\n", rewrite.Config{RewriteEmbedded: true}, 6},
		{"image 1 MB -> 4 MB", "kind: Pod\nspec:\n  containers:\n  - image: ok/" + strings.Repeat("a", 1<<20) + "\n", "kind: Pod\nspec:\n  containers:\n  - image: ok/" + strings.Repeat("a", 4<<20) + "\n", rewrite.Config{SkipInvalid: true}, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rewriteAll(tt.small, tt.cfg)() // warm up: one-time allocations
			ms, bs := leastWorkOf(rewriteAll(tt.small, tt.cfg))
			ml, bl := leastWorkOf(rewriteAll(tt.large, tt.cfg))
			if r := float64(ml) / float64(ms); r > tt.maxRatio {
				t.Errorf("allocations grew %.1f times (%d -> %d), want at most %.0f", r, ms, ml, tt.maxRatio)
			}
			if r := float64(bl) / float64(bs); r > tt.maxRatio && (!raceEnabled || bs >= 1<<20) {
				t.Errorf("allocated bytes grew %.1f times (%d -> %d), want at most %.0f", r, bs, bl, tt.maxRatio)
			}
		})
	}
}

// BenchmarkHostile times the hostile inputs of TestHostile.
func BenchmarkHostile(b *testing.B) {
	for _, bm := range []struct{ name, in string }{
		{"alias-bomb-40", aliasBomb(40)},
		{"merge-fan-out-60", mergeFanOut(60)},
		{"flow-nesting-100000", hostileDeepFlow},
		{"block-nesting-100000", hostileDeepBlock},
		{"scalar-8MB", "kind: ConfigMap\ndata:\n  image: " + strings.Repeat("a", 8<<20) + "\n"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			data := []byte(bm.in)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rw, _ := New(rewrite.Config{})
				_, _ = rw.RewriteBytes(data, "in.yaml")
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
// end (a hang fails by go test's -timeout; TestHostileWorkIsLinear bounds
// the fan-out's work) with every image found.
func TestMergeLoops(t *testing.T) {
	self := "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - &base\n        name: a\n        <<: *base\n        image: nginx\n      - <<: *base\n        name: b\n"
	for _, tt := range []struct {
		name, in string
		want     int // image occurrences
	}{{"self merge", self, 2}, {"merge fan-out", mergeFanOut(60), 1}} {
		t.Run(tt.name, func(t *testing.T) {
			rw, _ := New(rewrite.Config{})
			if _, err := rw.RewriteBytes([]byte(tt.in), "in.yaml"); err != nil {
				t.Fatal(err)
			}
			if n := countOccurrences(rw.Images()); n != tt.want {
				t.Errorf("%d image occurrences, want %d: %+v", n, tt.want, rw.Images())
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
		t.Run(tt.want, func(t *testing.T) {
			rw, _ := New(rewrite.Config{})
			_, err := rw.RewriteBytes([]byte(tt.in), "in.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("%q: err = %v, want prefix %q", tt.in, err, tt.want)
			}
		})
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
// The input never ends before Rewrite returns: a Rewrite that waits for it
// hangs, and go test's -timeout fails it; no wall-clock deadline.
func TestEarlyStopDoesNotWaitForInput(t *testing.T) {
	var bad strings.Builder
	for i := 0; i < 3*batchDocs; i++ {
		bad.WriteString(pod("Bad") + "---\n")
	}
	in := &openInput{data: []byte(bad.String()), release: make(chan struct{})}
	defer close(in.release)
	rw, _ := New(rewrite.Config{})
	err := rw.Rewrite(io.Discard, in, "in.yaml")
	if err == nil || !strings.Contains(err.Error(), "stopped after the first") {
		t.Fatalf("err = %v", err)
	}
	// It stopped early: it did not need the whole input to decide.
	if n := in.served.Load(); n == 0 || n > int64(len(in.data)) {
		t.Errorf("read %d of %d bytes", n, len(in.data))
	}
}

// openInput serves data, then blocks, like a terminal that stays open,
// until release is closed.
type openInput struct {
	data    []byte
	served  atomic.Int64
	release chan struct{}
}

func (r *openInput) Read(p []byte) (int, error) {
	off := r.served.Load()
	if off >= int64(len(r.data)) {
		<-r.release
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	r.served.Add(int64(n))
	return n, nil
}
