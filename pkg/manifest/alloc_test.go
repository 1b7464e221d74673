package manifest

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// manyNamedRefs is a Pod whose container has n arguments, each a named
// embedded reference (--component-000001-sidecar-image=REF, 50 images)
// when refs is set, or a flag whose value is no reference otherwise: the
// same bytes, the same YAML tree.
func manyNamedRefs(n int, refs bool) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.25\n    args:\n")
	sep, flag := ':', "image"
	if !refs {
		sep, flag = '-', "param"
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - --component-%06d-sidecar-%s=registry.example.com/platform-team/sidecar-app-%d%cv1.2.3\n", i, flag, i%50, sep)
	}
	return b.Bytes()
}

// allocated is the number of bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestNamedEmbeddedAllocs: a document of many named embedded references
// costs allocations linear in its size and a small multiple of it (issue
// 21: a 19 MB Pod of 200,000 --a-image= arguments cost 1.33 GB and 26 s).
// yaml.v3 allocates about 9 times the input to parse it, and a rewrite of
// embedded references parses twice (the input, then its output, to prove
// that nothing but the references changed), so 10 times is out of reach;
// what the references add on top of the two parses is bounded here. Before
// the fix the rewrite allocated 107 times its input, 9 KB per reference.
func TestNamedEmbeddedAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("rewrites several MB")
	}
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items: regexp matches allocate afresh")
	}
	ratio := func(n int, refs bool) float64 {
		in := manyNamedRefs(n, refs)
		rw, err := New(rewrite.Config{}, WithFirstOccurrences(), WithWorkers(1))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		out.Grow(2 * len(in))
		a := allocated(func() {
			if err := rw.Rewrite(&out, bytes.NewReader(in), "pod.yaml"); err != nil {
				t.Fatal(err)
			}
		})
		count := 0
		for _, img := range rw.Images() {
			count += img.Count
		}
		if want := map[bool]int{true: n + 1, false: 1}[refs]; count != want || refs != strings.Contains(out.String(), "=sea.hub:5000/platform-team/sidecar-app-49:v1.2.3\n") {
			t.Fatalf("%d arguments: %d images found, want %d", n, count, want)
		}
		return float64(a) / float64(len(in))
	}
	in := manyNamedRefs(40000, true)
	parse := float64(allocated(func() {
		var n yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&n); err != nil {
			t.Fatal(err)
		}
	})) / float64(len(in))
	small, large, plain := ratio(10000, true), ratio(40000, true), ratio(40000, false)
	t.Logf("input %d bytes; allocated per input byte: yaml.v3 parse %.1f, rewrite without references %.1f, with 10,000 references %.1f, with 40,000 %.1f", len(in), parse, plain, small, large)
	if large > 1.1*small {
		t.Errorf("allocations grow faster than the input: %.1f bytes per input byte for 10,000 references, %.1f for 40,000", small, large)
	}
	// Two parses and the rewrite of the same document without references,
	// plus about 2 KB per reference (a 96-byte argument).
	if limit := plain + parse + 22; large > limit {
		t.Errorf("40,000 named references: %.1f bytes allocated per input byte, want at most %.1f (the rewrite without them %.1f, a parse %.1f, 22 for the references)", large, limit, plain, parse)
	}
	if large > 45 {
		t.Errorf("40,000 named references: %.1f bytes allocated per input byte, want at most 45", large)
	}
}
