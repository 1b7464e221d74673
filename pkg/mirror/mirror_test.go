package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

// fixture is a source registry holding two multi-platform indexes and a
// single-platform image, and an empty target registry.
type fixture struct {
	src, dst *testRegistry
	digests  map[string]string // source reference -> digest
	sources  []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{src: newTestRegistry(t), dst: newTestRegistry(t), digests: map[string]string{}}
	add := func(ref string, x interface{ RawManifest() ([]byte, error) }) {
		ref = f.src.host + "/" + ref
		f.digests[ref] = push(t, ref, x)
		f.sources = append(f.sources, ref)
	}
	add("team/app:1.0", randomIndex(t, 512, 2, "linux/amd64", "linux/arm64", "linux/arm/v7"))
	add("library/base:2", randomIndex(t, 512, 3, "linux/amd64", "windows/amd64"))
	add("tools/single:0.1", randomImage(t, 512, 2))
	f.src.resetLog()
	return f
}

// jobs maps the fixture's sources to the target registry the way the CLI
// does: through a manifest.Rewriter fed with an image list.
func (f *fixture) jobs(t *testing.T, c rewrite.Config, extra ...string) []Job {
	t.Helper()
	if c.Registry == "" {
		c.Registry = f.dst.host
	}
	rw, err := manifest.New(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range append(append([]string{}, f.sources...), extra...) {
		if err := rw.Add(s, rewrite.Location{File: "images.txt", Line: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	return Jobs(rw.Images())
}

func TestCopy(t *testing.T) {
	f := newFixture(t)
	ev := &events{}
	m := newMirror(t, Options{Reporter: ev})
	jobs := f.jobs(t, rewrite.Config{})
	if len(jobs) != 3 {
		t.Fatalf("jobs = %v, want 3", jobs)
	}
	s := m.Copy(context.Background(), jobs)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Copied != 3 || s.Skipped != 0 || s.Failed != 0 {
		t.Errorf("summary: %d copied, %d skipped, %d failed; want 3, 0, 0", s.Copied, s.Skipped, s.Failed)
	}
	if s.Bytes <= 0 || s.Bytes != ev.bytes {
		t.Errorf("bytes: summary %d, reported %d; want equal and positive", s.Bytes, ev.bytes)
	}
	// A fresh copy reads each source manifest once, and needs no HEAD of
	// the source: the target's HEAD says it lacks the image.
	if n := f.src.count(http.MethodHead, `/manifests/`); n != 0 {
		t.Errorf("%d HEAD requests for source manifests, want 0", n)
	}
	if n := f.src.count(http.MethodGet, `/manifests/(1\.0|2|0\.1)$`); n != 3 {
		t.Errorf("%d GET requests for the source tags, want 3", n)
	}
	if ev.begin != 3 || len(ev.started) != 3 || len(ev.done) != 3 || ev.end == nil {
		t.Errorf("reporter: begin %d, %d started, %d done, end %v", ev.begin, len(ev.started), len(ev.done), ev.end != nil)
	}
	for _, r := range s.Results {
		want := f.digests[r.Source]
		if r.Digest != want {
			t.Errorf("%s: result digest %s, want %s", r.Source, r.Digest, want)
		}
		// Same digest in the target, by tag and by digest, and the same
		// manifest bytes: the index is preserved, not re-encoded.
		if got := head(t, r.Target); got != want {
			t.Errorf("%s: target %s has digest %q, want %s", r.Source, r.Target, got, want)
		}
		repo := r.Target[:strings.LastIndex(r.Target, ":")]
		if got := head(t, repo+"@"+want); got != want {
			t.Errorf("%s: target by digest: %q", r.Source, got)
		}
		if got, want := string(rawManifest(t, r.Target)), string(rawManifest(t, r.Source)); got != want {
			t.Errorf("%s: target manifest differs from the source:\n%s\nwant:\n%s", r.Source, got, want)
		}
		if r.Pinned() != r.Target+"@"+want {
			t.Errorf("Pinned() = %q, want %q", r.Pinned(), r.Target+"@"+want)
		}
	}
	// Every platform of the indexes is there.
	for _, r := range s.Results {
		if strings.Contains(r.Source, "single") {
			continue
		}
		n := strings.Count(string(rawManifest(t, r.Target)), `"platform"`)
		if want := map[bool]int{true: 3, false: 2}[strings.Contains(r.Source, "team/app")]; n != want {
			t.Errorf("%s: %d platforms in the target index, want %d", r.Source, n, want)
		}
	}
	// Every child manifest of the indexes resolves in the target.
	children := 0
	for _, r := range s.Results {
		for _, child := range childDigests(t, r.Source) {
			children++
			repo := r.Target[:strings.LastIndex(r.Target, ":")]
			if got := head(t, repo+"@"+child); got != child {
				t.Errorf("%s: child %s missing in the target", r.Source, child)
			}
		}
	}
	if children != 5 {
		t.Errorf("%d child manifests checked, want 5", children)
	}
}

// childDigests lists the manifests of an index ("" for an image).
func childDigests(t *testing.T, ref string) []string {
	t.Helper()
	raw := string(rawManifest(t, ref))
	if !strings.Contains(raw, `"manifests"`) {
		return nil
	}
	var out []string
	for _, m := range regexp.MustCompile(`"digest":"(sha256:[0-9a-f]{64})"`).FindAllStringSubmatch(raw, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestCopySkipsOnRerun(t *testing.T) {
	f := newFixture(t)
	jobs := f.jobs(t, rewrite.Config{})
	if s := newMirror(t, Options{}).Copy(context.Background(), jobs); s.Err() != nil || s.Copied != 3 {
		t.Fatalf("first run: %d copied, err %v", s.Copied, s.Err())
	}
	f.src.resetLog()
	f.dst.resetLog()
	// A new Mirror: nothing is remembered in memory, the registries say
	// what is there. Images only: TestAttachmentsRerun counts the
	// requests that looking for attachments adds.
	s := newMirror(t, Options{Attachments: AttachmentsNone}).Copy(context.Background(), jobs)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Skipped != 3 || s.Copied != 0 || s.Bytes != 0 {
		t.Errorf("re-run: %d copied, %d skipped, %d bytes; want 0, 3, 0", s.Copied, s.Skipped, s.Bytes)
	}
	for _, r := range s.Results {
		if r.Digest != f.digests[r.Source] {
			t.Errorf("%s: skipped with digest %s, want %s", r.Source, r.Digest, f.digests[r.Source])
		}
	}
	// Only HEAD requests: no manifest or blob read from the source, nothing
	// written to the target.
	for name, reg := range map[string]*testRegistry{"source": f.src, "target": f.dst} {
		for m, n := range reg.methods() {
			if m != http.MethodHead {
				t.Errorf("re-run: %d %s requests to the %s registry, want HEAD only", n, m, name)
			}
		}
	}
	if n := f.src.count(http.MethodHead, `/manifests/`); n != 3 {
		t.Errorf("re-run: %d HEAD manifest requests to the source, want 3", n)
	}
}

func TestCopyReplacesMovedTag(t *testing.T) {
	f := newFixture(t)
	jobs := f.jobs(t, rewrite.Config{})
	newMirror(t, Options{}).Copy(context.Background(), jobs)
	// The source tag moves: the next run copies the new image over the old.
	moved := f.src.host + "/team/app:1.0"
	want := push(t, moved, randomIndex(t, 256, 1, "linux/amd64"))
	s := newMirror(t, Options{}).Copy(context.Background(), jobs)
	if s.Err() != nil || s.Copied != 1 || s.Skipped != 2 {
		t.Fatalf("%d copied, %d skipped, err %v; want 1, 2", s.Copied, s.Skipped, s.Err())
	}
	if got := head(t, f.dst.host+"/team/app:1.0"); got != want {
		t.Errorf("target digest %s, want the moved tag's %s", got, want)
	}
}

func TestCopyExclusions(t *testing.T) {
	f := newFixture(t)
	inTarget := f.dst.host + "/already/there:1"
	jobs := f.jobs(t, rewrite.Config{Exclude: []string{f.src.host + "/team"}}, inTarget)
	for _, j := range jobs {
		if strings.Contains(j.Source, "/team/") || j.Source == inTarget {
			t.Errorf("job for %s: excluded and in-target images must not be copied", j.Source)
		}
	}
	s := newMirror(t, Options{}).Copy(context.Background(), jobs)
	if s.Err() != nil || s.Copied != 2 {
		t.Fatalf("%d copied, err %v; want 2", s.Copied, s.Err())
	}
	if got := head(t, f.dst.host+"/team/app:1.0"); got != "" {
		t.Errorf("excluded image copied: %s", got)
	}
	if n := f.src.count(http.MethodGet, `/team/`) + f.src.count(http.MethodHead, `/team/`); n != 0 {
		t.Errorf("%d requests for the excluded repository", n)
	}
}

func TestCopyPathStyleNest(t *testing.T) {
	f := newFixture(t)
	jobs := f.jobs(t, rewrite.Config{Registry: f.dst.host + "/mirror", PathStyle: rewrite.PathStyleNest})
	s := newMirror(t, Options{}).Copy(context.Background(), jobs)
	if s.Err() != nil || s.Copied != 3 {
		t.Fatalf("%d copied, err %v", s.Copied, s.Err())
	}
	nested := strings.ReplaceAll(f.src.host, ":", "_")
	want := f.digests[f.src.host+"/team/app:1.0"]
	if got := head(t, f.dst.host+"/mirror/"+nested+"/team/app:1.0"); got != want {
		t.Errorf("nested target digest %q, want %s", got, want)
	}
}

func TestCopyFailureReported(t *testing.T) {
	f := newFixture(t)
	// One image is missing, one repository always fails: both are reported,
	// the others are copied.
	broken := f.src.host + "/broken/repo:1"
	missing := f.src.host + "/team/app:404"
	f.src.setInject(func(r *http.Request) int {
		if strings.Contains(r.URL.Path, "/broken/") {
			return http.StatusInternalServerError
		}
		return 0
	})
	ev := &events{}
	s := newMirror(t, Options{Reporter: ev}).Copy(context.Background(), f.jobs(t, rewrite.Config{}, broken, missing))
	if s.Copied != 3 || s.Failed != 2 {
		t.Fatalf("%d copied, %d failed; want 3, 2", s.Copied, s.Failed)
	}
	err := s.Err()
	var ie *ImageError
	if !errors.As(err, &ie) {
		t.Fatalf("Err() = %v, want *ImageError values", err)
	}
	for _, want := range []string{broken + " -> " + f.dst.host + "/broken/repo:1", missing, "MANIFEST_UNKNOWN", "500"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	var te *transport.Error
	if !errors.As(err, &te) {
		t.Errorf("the registry error is not kept: %v", err)
	}
	// Retried with backoff: the broken repository saw more than one
	// request per attempt.
	if n := f.src.count(http.MethodGet, `/broken/`); n < fastBackoff.Steps {
		t.Errorf("%d GET requests to the failing repository, want at least %d (retries)", n, fastBackoff.Steps)
	}
	failed := 0
	for _, r := range ev.done {
		if r.Status == Failed {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("reporter saw %d failures, want 2", failed)
	}
}

func TestCopyRetries(t *testing.T) {
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusBadGateway} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			f := newFixture(t)
			// Every kind of request fails the first time it is made: HEAD
			// and GET of manifests and blobs, POST, PATCH and PUT of uploads,
			// PUT of manifests.
			inject := func() func(*http.Request) int {
				var mu sync.Mutex
				seen := map[string]bool{}
				upload := regexp.MustCompile(`/blobs/uploads/.*`)
				return func(r *http.Request) int {
					if r.URL.Path == "/v2/" {
						return 0
					}
					key := r.Method + " " + upload.ReplaceAllString(r.URL.Path, "/blobs/uploads/*")
					mu.Lock()
					defer mu.Unlock()
					if seen[key] {
						return 0
					}
					seen[key] = true
					return code
				}
			}
			f.src.setInject(inject())
			f.dst.setInject(inject())
			s := newMirror(t, Options{}).Copy(context.Background(), f.jobs(t, rewrite.Config{}))
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if s.Copied != 3 {
				t.Fatalf("%d copied, want 3", s.Copied)
			}
			for _, r := range s.Results {
				if got := head(t, r.Target); got != f.digests[r.Source] {
					t.Errorf("%s: target digest %q, want %s", r.Source, got, f.digests[r.Source])
				}
			}
			if f.src.injected == 0 || f.dst.injected < 5 {
				t.Errorf("injected %d source and %d target failures: the test did not exercise retries", f.src.injected, f.dst.injected)
			}
		})
	}
}

func TestDryRun(t *testing.T) {
	f := newFixture(t)
	ev := &events{}
	// Without attachments, a dry run makes no request at all;
	// TestAttachmentsDryRun lists them.
	s := newMirror(t, Options{DryRun: true, Attachments: AttachmentsNone, Reporter: ev}).Copy(context.Background(), f.jobs(t, rewrite.Config{}))
	if s.Err() != nil || s.Planned != 3 || s.Copied != 0 {
		t.Fatalf("%d planned, %d copied, err %v", s.Planned, s.Copied, s.Err())
	}
	for _, r := range s.Results {
		if r.Digest != "" {
			t.Errorf("%s: a dry run without Pin resolved a digest", r.Source)
		}
		if !strings.HasPrefix(r.Target, f.dst.host+"/") {
			t.Errorf("%s: planned target %s", r.Source, r.Target)
		}
	}
	if n := len(f.src.reqs) + len(f.dst.reqs); n != 0 {
		t.Errorf("a dry run made %d requests: %v %v", n, f.src.reqs, f.dst.reqs)
	}
}

func TestPinUsesHeadOnly(t *testing.T) {
	f := newFixture(t)
	pinnedSrc := f.src.host + "/team/app@" + f.digests[f.src.host+"/team/app:1.0"]
	s := newMirror(t, Options{DryRun: true, Pin: true}).Copy(context.Background(), f.jobs(t, rewrite.Config{}, pinnedSrc))
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 4 {
		t.Fatalf("%d results, want 4", len(s.Results))
	}
	for _, r := range s.Results {
		want := f.digests[r.Source]
		if r.Source == pinnedSrc {
			want = f.digests[f.src.host+"/team/app:1.0"]
		}
		if r.Digest != want {
			t.Errorf("%s: pinned %s, want %s", r.Source, r.Digest, want)
		}
		if p := r.Pinned(); !strings.HasPrefix(p, f.dst.host+"/") || !strings.HasSuffix(p, "@"+want) {
			t.Errorf("%s: Pinned() = %q", r.Source, p)
		}
	}
	if got := s.Results[0].Pinned(); !strings.Contains(got, ":2@sha256:") {
		t.Errorf("the tag is kept in a pinned reference: %q", got)
	}
	if n := f.src.count(http.MethodGet, `/manifests/`); n != 0 {
		t.Errorf("%d GET requests for manifests: pinning must use HEAD only", n)
	}
	// The digest-pinned source needs no request at all; the three tags one HEAD each.
	if n := f.src.count(http.MethodHead, `/manifests/`); n != 3 {
		t.Errorf("%d HEAD requests for manifests, want 3", n)
	}
	if m := f.src.methods(); len(m) != 1 {
		t.Errorf("request methods %v, want HEAD only", m)
	}
	if len(f.dst.reqs) != 0 {
		t.Errorf("pinning in a dry run touched the target: %v", f.dst.reqs)
	}
}

func TestPlatformFilter(t *testing.T) {
	f := newFixture(t)
	amd64, _ := v1.ParsePlatform("linux/amd64")
	ev := &events{}
	s := newMirror(t, Options{Platforms: []v1.Platform{*amd64}, Reporter: ev}).Copy(context.Background(), f.jobs(t, rewrite.Config{}))
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	app := f.src.host + "/team/app:1.0"
	for _, r := range s.Results {
		im := string(rawManifest(t, r.Target))
		switch {
		case r.Source == app:
			if n := strings.Count(im, `"platform"`); n != 1 || !strings.Contains(im, `"architecture":"amd64"`) {
				t.Errorf("narrowed index has %d platforms:\n%s", n, im)
			}
			if r.Digest == f.digests[app] || head(t, r.Target) != r.Digest {
				t.Errorf("narrowed index digest: result %s, target %s, source %s", r.Digest, head(t, r.Target), f.digests[app])
			}
		case strings.Contains(r.Source, "single"):
			if r.Digest != f.digests[r.Source] {
				t.Errorf("an image (not an index) is copied as it is: %s", r.Digest)
			}
		}
	}
	if len(ev.warnings) != 2 || !strings.Contains(ev.warnings[0]+ev.warnings[1], "digest changes") {
		t.Errorf("warnings %q, want one per narrowed index saying the digest changes", ev.warnings)
	}
	// Re-run: the narrowed index is recognised and skipped.
	if s := newMirror(t, Options{Platforms: []v1.Platform{*amd64}}).Copy(context.Background(), f.jobs(t, rewrite.Config{})); s.Skipped != 3 {
		t.Errorf("re-run with the same platforms: %d skipped, want 3", s.Skipped)
	}

	// A target pinned by digest cannot take a narrowed index.
	pinned := f.src.host + "/team/app@" + f.digests[app]
	s = newMirror(t, Options{Platforms: []v1.Platform{*amd64}}).Copy(context.Background(), f.jobs(t, rewrite.Config{}, pinned))
	var pe *PinnedNarrowError
	if s.Failed != 1 || !errors.As(s.Err(), &pe) || pe.Pinned != f.digests[app] || pe.Kept != 1 || pe.Total != 3 || !strings.HasPrefix(pe.Digest, "sha256:") {
		t.Errorf("pinned target with Platforms: %d failed, err %v (%+v)", s.Failed, s.Err(), pe)
	}
	// A platform no manifest has.
	s390x, _ := v1.ParsePlatform("linux/s390x")
	s = newMirror(t, Options{Platforms: []v1.Platform{*s390x}}).Copy(context.Background(), f.jobs(t, rewrite.Config{}))
	if s.Failed != 2 || !strings.Contains(s.Err().Error(), "no manifest for platform linux/s390x") {
		t.Errorf("missing platform: %d failed, err %v", s.Failed, s.Err())
	}
}

func TestMountAcrossRepositories(t *testing.T) {
	src := newTestRegistry(t)
	blobs := &perRepoBlobs{}
	dst := serveRegistry(t, blobs.mount(registry.New(registry.WithBlobHandler(blobs), registry.Logger(nopLogger()))))
	// Two images in two repositories share their only layer.
	base := randomImage(t, 64<<10, 1)
	layers, _ := base.Layers()
	shared, _ := layers[0].Digest()
	one := src.host + "/a/one:1"
	two := src.host + "/b/two:1"
	push(t, one, base)
	push(t, two, withConfig(t, base, "two"))
	jobs := []Job{{Source: one, Target: dst.host + "/a/one:1"}, {Source: two, Target: dst.host + "/b/two:1"}}
	s := newMirror(t, Options{Jobs: 1}).Copy(context.Background(), jobs)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	// The shared layer is uploaded to a/one, then mounted into b/two.
	if n := dst.count(http.MethodPost, `^/v2/b/two/blobs/uploads/\?from=a%2Fone&mount=`+url.QueryEscape(shared.String())); n != 1 {
		t.Errorf("%d mount requests for the shared layer, want 1\n%v", n, dst.reqs)
	}
	if n := dst.count(http.MethodPut, `^/v2/b/two/blobs/uploads/.*digest=`); n != 1 {
		t.Errorf("%d blob uploads into b/two, want 1 (the config; the layer is mounted)", n)
	}
	if s.Results[1].Bytes >= 64<<10 {
		t.Errorf("b/two transferred %d bytes: the shared layer was uploaded again", s.Results[1].Bytes)
	}
	if got, want := head(t, jobs[1].Target), head(t, two); got != want || got == "" {
		t.Errorf("mounted image digest %q, want %q", got, want)
	}
}

func TestInsecureAndCustomCA(t *testing.T) {
	src := newTestRegistry(t)
	tlsSrv := newTLSRegistry(t)
	ref := src.host + "/team/app:1"
	push(t, ref, randomImage(t, 256, 1))
	jobs := []Job{{Source: ref, Target: tlsSrv.host + "/team/app:1"}}

	if s := newMirror(t, Options{}).Copy(context.Background(), jobs); s.Failed != 1 || !strings.Contains(s.Err().Error(), "certificate") {
		t.Errorf("unverified TLS accepted without Insecure: %d failed, %v", s.Failed, s.Err())
	}
	if s := newMirror(t, Options{Insecure: []string{tlsSrv.host}}).Copy(context.Background(), jobs); s.Err() != nil || s.Copied != 1 {
		t.Errorf("Insecure: %d copied, %v", s.Copied, s.Err())
	}
	pool, err := RootCAs(tlsSrv.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	if s := newMirror(t, Options{RootCAs: pool}).Copy(context.Background(), jobs); s.Err() != nil || s.Skipped != 1 {
		t.Errorf("custom CA: %d skipped, %v", s.Skipped, s.Err())
	}
	if _, err := RootCAs([]byte("not a certificate")); err == nil {
		t.Error("RootCAs accepted a file without certificates")
	}
}

func TestJobs(t *testing.T) {
	imgs := []rewrite.Image{
		{Source: "docker.io/library/nginx:1.25", Target: "r/library/nginx:1.25", Action: rewrite.Rewritten},
		{Source: "quay.io/x/y:1", Target: "quay.io/x/y:1", Action: rewrite.Excluded},
		{Source: "r/z:1", Target: "r/z:1", Action: rewrite.InTarget},
	}
	got := Jobs(imgs)
	if len(got) != 1 || got[0] != (Job{Source: "docker.io/library/nginx:1.25", Target: "r/library/nginx:1.25"}) {
		t.Errorf("Jobs = %v", got)
	}
}

func TestNewValidates(t *testing.T) {
	amd64, _ := v1.ParsePlatform("linux/amd64")
	for _, o := range []Options{{Jobs: -1}, {DryRun: true, Pin: true, Platforms: []v1.Platform{*amd64}}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestCanceled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newMirror(t, Options{}).Copy(ctx, f.jobs(t, rewrite.Config{}))
	if s.Failed != 3 || !errors.Is(s.Err(), context.Canceled) {
		t.Errorf("canceled run: %d failed, %v", s.Failed, s.Err())
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.Canceled, false},
		{&transport.Error{StatusCode: 503}, true},
		{&transport.Error{StatusCode: 429}, true},
		{&transport.Error{StatusCode: 500}, true},
		{&transport.Error{StatusCode: 404}, false},
		{&transport.Error{StatusCode: 401}, false},
		{fmt.Errorf("dial: %w", errConnRefused), true},
		{errors.New("manifest invalid"), false},
	} {
		if got := retryable(c.err); got != c.want {
			t.Errorf("retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
