package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Limits on the size of an object (issue 29, item 9): etcd refuses
// requests of more than 1.5 MiB (its default --max-request-bytes), and
// client-side kubectl apply stores the whole object, as JSON, in the
// kubectl.kubernetes.io/last-applied-configuration annotation, and the
// annotations of an object may hold at most 256 KiB.
const (
	etcdLimit       = 1536 << 10
	annotationLimit = 256 << 10
)

// ManyPins makes n pins of sources of 40 characters (registry, team,
// application and tag), each pinned to its target with a sha256 digest,
// as rehost mirror --pin prints them.
func manyPins(t testing.TB, n int) rewrite.Pins {
	t.Helper()
	pins := rewrite.Pins{}
	for i := 0; i < n; i++ {
		src := fmt.Sprintf("registry.example.com/team-%02d/app-%04d:1.%02d", i%97, i, i%89)
		ref, err := rewrite.ParseRef(src)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := rewrite.ParseRef(fmt.Sprintf("sea.hub:5000/team-%02d/app-%04d:1.%02d@sha256:%064x", i%97, i, i%89, i*7919+1))
		if err != nil {
			t.Fatal(err)
		}
		pins[ref.Qualified()] = dst
	}
	return pins
}

// jsonSize is the size of the stream's documents as kubectl sends them and
// stores them in last-applied-configuration: JSON, one object each; it
// returns the largest.
func jsonSize(t testing.TB, stream []byte) int {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	largest := 0
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(b))
	}
	return largest
}

// TestPinsDefinedOnce: the pins are written once, in spec.variables, in
// maps the API server's CEL parser takes (at most 90,000 characters each),
// whatever the number of container lists; a pin that changes only the
// digest is written as the digest. 3,000 pins make a policy far below
// etcd's 1.5 MiB; the number that fits client-side kubectl apply's 256 KiB
// is the one docs/policy.md gives.
func TestPinsDefinedOnce(t *testing.T) {
	pins := manyPins(t, 3000)
	var b bytes.Buffer
	if err := Write(&b, rewrite.Config{}, Options{Pins: pins, Validate: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for src, dst := range pins {
		if n := strings.Count(out, "'"+src+"'"); n != 1 {
			t.Fatalf("%s written %d times", src, n)
		}
		if !strings.Contains(out, "'"+src+"': '"+dst.Digest+"'") {
			t.Fatalf("%s is not pinned to its digest alone", src)
		}
	}
	docs, err := Documents(rewrite.Config{}, Options{Pins: pins})
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Spec struct {
			Variables []struct{ Name, Expression string }
		}
	}
	if err := docs[0].Decode(&policy); err != nil {
		t.Fatal(err)
	}
	if kind, n, err := LargestObject(docs); err != nil || kind != "MutatingAdmissionPolicy" || n <= ClientSideApplyLimit {
		t.Errorf("LargestObject: %s, %d, %v", kind, n, err)
	}
	if len(policy.Spec.Variables) < 4 {
		t.Errorf("%d variables for 3,000 pins, want them split", len(policy.Spec.Variables))
	}
	for _, v := range policy.Spec.Variables {
		if len(v.Expression) > maxPinExpression || !strings.HasPrefix(v.Name, "pins") {
			t.Errorf("variable %s: %d characters", v.Name, len(v.Expression))
		}
	}
	size := jsonSize(t, b.Bytes())
	if size > etcdLimit/3 {
		t.Errorf("3,000 pins: the policy is %d bytes, want it far below etcd's %d", size, etcdLimit)
	}
	t.Logf("3,000 pins: %d bytes as JSON (%d per pin)", size, size/3000)
	// docs/policy.md: 2,050 such pins fit client-side kubectl apply,
	// 12,700 etcd; 3,000 only the second.
	for _, tt := range []struct{ n, limit int }{{2050, annotationLimit}, {12700, etcdLimit}} {
		b.Reset()
		if err := Write(&b, rewrite.Config{}, Options{Pins: manyPins(t, tt.n), Validate: true}); err != nil {
			t.Fatal(err)
		}
		if size := jsonSize(t, b.Bytes()); size > tt.limit {
			t.Errorf("%d pins: %d bytes, over %d", tt.n, size, tt.limit)
		}
	}
	if size <= annotationLimit {
		t.Errorf("3,000 pins fit kubectl apply's annotation (%d bytes): docs/policy.md says they do not", size)
	}
}

// TestPinConflictRefused: a pin whose digest is not the one a source is
// written with is refused, naming both, as rehost rewrite refuses it.
func TestPinConflictRefused(t *testing.T) {
	d1, d7 := "sha256:"+strings.Repeat("01", 32), "sha256:"+strings.Repeat("07", 32)
	dst, _ := rewrite.ParseRef("sea.hub:5000/library/redis:7@" + d7)
	err := Write(&bytes.Buffer{}, rewrite.Config{}, Options{Pins: rewrite.Pins{"docker.io/library/redis:7@" + d1: dst}})
	var ue *UnsupportedError
	var pe *rewrite.PinConflictError
	if !errors.As(err, &ue) || ue.Feature != "pins" || !errors.As(err, &pe) || pe.Written != d1 || !strings.Contains(err.Error(), d1) || !strings.Contains(err.Error(), d7) {
		t.Errorf("error %v", err)
	}
}
