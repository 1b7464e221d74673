package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// batchDoc is a document's replacements, with the nodes and values they
// must read as.
type batchDoc struct {
	name string
	reps []replacement
	want map[*yaml.Node]string
	flow bool
}

// proofCases are documents whose tokens read as they must and documents
// whose tokens do not: a new value that reads as another value, a number,
// or not as one scalar (plain IPv6 in a block spoils a probe: it reads as
// a flow sequence), an old token that is not the value read.
func proofCases(t *testing.T) []batchDoc {
	t.Helper()
	node := func(src string) *yaml.Node {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("image: "+src+"\n"), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Content[0].Content[1]
	}
	// The document read src where old was replaced.
	doc := func(name, src, old, newTok, value string, flow bool) batchDoc {
		n := node(src)
		return batchDoc{name: name, reps: []replacement{{n, old, newTok}}, want: map[*yaml.Node]string{n: value}, flow: flow}
	}
	return []batchDoc{
		doc("plain", "nginx", "nginx", "sea.hub:5000/library/nginx", "sea.hub:5000/library/nginx", false),
		doc("quoted", `"redis:7"`, `"redis:7"`, `"sea.hub:5000/library/redis:7"`, "sea.hub:5000/library/redis:7", false),
		doc("IPv6 quoted", "busybox", "busybox", "'[::1]:5000/library/busybox'", "[::1]:5000/library/busybox", false),
		doc("IPv6 plain", "busybox", "busybox", "[::1]:5000/library/busybox", "[::1]:5000/library/busybox", false),
		doc("a number", "redis", "redis", "5000", "5000", false),
		doc("another value", "redis", "redis", "'sea.hub:5000/x'", "sea.hub:5000/library/redis", false),
		doc("not the token", `"rediss"`, `"redis"`, `"sea.hub:5000/library/redis"`, "sea.hub:5000/library/redis", false),
		doc("in a flow map", "nginx", "nginx", "sea.hub:5000/library/nginx", "sea.hub:5000/library/nginx", true),
		doc("a comma in a flow map", "nginx", "nginx", "'a,b'", "a,b", true),
		doc("good again", "nginx:1", "nginx:1", "sea.hub:5000/library/nginx:1", "sea.hub:5000/library/nginx:1", false),
	}
}

// TestProofBatch: a batch of documents proved at once gives each the
// verdict of its own proof (verifyTokens with a prover of its own), in
// every order and however the batch is cut; a document that spoils the
// probe spoils no other.
func TestProofBatch(t *testing.T) {
	docs := proofCases(t)
	verdict := make([]bool, len(docs))
	for i, d := range docs {
		verdict[i] = (&prover{}).read(d.reps, d.flow, d.want) == nil
	}
	if fmt.Sprint(verdict) != "[true true true false false false false true true true]" {
		t.Fatalf("the documents' own proofs: %v", verdict)
	}
	for _, size := range []int{1, 2, 3, len(docs)} {
		for _, reversed := range []bool{false, true} {
			t.Run(fmt.Sprintf("batches of %d, reversed %t", size, reversed), func(t *testing.T) {
				order := make([]int, len(docs))
				for i := range order {
					order[i] = i
					if reversed {
						order[i] = len(docs) - 1 - i
					}
				}
				run := &prover{}
				b := &proofBatch{run: run}
				for start := 0; start < len(order); start += size {
					end := min(start+size, len(order))
					for _, i := range order[start:end] {
						b.next()
						if err := b.read(docs[i].reps, docs[i].flow, docs[i].want); err != nil {
							t.Fatal(err)
						}
					}
					got := b.prove()
					for k, i := range order[start:end] {
						if got[k] != verdict[i] {
							t.Errorf("%s: proved %t in a batch, %t on its own", docs[i].name, got[k], verdict[i])
						}
					}
				}
				// What the batch read, the run's prover remembers, as it
				// would have read it.
				d := docs[0]
				if rd, ok := run.lookup(tokenPair{d.flow, d.reps[0].old, d.reps[0].new}); !ok || rd.check(d.reps[0], d.want) != nil {
					t.Errorf("the run's prover has %+v, %t for %s", rd, ok, d.name)
				}
			})
		}
	}
}

// TestPrepareIPv6: prepared with the batch proof, IPv6 registries (whose
// values must be quoted) give the rewrite's output, in both path styles.
func TestPrepareIPv6(t *testing.T) {
	var parts []Part
	for i := range 70 { // more than a batch
		parts = append(parts, Part{Name: fmt.Sprintf("t%d.yaml", i), Line: 1, Text: ipv6Stream})
	}
	for _, reg := range ipv6Registries {
		for _, style := range []rewrite.PathStyle{rewrite.PathStyleStrip, rewrite.PathStyleNest} {
			t.Run(reg.v6+"/"+string(style), func(t *testing.T) {
				cfg := rewrite.Config{Registry: reg.v6, PathStyle: style}
				var want, got strings.Builder
				if err := mustNew(t, cfg).RewriteParts(&want, parts); err != nil {
					t.Fatal(err)
				}
				rw := mustNew(t, cfg)
				rw.Prepare(parts, true)
				waitAhead(rw)
				if n := poison(rw, ""); n == 0 {
					t.Fatal("nothing prepared")
				}
				rw = mustNew(t, cfg)
				rw.Prepare(parts, true)
				waitAhead(rw)
				if err := rw.RewriteParts(&got, parts); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("after Prepare:\n%s\nwant:\n%s", got.String(), want.String())
				}
			})
		}
	}
}

// TestPrepareKeepsOnlyProved: of a batch of processed documents, those
// whose tokens were not proved are not kept (the rewrite processes them
// again, and proves them alone) and their bytes are no longer counted;
// a document kept again under its key replaces the one before.
func TestPrepareKeepsOnlyProved(t *testing.T) {
	la := &lookahead{done: map[aheadKey]aheadEntry{}}
	entry := func(name, data string) aheadPending {
		la.reserve(len(data))
		return aheadPending{aheadKey{name: name, line: 1, write: true}, aheadEntry{data: []byte(data)}}
	}
	la.keep([]aheadPending{entry("a", "1234"), entry("b", "12345678"), entry("c", "12")}, []bool{true, false, true})
	if _, ok := la.done[aheadKey{name: "b", line: 1, write: true}]; ok || len(la.done) != 2 || la.bytes != 6 {
		t.Errorf("kept %d documents of %d bytes (b kept: %t), want a and c, 6 bytes", len(la.done), la.bytes, ok)
	}
	la.keep([]aheadPending{entry("a", "123456")}, nil)
	if len(la.done) != 2 || la.bytes != 8 || string(la.done[aheadKey{name: "a", line: 1, write: true}].data) != "123456" {
		t.Errorf("kept %d documents of %d bytes, want a again and c, 8 bytes", len(la.done), la.bytes)
	}
}
