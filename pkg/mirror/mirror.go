package mirror

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/rehost/rehost/pkg/rewrite"
)

// DefaultJobs is how many images are copied at once by default.
const DefaultJobs = 4

// defaultBackoff is the retry schedule by default: up to three attempts,
// one second apart then three.
var defaultBackoff = remote.Backoff{Duration: time.Second, Factor: 3, Jitter: 0.1, Steps: 3}

// Options configure a Mirror. The zero value is ready to use.
type Options struct {
	// Jobs is how many images are copied at once; 0 means DefaultJobs.
	// Each image also copies up to four blobs at once.
	Jobs int
	// Platforms narrows multi-platform indexes to the manifests of these
	// platforms ("linux/amd64"). A narrowed index is a new index with a new
	// digest: the Reporter is warned, and a job whose target is pinned by
	// digest fails. Empty means every platform: faithful copies.
	Platforms []v1.Platform
	// DryRun reports what would be copied where and copies nothing. It
	// makes no request at all, unless Pin is set.
	DryRun bool
	// Pin resolves every source to its digest with a HEAD request (never a
	// GET, which registries count against rate limits) so that
	// Result.Pinned is known. A copy resolves digests anyway; Pin matters
	// for a dry run.
	Pin bool
	// Insecure lists registry hosts ("host[:port]") that may be reached over
	// plain HTTP or over TLS without certificate verification.
	// go-containerregistry already falls back to plain HTTP for localhost,
	// loopback and private (RFC 1918) addresses.
	Insecure []string
	// RootCAs are the certificate authorities trusted for TLS; nil means the
	// system pool. See RootCAs.
	RootCAs *x509.CertPool
	// Keychain provides registry credentials; nil means
	// authn.DefaultKeychain (the Docker config file and its helpers).
	// Credentials are never reported.
	Keychain authn.Keychain
	// Transport replaces the HTTP transport (tests, proxies); when set,
	// RootCAs and the TLS part of Insecure are not applied.
	Transport http.RoundTripper
	// Backoff is the retry schedule for 5xx, 429 and connection errors; a
	// zero value means three attempts, one second apart then three.
	Backoff remote.Backoff
	// Reporter receives progress; nil discards it.
	Reporter Reporter
	// UserAgent is sent to registries; empty means "rehost".
	UserAgent string
}

// Mirror copies images. It is safe for concurrent use, but runs meant to
// share blob mounts should go through one Mirror.
type Mirror struct {
	opts     Options
	insecure hostSet
	puller   *remote.Puller
	pusher   *remote.Pusher
	ledger   ledger

	repMu sync.Mutex // serialises Reporter calls
	rep   Reporter
}

// New returns a Mirror for the options.
func New(o Options) (*Mirror, error) {
	if o.Jobs < 0 {
		return nil, fmt.Errorf("jobs: got %d, want at least 1", o.Jobs)
	}
	if o.Jobs == 0 {
		o.Jobs = DefaultJobs
	}
	if o.Backoff.Steps == 0 {
		o.Backoff = defaultBackoff
	}
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	if o.UserAgent == "" {
		o.UserAgent = "rehost"
	}
	if o.Pin && o.DryRun && len(o.Platforms) > 0 {
		return nil, errors.New("a dry run cannot pin narrowed indexes: their digest is known only once the index is fetched")
	}
	m := &Mirror{opts: o, insecure: newHostSet(o.Insecure), rep: o.Reporter}
	if m.rep == nil {
		m.rep = discard{}
	}
	ropts := []remote.Option{
		remote.WithAuthFromKeychain(o.Keychain),
		remote.WithTransport(countingTransport{inner: baseTransport(o, m.insecure)}),
		remote.WithRetryBackoff(o.Backoff),
		remote.WithRetryPredicate(retryable),
		remote.WithRetryStatusCodes(retryStatusCodes...),
		remote.WithUserAgent(o.UserAgent),
	}
	var err error
	if m.puller, err = remote.NewPuller(ropts...); err != nil {
		return nil, err
	}
	if m.pusher, err = remote.NewPusher(ropts...); err != nil {
		return nil, err
	}
	return m, nil
}

