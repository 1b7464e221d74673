package manifest

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// waitAhead waits for rw's Prepare job to end by itself.
func waitAhead(rw *Rewriter) {
	la := rw.ahead.Load()
	if la == nil {
		return
	}
	la.mu.Lock()
	ended := la.ended
	la.mu.Unlock()
	if ended != nil {
		<-ended
	}
}

// runPrepared is runParts (one pipeline, no writer failure) after
// Prepare(draft, draftWrite), finished (wait) or not.
func runPrepared(t *testing.T, draft []Part, draftWrite bool, wait bool, parts []Part, write bool) partsRun {
	t.Helper()
	var r partsRun
	rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"}, WithWarnings(func(err error) { r.warns = append(r.warns, err.Error()) }))
	rw.Prepare(draft, draftWrite)
	if wait {
		waitAhead(rw)
	}
	fw := &failAfter{n: 1 << 30}
	var err error
	if write {
		err = rw.RewriteParts(fw, parts)
	} else {
		err = rw.RewriteParts(nil, parts)
	}
	if err != nil {
		r.err = err.Error()
	}
	r.out, r.images = fw.b.String(), rw.Images()
	return r
}

// TestPrepareChangesNothing: a rewrite after Prepare writes, collects,
// warns and fails as one without, whether the draft is the parts, was
// prepared for the other mode, differs from them (other lines, other
// bytes, fewer documents) or is still being prepared.
func TestPrepareChangesNothing(t *testing.T) {
	shift := func(ps []Part, by int) []Part {
		out := append([]Part(nil), ps...)
		for i := range out {
			out[i].Line += by
		}
		return out
	}
	edit := func(ps []Part) []Part {
		out := append([]Part(nil), ps...)
		for i := range out {
			if i%2 == 0 {
				out[i].Text = strings.ReplaceAll(out[i].Text, "nginx", "NGINX")
			}
		}
		return out
	}
	for _, tt := range partsCases() {
		drafts := map[string]struct {
			parts []Part
			write bool // the draft's, xor the rewrite's
			wait  bool
		}{
			"same":           {tt.parts, false, true},
			"same, running":  {tt.parts, false, false},
			"other mode":     {tt.parts, true, true},
			"lines shifted":  {shift(tt.parts, 1), false, true},
			"bytes changed":  {edit(tt.parts), false, true},
			"half the parts": {tt.parts[:len(tt.parts)/2], false, true},
		}
		for _, write := range []bool{false, true} {
			want := runParts(t, tt.parts, true, write, 1<<30)
			for name, d := range drafts {
				t.Run(fmt.Sprintf("%s/%s/write=%t", tt.name, name, write), func(t *testing.T) {
					got := runPrepared(t, d.parts, d.write != write, d.wait, tt.parts, write)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("after Prepare:\n%+v\nwant:\n%+v", got, want)
					}
				})
			}
		}
	}
}

// poison replaces the output of every prepared document with marker, so
// that a rewrite shows which ones it took.
func poison(rw *Rewriter, marker string) int {
	la := rw.ahead.Load()
	la.mu.Lock()
	defer la.mu.Unlock()
	for k, e := range la.done {
		e.res.out = []byte(marker)
		la.done[k] = e
	}
	return len(la.done)
}

// TestPrepareIsUsed: a prepared document is what the rewrite of the same
// document records and writes, once; a document prepared before the
// run's ConfigMap keys passed as images changed is processed again.
func TestPrepareIsUsed(t *testing.T) {
	parts := partsCases()[2].parts[:50]
	rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
	rw.Prepare(parts, true)
	waitAhead(rw)
	if n := poison(rw, "PREPARED\n"); n != len(parts) {
		t.Fatalf("%d documents prepared, want %d", n, len(parts))
	}
	var b strings.Builder
	if err := rw.RewriteParts(&b, parts); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "PREPARED\n"); n != len(parts) {
		t.Errorf("%d prepared documents written, want %d:\n%s", n, len(parts), b.String())
	}
	if n := len(rw.ahead.Load().done); n != 0 {
		t.Errorf("%d prepared documents left after the rewrite", n)
	}
	// Taken once: a second rewrite processes them again.
	b.Reset()
	if err := rw.RewriteParts(&b, parts); err != nil || strings.Contains(b.String(), "PREPARED") {
		t.Errorf("second rewrite: %v\n%s", err, b.String())
	}

	rw = mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
	rw.Prepare(parts, true)
	waitAhead(rw)
	poison(rw, "PREPARED\n")
	cm := envDeployment("monitoring", reloaderArgs+reloaderEnv)
	before := rw.envRefs.load()
	if err := rw.ScanEnvImages(strings.NewReader(cm)); err != nil || rw.envRefs.load() == before {
		t.Fatalf("scanning %q: %v, keys changed: %t", cm, err, rw.envRefs.load() != before)
	}
	b.Reset()
	if err := rw.RewriteParts(&b, parts); err != nil || strings.Contains(b.String(), "PREPARED") {
		t.Errorf("after the ConfigMap keys changed: %v\n%s", err, b.String())
	}
}

