package mirror

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// testRegistry is go-containerregistry's in-memory registry behind an
// httptest server on 127.0.0.1, with a log of the requests it served and
// an optional fault injector.
type testRegistry struct {
	host string
	srv  *httptest.Server

	// delay is added to every request, as the round trip to a remote
	// registry would.
	delay time.Duration

	mu       sync.Mutex
	reqs     []string // "METHOD /path?query"
	inject   func(r *http.Request) int
	injected int
}

func newTestRegistry(t testing.TB, opts ...registry.Option) *testRegistry {
	t.Helper()
	opts = append([]registry.Option{registry.Logger(log.New(io.Discard, "", 0))}, opts...)
	return serveRegistry(t, registry.New(opts...))
}

func serveRegistry(t testing.TB, h http.Handler) *testRegistry {
	r := &testRegistry{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Method+" "+req.URL.RequestURI())
		code := 0
		if r.inject != nil {
			code = r.inject(req)
		}
		if code != 0 {
			r.injected++
		}
		r.mu.Unlock()
		time.Sleep(r.delay)
		if code != 0 {
			io.Copy(io.Discard, req.Body)
			http.Error(w, http.StatusText(code), code)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	u, _ := url.Parse(r.srv.URL)
	r.host = u.Host
	return r
}

// count is how many requests with this method had a path matching re.
func (r *testRegistry) count(method, re string) int {
	rx := regexp.MustCompile(re)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.reqs {
		m, p, _ := strings.Cut(q, " ")
		if m == method && rx.MatchString(p) {
			n++
		}
	}
	return n
}

func (r *testRegistry) methods() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, q := range r.reqs {
		m, p, _ := strings.Cut(q, " ")
		if p != "/v2/" {
			out[m]++
		}
	}
	return out
}

func (r *testRegistry) resetLog() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

func (r *testRegistry) setInject(f func(*http.Request) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inject = f
}

// randomIndex is a multi-platform index of random images: one per
// platform, layers layers of size bytes each.
func randomIndex(t testing.TB, size, layers int64, platforms ...string) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		img, err := random.Image(size, layers)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
	}
	return mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)
}

func randomImage(t testing.TB, size, layers int64) v1.Image {
	t.Helper()
	img, err := random.Image(size, layers)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// push writes an image or index to ref and returns its digest.
func push(t testing.TB, ref string, x remote.Taggable) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Push(r, x); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := x.(interface{ Digest() (v1.Hash, error) }).Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// head returns the digest of ref, or "" when it does not resolve.
func head(t testing.TB, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		return ""
	}
	return d.Digest.String()
}

// rawManifest returns the manifest bytes of ref.
func rawManifest(t testing.TB, ref string) []byte {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Get(r)
	if err != nil {
		t.Fatalf("get %s: %v", ref, err)
	}
	return d.Manifest
}

// fastBackoff keeps retry tests quick.
var fastBackoff = remote.Backoff{Duration: time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 5}

// anonymous is a keychain with no credentials, so that tests never read
// the Docker config of the machine.
var anonymous = authn.NewMultiKeychain()

func newMirror(t testing.TB, o Options) *Mirror {
	t.Helper()
	if o.Backoff.Steps == 0 {
		o.Backoff = fastBackoff
	}
	if o.Keychain == nil {
		o.Keychain = anonymous
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// events records what a Reporter is told.
type events struct {
	begin    int
	started  []string
	done     []Result
	warnings []string
	bytes    int64
	end      *Summary
}

func (e *events) Begin(n int)            { e.begin = n }
func (e *events) Start(j Job)            { e.started = append(e.started, j.Source) }
func (e *events) Transferred(n int64)    { e.bytes += n }
func (e *events) Warn(j Job, msg string) { e.warnings = append(e.warnings, j.Source+": "+msg) }
func (e *events) Done(r Result)          { e.done = append(e.done, r) }
func (e *events) End(s Summary)          { e.end = &s }

// perRepoBlobs is a blob store that keeps blobs per repository, as real
// registries link them, so that a blob pushed to one repository is not
// visible in another until it is uploaded or mounted there.
type perRepoBlobs struct {
	mu sync.Mutex
	m  map[string][]byte // repo@digest
}

// key names a blob of a repository. The in-memory registry passes
// "<repo>/blobs" as the repository of an upload.
func (b *perRepoBlobs) key(repo string, h v1.Hash) string {
	return strings.TrimSuffix(repo, "/blobs") + "@" + h.String()
}

func (b *perRepoBlobs) Get(_ context.Context, repo string, h v1.Hash) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.m[b.key(repo, h)]
	if !ok {
		return nil, registry.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (b *perRepoBlobs) Stat(_ context.Context, repo string, h v1.Hash) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.m[b.key(repo, h)]
	if !ok {
		return 0, registry.ErrNotFound
	}
	return int64(len(data)), nil
}

func (b *perRepoBlobs) Put(_ context.Context, repo string, h v1.Hash, rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string][]byte{}
	}
	b.m[b.key(repo, h)] = data
	return nil
}

// mount implements the cross-repository mount of the distribution spec
// (POST /v2/<repo>/blobs/uploads/?mount=<digest>&from=<repo>) on top of
// the in-memory registry, which does not: 201 when the blob is in the
// source repository, otherwise the usual upload.
func (b *perRepoBlobs) mount(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method == http.MethodPost && q.Get("mount") != "" && q.Get("from") != "" {
			repo := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v2/"), "/blobs/uploads/")
			h, err := v1.NewHash(q.Get("mount"))
			if err == nil {
				b.mu.Lock()
				data, ok := b.m[b.key(q.Get("from"), h)]
				if ok {
					b.m[b.key(repo, h)] = data
				}
				b.mu.Unlock()
				if ok {
					w.Header().Set("Location", "/v2/"+repo+"/blobs/"+h.String())
					w.Header().Set("Docker-Content-Digest", h.String())
					w.WriteHeader(http.StatusCreated)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// textReport is a Reporter that writes what a front end writes, the way
// the package documents it: untrusted fields quoted (Quote), messages
// and errors as given (the package scrubs them), one line per event. The
// hostile tests check that nothing raw reaches a report this way, and
// that no credential does.
type textReport struct{ w io.Writer }

func (r textReport) Begin(int)         {}
func (r textReport) Start(Job)         {}
func (r textReport) Transferred(int64) {}
func (r textReport) Warn(j Job, msg string) {
	fmt.Fprintf(r.w, "warning: %s: %s\n", Quote(j.Source), msg)
}
func (r textReport) Notice(n Notice) { fmt.Fprintf(r.w, "notice: %s\n", n.Msg) }
func (r textReport) Done(res Result) {
	where := Quote(res.Source) + " -> " + Quote(res.Destination)
	if res.Via != "" {
		where += " via " + Quote(res.Via)
	}
	if res.Err != nil {
		fmt.Fprintf(r.w, "%-7s %s: %v\n", res.Status, where, res.Err)
	} else {
		fmt.Fprintf(r.w, "%-7s %s (%s)\n", res.Status, where, res.Digest)
	}
	for _, a := range res.Attachments {
		fmt.Fprintf(r.w, "  %-7s %s %s -> %s: %v\n", a.Status, Quote(string(a.Kind)), Quote(a.Source), Quote(a.Destination), a.Err)
	}
}
func (r textReport) End(s Summary) {
	fmt.Fprintf(r.w, "%d copied, %d skipped, %d failed\n", s.Copied, s.Skipped, s.Failed)
}