// Copy copies the source image of each job to its target reference in a
// registry.
func (m *Mirror) Copy(ctx context.Context, jobs []Job) Summary {
	tasks := make([]task, len(jobs))
	for i, j := range jobs {
		tasks[i] = task{Job: j, dest: j.Target}
		src, err := parseRef(j.Source, m.insecure.has)
		if err != nil {
			tasks[i].err = err
			continue
		}
		dst, err := parseRef(j.Target, m.insecure.has)
		if err != nil {
			tasks[i].err = err
			continue
		}
		tasks[i].origin = registryOrigin{m: m, ref: src}
		tasks[i].target = registryTarget{m: m, ref: dst}
	}
	return m.run(ctx, tasks)
}

// task is a job with its origin and destination.
type task struct {
	Job
	dest   string // Result.Destination
	origin origin
	target target
	err    error // found before the copy started
}

// origin is where an image is read from.
type origin interface {
	// digest is the image's digest, as cheaply as possible: from the
	// reference or the layout, else with a HEAD request.
	digest(ctx context.Context) (v1.Hash, error)
	// get returns the image.
	get(ctx context.Context) (artifact, error)
}

// target is where an image is written.
type target interface {
	// current returns the digest the destination holds for j, if any.
	current(ctx context.Context, j Job) (h v1.Hash, ok bool, err error)
	// put writes the image.
	put(ctx context.Context, j Job, a artifact) error
	// downloads says whether bytes are counted as downloaded (layouts)
	// rather than uploaded.
	downloads() bool
}

// artifact is an image, an index, or (schema 1 and unknown media types) a
// remote descriptor pushed as it is.
type artifact struct {
	img v1.Image
	idx v1.ImageIndex
	raw *remote.Descriptor
}

func (a artifact) digest() (v1.Hash, error) {
	switch {
	case a.idx != nil:
		return a.idx.Digest()
	case a.img != nil:
		return a.img.Digest()
	default:
		return a.raw.Digest, nil
	}
}

// notice is a warning found while preparing the tasks.
type notice struct {
	job Job
	msg string
}