// TestPrepareStops: a rewrite stops a Prepare job that runs and processes
// the rest itself, and nothing is left held.
func TestPrepareStops(t *testing.T) {
	parts := partsCases()[2].parts
	rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
	rw.Prepare(parts, true)
	want := runParts(t, parts, true, true, 1<<30)
	got := runPrepared(t, nil, true, false, parts, true)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	var b strings.Builder
	if err := rw.RewriteParts(&b, parts); err != nil || b.String() != want.out {
		t.Errorf("%v\n%s", err, b.String())
	}
	la := rw.ahead.Load()
	la.mu.Lock()
	defer la.mu.Unlock()
	if la.stop != nil || la.bytes != 0 || len(la.done) != 0 {
		t.Errorf("after the rewrite: job %v, %d bytes, %d documents held", la.stop != nil, la.bytes, len(la.done))
	}
}

// TestPrepareConcurrent: Prepare calls at once leave one job running, which
// a rewrite's stop ends (none is left running unseen); the bytes counted
// for a document prepared twice are counted once.
func TestPrepareConcurrent(t *testing.T) {
	var parts []Part
	for i := 0; i < 200; i++ {
		parts = append(parts, Part{Name: fmt.Sprintf("t%d.yaml", i), Line: 1, Head: "---\n",
			Text: fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n  - name: c\n    image: nginx:%d\n", i, i)})
	}
	for round := 0; round < 50; round++ {
		rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 3 {
			wg.Add(1)
			go func() { defer wg.Done(); <-start; rw.Prepare(parts, true) }()
		}
		close(start)
		wg.Wait()
		rw.stopAhead()
		la := rw.ahead.Load()
		if n := la.running.Load(); n != 0 {
			t.Fatalf("round %d: %d Prepare jobs still running after the stop", round, n)
		}
		la.mu.Lock()
		size := 0
		for _, e := range la.done {
			size += len(e.data)
		}
		if size != la.bytes {
			t.Errorf("round %d: %d bytes counted for %d held", round, la.bytes, size)
		}
		la.mu.Unlock()
	}
}

// TestPrepareIsUsedWithEnvImages: the documents of parts that pass a
// ConfigMap key as an image through $(VAR) are prepared with it, and
// used: the ConfigMap as the rewrite makes it, every other document too.
func TestPrepareIsUsedWithEnvImages(t *testing.T) {
	parts := append([]Part(nil), partsCases()[2].parts[:20]...)
	parts = append(parts,
		Part{Name: "cm.yaml", Line: 1, Head: "---\n", Text: envConfigMap("monitoring", "kp-operator", "prometheus-config-reloader", "bitnami/x:1")},
		Part{Name: "dep.yaml", Line: 1, Head: "---\n", Text: envDeployment("monitoring", reloaderArgs+reloaderEnv)})
	want := runParts(t, parts, true, true, 1<<30)
	if !strings.Contains(want.out, "sea.hub:5000/bitnami/x:1") {
		t.Fatalf("the ConfigMap is not rewritten without Prepare:\n%s", want.out)
	}
	rw := mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
	rw.Prepare(parts, true)
	waitAhead(rw)
	var b strings.Builder
	if err := rw.RewriteParts(&b, parts); err != nil || b.String() != want.out {
		t.Fatalf("%v\n%s\nwant:\n%s", err, b.String(), want.out)
	}
	// Used: each document is written from what was prepared.
	rw = mustNew(t, rewrite.Config{Registry: "sea.hub:5000"})
	rw.Prepare(parts, true)
	waitAhead(rw)
	prepared := poison(rw, "PREPARED\n")
	b.Reset()
	if err := rw.RewriteParts(&b, parts); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "PREPARED\n"); prepared != len(parts) || n != len(parts) {
		t.Errorf("%d documents prepared, %d used, want %d", prepared, n, len(parts))
	}
}
