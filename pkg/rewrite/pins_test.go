package rewrite

import (
	"errors"
	"strings"
	"testing"
)

func TestPins(t *testing.T) {
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pins, err := ParsePins(strings.NewReader("# from rehost mirror --pin\n"+
		"docker.io/library/nginx:1.25\tsea.hub:5000/library/nginx:1.25@"+d+"\n\n"+
		"quay.io/a/b:1\tsea.hub:5000/other/b:1@"+d+"\n"), "pins")
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := NewMapper(Config{})
	m := orig.WithPins(pins)
	for _, in := range []string{"nginx:1.25", "docker.io/library/nginx:1.25"} {
		got, err := m.Map(in)
		if err != nil || got.Target.String() != "sea.hub:5000/library/nginx:1.25@"+d {
			t.Errorf("Map(%s) = %v, %v", in, got.Target, err)
		}
	}
	if got, _ := m.Map("nginx:1.26"); got.Target.String() != "sea.hub:5000/library/nginx:1.26" {
		t.Errorf("unpinned image: %v", got.Target)
	}
	if again, _ := m.Map("sea.hub:5000/library/nginx:1.25@" + d); again.Action != InTarget {
		t.Errorf("pinned target is not left alone: %v", again.Action)
	}
	if _, err := m.Map("quay.io/a/b:1"); err == nil || !strings.Contains(err.Error(), "same registry and path style") {
		t.Errorf("mismatched pin: %v", err)
	}
	if got, _ := orig.Map("nginx:1.25"); got.Target.Digest != "" {
		t.Error("WithPins changed the original mapper")
	}

	_, err = ParsePins(strings.NewReader("nginx sea.hub:5000/library/nginx\nnginx\tsea.hub:5000/library/nginx:1\n"), "pins")
	if err == nil || !strings.Contains(err.Error(), "pins:1: want SOURCE<TAB>TARGET") || !strings.Contains(err.Error(), "pins:2: target sea.hub:5000/library/nginx:1 has no digest") {
		t.Errorf("bad lines: %v", err)
	}
}

// TestPinConflict (issue 29, item 9): a pin whose digest differs from the
// digest written in the reference is a *PinConflictError naming both; a
// pin with the written digest is no change.
func TestPinConflict(t *testing.T) {
	d1 := "sha256:" + strings.Repeat("01", 32)
	d7 := "sha256:" + strings.Repeat("07", 32)
	pins, err := ParsePins(strings.NewReader("docker.io/library/redis:7@"+d1+"\tsea.hub:5000/library/redis:7@"+d7+"\n"+
		"docker.io/library/nginx@"+d1+"\tsea.hub:5000/library/nginx@"+d1+"\n"), "pins")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewMapper(Config{})
	m = m.WithPins(pins)
	_, err = m.Map("redis:7@" + d1)
	var pe *PinConflictError
	if !errors.As(err, &pe) || pe.Written != d1 || pe.Pin != "sea.hub:5000/library/redis:7@"+d7 || pe.Source != "docker.io/library/redis:7@"+d1 {
		t.Fatalf("Map: %v, want a *PinConflictError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, d1) || !strings.Contains(msg, d7) {
		t.Errorf("message names not both digests: %s", msg)
	}
	if got, err := m.Map("nginx@" + d1); err != nil || got.Target.String() != "sea.hub:5000/library/nginx@"+d1 {
		t.Errorf("pin of the written digest: %v, %v", got.Target, err)
	}
	if got, err := m.Map("redis:7"); err != nil || got.Target.Digest != "" {
		t.Errorf("a pin of redis:7@digest applied to redis:7: %v, %v", got.Target, err)
	}
}

func TestUnpinned(t *testing.T) {
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pins, err := ParsePins(strings.NewReader("docker.io/library/nginx:1.25\tsea.hub:5000/library/nginx:1.25@"+d+"\n"), "pins")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewMapper(Config{Exclude: []string{"quay.io"}})
	m = m.WithPins(pins)
	var set ImageSet
	for _, in := range []string{"nginx:1.25", "nginx:1.26", "nginx:1.26", "redis@" + d, "quay.io/x/y:1", "sea.hub:5000/a/b:1"} {
		mp, err := m.Map(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := set.Add(Occurrence{Mapping: mp}); err != nil {
			t.Fatal(err)
		}
	}
	got := Unpinned(set.Images())
	if len(got) != 1 || got[0].Source != "docker.io/library/nginx:1.26" || got[0].Count != 2 {
		t.Errorf("Unpinned() = %+v, want only docker.io/library/nginx:1.26 (twice)", got)
	}
}