// run copies the tasks, Options.Jobs at a time, and sums up.
func (m *Mirror) run(ctx context.Context, tasks []task, notices ...notice) Summary {
	start := time.Now()
	m.report(func(r Reporter) {
		r.Begin(len(tasks))
		for _, n := range notices {
			r.Warn(n.job, n.msg)
		}
	})
	results := make([]Result, len(tasks))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(m.opts.Jobs, len(tasks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = m.do(ctx, tasks[i])
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	var s Summary
	for _, r := range results {
		s.add(r)
	}
	s.Elapsed = time.Since(start)
	m.report(func(r Reporter) { r.End(s) })
	return s
}

func (m *Mirror) report(f func(Reporter)) {
	m.repMu.Lock()
	defer m.repMu.Unlock()
	f(m.rep)
}

func (m *Mirror) warn(j Job, msg string) { m.report(func(r Reporter) { r.Warn(j, msg) }) }

// do runs one task.
func (m *Mirror) do(ctx context.Context, t task) Result {
	res := Result{Job: t.Job, Destination: t.dest}
	m.report(func(r Reporter) { r.Start(t.Job) })
	err := t.err
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		c := &counter{downloads: t.target.downloads(), report: func(n int64) {
			m.report(func(r Reporter) { r.Transferred(n) })
		}}
		err = m.transfer(withCounter(ctx, c), t, &res)
		res.Bytes = c.n.Load()
	}
	if err != nil {
		res.Status, res.Err = Failed, err
	}
	m.report(func(r Reporter) { r.Done(res) })
	return res
}

// transfer copies one image unless the destination already has it.
func (m *Mirror) transfer(ctx context.Context, t task, res *Result) error {
	if m.opts.DryRun {
		res.Status = Planned
		if m.opts.Pin {
			h, err := t.origin.digest(ctx)
			if err != nil {
				return err
			}
			res.Digest = h.String()
		}
		return nil
	}
	// The target first: when it lacks the image, the source digest is not
	// needed and the copy saves a request.
	cur, present, err := t.target.current(ctx, t.Job)
	if err != nil {
		return err
	}
	if present && len(m.opts.Platforms) == 0 {
		want, err := t.origin.digest(ctx)
		if err != nil {
			return err
		}
		if want == cur {
			res.Status, res.Digest = Skipped, cur.String()
			return nil
		}
	}
	a, err := t.origin.get(ctx)
	if err != nil {
		return err
	}
	if len(m.opts.Platforms) > 0 {
		if a, err = m.narrow(t.Job, a); err != nil {
			return err
		}
		h, err := a.digest()
		if err != nil {
			return err
		}
		if present && h == cur {
			res.Status, res.Digest = Skipped, cur.String()
			return nil
		}
	}
	if err := t.target.put(ctx, t.Job, a); err != nil {
		return err
	}
	h, err := a.digest()
	if err != nil {
		return err
	}
	res.Status, res.Digest = Copied, h.String()
	return nil
}

// narrow applies Options.Platforms to an index.
func (m *Mirror) narrow(j Job, a artifact) (artifact, error) {
	if a.idx == nil {
		return a, nil
	}
	before, err := a.idx.Digest()
	if err != nil {
		return a, err
	}
	idx, kept, total, err := narrow(a.idx, m.opts.Platforms)
	if err != nil {
		return a, err
	}
	if kept == total {
		return a, nil
	}
	after, err := idx.Digest()
	if err != nil {
		return a, err
	}
	if r, err := rewrite.ParseRef(j.Target); err == nil && r.Digest != "" {
		return a, fmt.Errorf("the target is pinned to %s, but --platform keeps %d of %d manifests and the index digest becomes %s", r.Digest, kept, total, after)
	}
	m.warn(j, fmt.Sprintf("platform filter keeps %d of %d manifests: the index digest changes from %s to %s", kept, total, before, after))
	return artifact{idx: idx}, nil
}

// registryOrigin reads from a registry.
type registryOrigin struct {
	m   *Mirror
	ref ref
}

func (o registryOrigin) digest(ctx context.Context) (v1.Hash, error) {
	if o.ref.digest != "" {
		return v1.NewHash(o.ref.digest)
	}
	d, err := o.m.puller.Head(ctx, o.ref.read())
	if err != nil {
		return v1.Hash{}, err
	}
	return d.Digest, nil
}

func (o registryOrigin) get(ctx context.Context) (artifact, error) {
	d, err := o.m.puller.Get(ctx, o.ref.read())
	if err != nil {
		return artifact{}, err
	}
	switch {
	case d.MediaType.IsIndex():
		idx, err := d.ImageIndex()
		return artifact{idx: idx}, err
	case d.MediaType.IsImage():
		img, err := d.Image()
		return artifact{img: img}, err
	default:
		return artifact{raw: d}, nil
	}
}

// registryTarget writes to a registry.
type registryTarget struct {
	m   *Mirror
	ref ref
}

func (t registryTarget) downloads() bool { return false }

func (t registryTarget) current(ctx context.Context, _ Job) (v1.Hash, bool, error) {
	d, err := t.m.puller.Head(ctx, t.ref.write())
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && (te.StatusCode == http.StatusNotFound || te.StatusCode == http.StatusForbidden || te.StatusCode == http.StatusUnauthorized) {
			// Absent, or not readable with push-only credentials: write it.
			return v1.Hash{}, false, nil
		}
		return v1.Hash{}, false, err
	}
	return d.Digest, true, nil
}

func (t registryTarget) put(ctx context.Context, _ Job, a artifact) error {
	if t.ref.digest != "" {
		h, err := a.digest()
		if err != nil {
			return err
		}
		if h.String() != t.ref.digest {
			return fmt.Errorf("the image has digest %s, not the %s its target is pinned to", h, t.ref.digest)
		}
	}
	mt := &mounter{ledger: &t.m.ledger, dst: t.ref.repo}
	var tg remote.Taggable
	switch {
	case a.idx != nil:
		tg = mt.index(a.idx)
	case a.img != nil:
		tg = mt.image(a.img)
	default:
		tg = a.raw
	}
	if err := t.m.pusher.Push(ctx, t.ref.write(), tg); err != nil {
		return err
	}
	mt.commit()
	return nil
}
