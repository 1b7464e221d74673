package mirror

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/rehost/rehost/pkg/rewrite"
)

func mapper(t *testing.T, c rewrite.Config) *rewrite.Mapper {
	t.Helper()
	m, err := rewrite.NewMapper(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func layoutIndex(t *testing.T, dir string) *v1.IndexManifest {
	t.Helper()
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func TestLayoutRoundTrip(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	jobs := f.jobs(t, rewrite.Config{Registry: "sea.hub:5000"})

	s, err := newMirror(t, Options{}).Export(context.Background(), jobs, dir)
	if err != nil || s.Err() != nil || s.Copied != 3 {
		t.Fatalf("export: %d copied, %v, %v", s.Copied, err, s.Err())
	}
	if s.Bytes <= 0 {
		t.Errorf("export counted %d bytes", s.Bytes)
	}
	// index.json: one descriptor per source, sorted, annotated with the
	// source and the target computed at export time.
	im := layoutIndex(t, dir)
	if len(im.Manifests) != 3 {
		t.Fatalf("index.json has %d manifests, want 3", len(im.Manifests))
	}
	var sources []string
	for _, d := range im.Manifests {
		src := d.Annotations[AnnotationSource]
		sources = append(sources, src)
		if d.Digest.String() != f.digests[src] {
			t.Errorf("%s: layout digest %s, want %s", src, d.Digest, f.digests[src])
		}
		if d.Annotations[AnnotationRefName] != src || d.Annotations[AnnotationContainerdName] != src {
			t.Errorf("%s: annotations %v", src, d.Annotations)
		}
		if !strings.HasPrefix(d.Annotations[AnnotationTarget], "sea.hub:5000/") {
			t.Errorf("%s: target annotation %q", src, d.Annotations[AnnotationTarget])
		}
		if d.Platform != nil {
			t.Errorf("%s: platform on an index.json descriptor", src)
		}
	}
	if !sort.StringsAreSorted(sources) {
		t.Errorf("index.json is not sorted by source: %v", sources)
	}

	// Re-export: everything is there. Images only: looking for
	// attachments adds listing requests (TestAttachmentsLayoutRoundTrip).
	f.src.resetLog()
	s, err = newMirror(t, Options{Attachments: AttachmentsNone}).Export(context.Background(), jobs, dir)
	if err != nil || s.Skipped != 3 || s.Bytes != 0 {
		t.Errorf("re-export: %d skipped, %d bytes, %v", s.Skipped, s.Bytes, err)
	}
	if n := f.src.count(http.MethodGet, `/(manifests|blobs)/`); n != 0 {
		t.Errorf("re-export made %d GET requests", n)
	}

	// Import into another registry, under a prefix: only the destination
	// changes; the digests are the source's.
	other := newTestRegistry(t)
	mp := mapper(t, rewrite.Config{Registry: other.host + "/offline"})
	s, err = newMirror(t, Options{}).Import(context.Background(), dir, mp)
	if err != nil || s.Err() != nil || s.Copied != 3 {
		t.Fatalf("import: %d copied, %v, %v", s.Copied, err, s.Err())
	}
	for _, r := range s.Results {
		if !strings.HasPrefix(r.Target, other.host+"/offline/") {
			t.Errorf("%s imported to %s", r.Source, r.Target)
		}
		if got, want := head(t, r.Target), f.digests[r.Source]; got != want {
			t.Errorf("%s: imported digest %q, want %s", r.Source, got, want)
		}
		if got, want := string(rawManifest(t, r.Target)), string(rawManifest(t, r.Source)); got != want {
			t.Errorf("%s: imported manifest differs", r.Source)
		}
		for _, child := range childDigests(t, r.Source) {
			repo := r.Target[:strings.LastIndex(r.Target, ":")]
			if head(t, repo+"@"+child) != child {
				t.Errorf("%s: child %s missing after import", r.Source, child)
			}
		}
	}
	// Re-import: skipped.
	s, err = newMirror(t, Options{}).Import(context.Background(), dir, mp)
	if err != nil || s.Skipped != 3 {
		t.Errorf("re-import: %d skipped, %v", s.Skipped, err)
	}
}

func TestLayoutReplacesMovedTag(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	jobs := f.jobs(t, rewrite.Config{})
	if _, err := newMirror(t, Options{}).Export(context.Background(), jobs, dir); err != nil {
		t.Fatal(err)
	}
	moved := f.src.host + "/team/app:1.0"
	want := push(t, moved, randomIndex(t, 128, 1, "linux/amd64"))
	s, err := newMirror(t, Options{}).Export(context.Background(), jobs, dir)
	if err != nil || s.Copied != 1 || s.Skipped != 2 {
		t.Fatalf("%d copied, %d skipped, %v", s.Copied, s.Skipped, err)
	}
	im := layoutIndex(t, dir)
	if len(im.Manifests) != 3 {
		t.Errorf("%d descriptors, want 3 (the moved tag replaced)", len(im.Manifests))
	}
	for _, d := range im.Manifests {
		if d.Annotations[AnnotationSource] == moved && d.Digest.String() != want {
			t.Errorf("moved tag recorded with %s, want %s", d.Digest, want)
		}
	}
}

func TestImportSkipsUnmappedAndUnnamed(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	if _, err := newMirror(t, Options{}).Export(context.Background(), f.jobs(t, rewrite.Config{}), dir); err != nil {
		t.Fatal(err)
	}
	// An image another tool added without a qualified name.
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(randomImage(t, 64, 1), layout.WithAnnotations(map[string]string{AnnotationRefName: "1.0"})); err != nil {
		t.Fatal(err)
	}
	other := newTestRegistry(t)
	ev := &events{}
	mp := mapper(t, rewrite.Config{Registry: other.host, Exclude: []string{f.src.host + "/team"}})
	s, err := newMirror(t, Options{Reporter: ev}).Import(context.Background(), dir, mp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Copied != 2 || s.Failed != 1 {
		t.Errorf("%d copied, %d failed; want 2, 1", s.Copied, s.Failed)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "no source reference recorded") {
		t.Errorf("Err() = %v", err)
	}
	if len(ev.warnings) != 1 || !strings.Contains(ev.warnings[0], "/team/app:1.0: not pushed") {
		t.Errorf("warnings %q, want one for the excluded image", ev.warnings)
	}
	if head(t, other.host+"/team/app:1.0") != "" {
		t.Error("the excluded image was pushed")
	}
}

func TestImportNotALayout(t *testing.T) {
	if _, err := newMirror(t, Options{}).Import(context.Background(), t.TempDir(), mapper(t, rewrite.Config{})); err == nil {
		t.Error("Import of an empty directory succeeded")
	}
}

func TestExportDryRunWritesNothing(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	s, err := newMirror(t, Options{DryRun: true}).Export(context.Background(), f.jobs(t, rewrite.Config{}), dir)
	if err != nil || s.Planned != 3 {
		t.Fatalf("%d planned, %v", s.Planned, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a dry run created the layout: %v", err)
	}
	if s.Results[0].Destination != "oci:"+dir {
		t.Errorf("destination %q", s.Results[0].Destination)
	}
}

func TestLayoutSource(t *testing.T) {
	for _, c := range []struct {
		ann  map[string]string
		want string
	}{
		{map[string]string{AnnotationSource: "docker.io/library/nginx:1.25", AnnotationRefName: "x"}, "docker.io/library/nginx:1.25"},
		{map[string]string{AnnotationContainerdName: "quay.io/a/b:1"}, "quay.io/a/b:1"},
		{map[string]string{AnnotationRefName: "registry.k8s.io/pause:3.9"}, "registry.k8s.io/pause:3.9"},
		{map[string]string{AnnotationRefName: "1.25"}, ""},
		{map[string]string{AnnotationRefName: "nginx:1.25"}, ""},
		{nil, ""},
	} {
		if got := layoutSource(v1.Descriptor{Annotations: c.ann}); got != c.want {
			t.Errorf("layoutSource(%v) = %q, want %q", c.ann, got, c.want)
		}
	}
}
