package rewrite

import (
	"errors"
	"strings"
	"testing"
)

func TestImageSetFirstOnly(t *testing.T) {
	m, _ := NewMapper(Config{})
	for _, firstOnly := range []bool{false, true} {
		s := ImageSet{FirstOnly: firstOnly}
		for line := 1; line <= 3; line++ {
			mp, _ := m.Map("nginx:1.25")
			if err := s.Add(Occurrence{Mapping: mp, Location: Location{File: "a.yaml", Line: line}}); err != nil {
				t.Fatal(err)
			}
		}
		img := s.Images()[0]
		want := 3
		if firstOnly {
			want = 1
		}
		if img.Count != 3 || len(img.Occurrences) != want || img.Occurrences[0].Line != 1 {
			t.Errorf("FirstOnly=%v: count %d, %d occurrences, first at line %d", firstOnly, img.Count, len(img.Occurrences), img.Occurrences[0].Line)
		}
	}
}

func TestImageSetNoCollisions(t *testing.T) {
	m, _ := NewMapper(Config{})
	for _, noCollisions := range []bool{false, true} {
		s := ImageSet{NoCollisions: noCollisions}
		var err error
		for _, img := range []string{"docker.io/team/app:1", "quay.io/team/app:1"} {
			mp, _ := m.Map(img)
			err = s.Add(Occurrence{Mapping: mp})
		}
		if (err == nil) != noCollisions || (noCollisions && s.Len() != 2) {
			t.Errorf("NoCollisions=%v: err %v, %d images", noCollisions, err, s.Len())
		}
	}
}

// TestSourcesAndToCache: Sources lists every image found; ToCache only
// those that move to the target registry.
func TestSourcesAndToCache(t *testing.T) {
	m, err := NewMapper(Config{Exclude: []string{"quay.io"}})
	if err != nil {
		t.Fatal(err)
	}
	var s ImageSet
	for _, img := range []string{"nginx:1.25", "quay.io/x/y:1", "sea.hub:5000/library/busybox:1", "redis"} {
		mp, err := m.Map(img)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(Occurrence{Mapping: mp}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		got  []string
		want string
	}{
		{"Sources", s.Sources(), "docker.io/library/nginx:1.25 docker.io/library/redis:latest quay.io/x/y:1 sea.hub:5000/library/busybox:1"},
		{"ToCache", s.ToCache(), "docker.io/library/nginx:1.25 docker.io/library/redis:latest"},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.got, " "); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestImageSetRecord: Record records what Add refuses as a collision.
func TestImageSetRecord(t *testing.T) {
	m, _ := NewMapper(Config{})
	var s ImageSet
	for i, img := range []string{"docker.io/team/app:1", "quay.io/team/app:1", "quay.io/team/app:1"} {
		mp, _ := m.Map(img)
		o := Occurrence{Mapping: mp, Location: Location{File: "a.yaml", Line: i + 1}}
		if err := s.Add(o); err != nil {
			var ce *CollisionError
			if !errors.As(err, &ce) {
				t.Fatal(err)
			}
			s.Record(o)
		}
	}
	imgs := s.Images()
	if len(imgs) != 2 || imgs[1].Source != "quay.io/team/app:1" || imgs[1].Count != 2 || len(imgs[1].Occurrences) != 2 || imgs[1].Occurrences[1].Line != 3 {
		t.Errorf("images %+v", imgs)
	}
}

// TestImageSetAddAgain: an image added again with the same mapping costs
// no allocation (FirstOnly), and one added with another mapping is
// checked as a new one.
func TestImageSetAddAgain(t *testing.T) {
	m, _ := NewMapper(Config{})
	s := ImageSet{FirstOnly: true}
	mp, _ := m.Map("docker.io/team/app:1")
	o := Occurrence{Mapping: mp, Location: Location{File: "a.yaml", Line: 1}}
	if err := s.Add(o); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = s.Add(o) }); n != 0 {
		t.Errorf("adding an image again allocates %v times", n)
	}
	// The same source, mapped by another mapper onto a repository that
	// quay.io/team/app owns: a collision, found although the source is
	// known.
	q, _ := m.Map("quay.io/team/app:1")
	other, _ := NewMapper(Config{Registry: "sea.hub:5000"})
	if err := s.Add(Occurrence{Mapping: q}); err == nil {
		t.Fatal("no collision between docker.io/team/app and quay.io/team/app")
	}
	moved, _ := other.Map("docker.io/team/app:1")
	moved.Target.Repository = "elsewhere/app"
	if err := s.Add(Occurrence{Mapping: moved}); err != nil {
		t.Fatalf("another target for a known source: %v", err)
	}
	// 1 + 101 (AllocsPerRun runs once more to warm up) + 1.
	if s.Len() != 1 || s.Images()[0].Count != 103 {
		t.Errorf("%d images, count %d", s.Len(), s.Images()[0].Count)
	}
}

func TestIsQualified(t *testing.T) {
	for _, ref := range []string{"nginx", "nginx:1.25", "quay.io/x/y@sha256:" + strings.Repeat("a", 64), "localhost:5000/x:1@sha256:" + strings.Repeat("b", 64)} {
		r, err := ParseRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		q := r.Qualified()
		if !r.isQualified(q) {
			t.Errorf("%s: isQualified(%q) is false", ref, q)
		}
		for _, other := range []string{q + "x", q[:len(q)-1], "x" + q, strings.Replace(q, "/", ":", 1), strings.TrimSuffix(q, ":latest"), q + ":latest"} {
			if other != q && r.isQualified(other) {
				t.Errorf("%s: isQualified(%q) is true", ref, other)
			}
		}
	}
}
