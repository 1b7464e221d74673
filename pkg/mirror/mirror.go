package mirror

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
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
	// never writes and never asks the destination. It asks the sources
	// only to list attachments (unless Attachments is AttachmentsNone or
	// Pin is set) and to resolve digests (with Pin).
	DryRun bool
	// Pin resolves every source to its digest with a HEAD request (never a
	// GET, which registries count against rate limits) so that
	// Result.Pinned is known. A copy resolves digests anyway; Pin matters
	// for a dry run, which then lists no attachments, to keep that promise.
	Pin bool
	// Attachments says which artifacts attached to each image are copied
	// with it: cosign's tags ("sha256-<hex>.sig", ".att", ".sbom" and any
	// other "sha256-<hex>.*" tag) and OCI 1.1 referrers, of the image, of
	// the manifests of an index, and of those attachments in turn. Empty
	// means AttachmentsAll.
	Attachments Attachments
	// Insecure lists registry hosts ("host[:port]") that may be reached over
	// plain HTTP or over TLS without certificate verification. Plain HTTP
	// to any other host is refused, private (RFC 1918) addresses included,
	// which go-containerregistry alone would reach over plain HTTP; only
	// loopback hosts (localhost, 127.0.0.1, ::1) keep that fallback, with
	// a notice to the Reporter (see Noticer).
	Insecure []string
	// RootCAs are the certificate authorities trusted for TLS; nil means the
	// system pool. See RootCAs.
	RootCAs *x509.CertPool
	// Keychain provides registry credentials; nil means
	// authn.DefaultKeychain (the Docker config file and its helpers).
	// Credentials are never reported.
	Keychain authn.Keychain
	// Transport replaces the HTTP transport (tests, proxies); when set,
	// RootCAs and the TLS part of Insecure are not applied, but plain HTTP
	// is still refused as Insecure says.
	Transport http.RoundTripper
	// Backoff is the retry schedule for 5xx, 429 and connection errors; a
	// zero value means three attempts, one second apart then three.
	Backoff remote.Backoff
	// StallTimeout abandons a request that moves less than 1 KiB/s on
	// average over this long, waiting for an answer included: a registry
	// that stops answering, or sends or accepts a blob at a trickle. The
	// request is retried (Backoff), then fails with ErrStalled. Zero means
	// DefaultStallTimeout; a negative value turns the check off.
	StallTimeout time.Duration
	// PushRegistry, when set, sends the requests for the targets under
	// its Name to its Address; targets keep their names everywhere else
	// (see PushRegistry). It applies to Copy, Import and ImportArchive;
	// Export and ExportArchive record targets and push nothing.
	PushRegistry *PushRegistry
	// SourceMirrors are where images are read from instead of their own
	// registry (rewrite.Config.SourceMirrors: a corporate mirror or
	// pull-through cache of docker.io, quay.io, ...), for Copy, Export and
	// ExportArchive. An image is looked for in its mirror first, and in
	// its registry when the mirror answers that it does not have it (404,
	// MANIFEST_UNKNOWN, NAME_UNKNOWN; a warning says so); any other
	// failure of the mirror fails the image. Its attachments are read from
	// where it was found. Everything else keeps the source's name: the
	// Job, results, layout annotations, attachment sources. Insecure,
	// RootCAs and Keychain apply to mirror hosts as to any registry.
	// Result.From says where an image was read.
	SourceMirrors *rewrite.SourceMirrors
	// SourceMirrorOnly never reads an image covered by SourceMirrors from
	// its own registry: one its mirror lacks fails (*NotInMirrorError).
	SourceMirrorOnly bool
	// Shard, when its Count is more than 1, copies one part of the
	// images and charts: those of its Index (see Shard), so that Count
	// runs, one per Index, copy together what one run copies, each image
	// once. It applies to every operation alike: Copy, Export and
	// ExportArchive copy the part of their jobs, Import and ImportArchive
	// push the part of what the layout or archive holds (checking the
	// archive whole first). Summary.Elsewhere counts the rest. The zero
	// value is the whole run.
	Shard Shard
	// Verify, when set, verifies each image's cosign signature with its
	// keys before the image is copied, offline (no transparency log, no
	// Fulcio): a signature of the image's digest (for an index, the
	// index's own, as cosign sign signs it) in either of cosign's formats,
	// a "sha256-<hex>.sig" tag or a sigstore bundle attached as an OCI 1.1
	// referrer (the referrers API or its tag schema), found where the
	// image is read (its source mirror included; in a layout or an
	// archive, the attachments stored with it). An image no key verifies
	// fails with an *UnverifiedError and nothing of it is copied, unless
	// Verify.Warn. The image is then read by the digest verified.
	// Result.Verification says what was found; Export and ExportArchive
	// record the key that verified (AnnotationVerifiedKey). A dry run
	// verifies too (reading the signatures), unless Pin keeps it to HEAD
	// requests.
	Verify *Verify
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
	push     *pushRoute
	puller   *remote.Puller
	pusher   *remote.Pusher
	ledger   ledger
	api      sync.Map // registry host -> serves the referrers API (bool)
	probing  sync.Map // registry host -> *sync.Mutex held while probing the referrers API
	notified sync.Map // loopback hosts reached over plain HTTP, noticed once
	secrets  secrets  // credentials used, scrubbed from every message

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
	if o.StallTimeout == 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	switch o.Attachments {
	case "":
		o.Attachments = AttachmentsAll
	case AttachmentsAll, AttachmentsSignatures, AttachmentsNone:
	default:
		return nil, fmt.Errorf("attachments %q: want all, signatures or none", o.Attachments)
	}
	if err := o.Shard.check(); err != nil {
		return nil, err
	}
	if o.Pin && o.DryRun && len(o.Platforms) > 0 {
		return nil, errors.New("a dry run cannot pin narrowed indexes: their digest is known only once the index is fetched")
	}
	if o.Verify != nil && len(o.Verify.Keys) == 0 {
		return nil, errNoKeys
	}
	push, err := newPushRoute(o.PushRegistry)
	if err != nil {
		return nil, err
	}
	m := &Mirror{opts: o, insecure: newHostSet(o.Insecure), push: push, rep: o.Reporter}
	if m.rep == nil {
		m.rep = discard{}
	}
	ropts := []remote.Option{
		remote.WithAuthFromKeychain(recordingKeychain{kc: o.Keychain, s: &m.secrets}),
		remote.WithTransport(countingTransport{
			inner:   plainGuard{inner: stallGuard(baseTransport(o, m.insecure), o.StallTimeout), m: m},
			api:     &m.api,
			secrets: &m.secrets,
		}),
		remote.WithRetryBackoff(o.Backoff),
		remote.WithRetryPredicate(retryable),
		remote.WithRetryStatusCodes(retryStatusCodes...),
		remote.WithUserAgent(o.UserAgent),
	}
	if m.puller, err = remote.NewPuller(ropts...); err != nil {
		return nil, err
	}
	if m.pusher, err = remote.NewPusher(ropts...); err != nil {
		return nil, err
	}
	return m, nil
}

// Copy copies the source image of each job to its target reference in a
// registry, with its attachments (Options.Attachments), and pushes the
// chart of each chart job (ChartJob) to its target.
func (m *Mirror) Copy(ctx context.Context, jobs []Job) Summary {
	tasks := make([]task, len(jobs))
	for i, j := range jobs {
		tasks[i] = task{Job: j, dest: j.Target}
		var err error
		if j.Chart != nil {
			tasks[i].origin = chartOrigin{c: j.Chart}
		} else if tasks[i].origin, err = m.sourceOrigin(j); err != nil {
			tasks[i].err = err
			continue
		}
		dst, via, err := m.parseTarget(j.Target)
		if err != nil {
			tasks[i].err = err
			continue
		}
		tasks[i].target, tasks[i].via = registryTarget{m: m, ref: dst}, via
	}
	return m.run(ctx, m.batch(tasks, nil), nil)
}

// task is a job with its origin and destination.
type task struct {
	Job
	dest   string // Result.Destination
	via    string // Result.Via
	origin origin
	target target
	err    error       // found before the copy started
	listed *attachedTo // the attachments of the image, listed when verified
}

// attachmentsOf lists what is attached to h, once (t.listed).
func (t task) attachmentsOf(ctx context.Context, rs *runState, h v1.Hash) ([]found, string, error) {
	if t.listed != nil && t.listed.subject == h {
		return t.listed.fs, "", nil
	}
	return t.origin.attachments(ctx, rs, h)
}

// item is one manifest to copy: an image, or an attachment (att set).
type item struct {
	Job
	att      *found
	verified string // the ID of the key that verified the image (Options.Verify)
}

// origin is where an image and its attachments are read from.
type origin interface {
	// digest is the image's digest, as cheaply as possible: from the
	// reference or the layout, else with a HEAD request.
	digest(ctx context.Context) (v1.Hash, error)
	// describe is the image's descriptor (a HEAD request for a registry).
	describe(ctx context.Context) (v1.Descriptor, error)
	// get returns the image.
	get(ctx context.Context) (artifact, error)
	// index returns the index with digest h from the image's repository.
	indexOf(ctx context.Context, h v1.Hash) (v1.ImageIndex, error)
	// attachments lists what is attached to h in the image's repository;
	// warn is a warning to give once (attachments could not be looked
	// for, which is not an error).
	attachments(ctx context.Context, rs *runState, h v1.Hash) (fs []found, warn string, err error)
	// pinned is the origin reading the image by digest h.
	pinned(h v1.Hash) origin
}

// target is where an image and its attachments are written.
type target interface {
	// current returns the descriptor the destination holds for it, nil
	// when it holds none.
	current(ctx context.Context, it item) (*v1.Descriptor, error)
	// put writes the image or attachment.
	put(ctx context.Context, it item, a artifact) error
	// index returns the index with digest h that the destination holds
	// for it.
	indexOf(ctx context.Context, it item, h v1.Hash) (v1.ImageIndex, error)
	// attached returns the destination of an attachment of the image of
	// job j: the target, the reference recorded as Job.Target, and the
	// destination reported.
	attached(j Job, f found) (t target, ref, dest string, err error)
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

// holder takes the results of a run whose images are written only once
// every task has run (ExportArchive places their bytes then): it gives
// each task its context, and holds back the Reporter's Done of the
// results it keeps, to report them once final.
type holder interface {
	// taskContext is the context task i runs with.
	taskContext(ctx context.Context, i int) context.Context
	// hold is told that task i ended with r, and says whether its Done
	// waits.
	hold(i int, r Result) bool
}

// batch is the tasks of a run and the notices found preparing them, of
// this Mirror's part (Options.Shard).
type batch struct {
	tasks   []task
	notices []notice
	// elsewhere counts the tasks left to the other parts.
	elsewhere int
}

// batch keeps the tasks and notices of Options.Shard, in their order.
func (m *Mirror) batch(tasks []task, notices []notice) batch {
	sh := m.opts.Shard
	if sh.Whole() {
		return batch{tasks: tasks, notices: notices}
	}
	var b batch
	for _, t := range tasks {
		if sh.Has(t.Job) {
			b.tasks = append(b.tasks, t)
		} else {
			b.elsewhere++
		}
	}
	for _, n := range notices {
		if sh.Has(n.job) {
			b.notices = append(b.notices, n)
		}
	}
	return b
}

// run copies the tasks, Options.Jobs at a time, and sums up; h, when
// given, holds results back (see holder).
func (m *Mirror) run(ctx context.Context, b batch, h holder) Summary {
	s := m.runTasks(ctx, b, h)
	m.report(func(r Reporter) { r.End(s) })
	return s
}

// runTasks is run without the end of the report (Reporter.End), for a
// caller with more to do first.
func (m *Mirror) runTasks(ctx context.Context, b batch, h holder) Summary {
	tasks, notices := b.tasks, b.notices
	start := time.Now()
	m.report(func(r Reporter) {
		r.Begin(len(tasks))
		for _, n := range notices {
			r.Warn(n.job, n.msg)
		}
	})
	rs := &runState{}
	results := make([]Result, len(tasks))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(m.opts.Jobs, len(tasks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tctx := ctx
				if h != nil {
					tctx = h.taskContext(ctx, i)
				}
				res := m.do(tctx, rs, tasks[i])
				results[i] = res
				if h == nil || !h.hold(i, res) {
					m.report(func(r Reporter) { r.Done(res) })
				}
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	s := Summary{ListedAttachments: m.listsAttachments(), DryRun: m.opts.DryRun, Shard: m.opts.Shard, Elsewhere: b.elsewhere}
	for _, r := range results {
		s.add(r)
	}
	s.Elapsed = time.Since(start)
	return s
}

// listsAttachments says whether the runs look for attachments.
func (m *Mirror) listsAttachments() bool {
	return m.opts.Attachments != AttachmentsNone && !(m.opts.DryRun && m.opts.Pin)
}

func (m *Mirror) report(f func(Reporter)) {
	m.repMu.Lock()
	defer m.repMu.Unlock()
	f(m.rep)
}

// warn reports a warning about j, scrubbed of credentials and
// unprintable characters (it may quote a registry).
func (m *Mirror) warn(j Job, msg string) {
	msg = m.secrets.scrub(msg)
	m.report(func(r Reporter) { r.Warn(j, msg) })
}

// do runs one task; the caller reports its result (Reporter.Done).
func (m *Mirror) do(ctx context.Context, rs *runState, t task) Result {
	res := Result{Job: t.Job, Destination: t.dest, Via: t.via}
	m.report(func(r Reporter) { r.Start(t.Job) })
	err := t.err
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		c := &counter{downloads: t.target.downloads(), report: func(n int64) {
			m.report(func(r Reporter) { r.Transferred(n) })
		}}
		err = m.transfer(withCounter(ctx, c), rs, t, &res)
		res.Bytes = c.n.Load()
	}
	if mo, ok := t.origin.(*mirroredOrigin); ok {
		res.From = mo.from()
	}
	if err != nil {
		res.Status, res.Err = Failed, m.failure(ctx, err)
	}
	return res
}

// failure is err as a Result gives it: with the cause of ctx's end
// ("context canceled (interrupt signal received)"), credentials scrubbed.
func (m *Mirror) failure(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); ctx.Err() != nil && cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (%v)", err, cause)
	}
	return m.secrets.safe(err)
}

// outcome is what copying one manifest did.
type outcome struct {
	status    Status
	digest    v1.Hash
	mediaType types.MediaType
	art       *artifact // the manifest, when it was fetched
	narrowed  *v1.Hash  // the index digest before Options.Platforms narrowed it
}

// transfer copies one image unless the destination already has it, then
// its attachments.
func (m *Mirror) transfer(ctx context.Context, rs *runState, t task, res *Result) error {
	if m.opts.DryRun {
		return m.plan(ctx, rs, t, res)
	}
	it := item{Job: t.Job}
	if m.opts.Verify != nil && t.Chart == nil {
		h, v, err := m.verifyTask(ctx, rs, &t, res, "copied")
		if err != nil {
			return err
		}
		if v.Verdict == Verified {
			it.verified = v.Key
		}
		// What is copied is what was verified, even if the tag moves.
		t.origin = t.origin.pinned(h)
	}
	out, err := m.copyOne(ctx, it, t.origin, t.target, true)
	if err != nil {
		return err
	}
	res.Status, res.Digest = out.status, out.digest.String()
	if !m.listsAttachments() || t.Chart != nil {
		return nil
	}
	subjects, dropped, err := m.subjects(ctx, t, out)
	if err != nil {
		return fmt.Errorf("%s, but its attachments were not looked for: %w", res.Status, err)
	}
	if err := m.attachments(ctx, rs, t, subjects, dropped, out, res); err != nil {
		return fmt.Errorf("%s, but its attachments could not be listed: %w", res.Status, err)
	}
	return nil
}

// copyOne copies one manifest from o to t unless t holds it already;
// narrow applies Options.Platforms.
func (m *Mirror) copyOne(ctx context.Context, it item, o origin, t target, narrow bool) (outcome, error) {
	narrow = narrow && len(m.opts.Platforms) > 0
	// The target first: when it lacks the manifest, the source digest is
	// not needed and the copy saves a request.
	cur, err := t.current(ctx, it)
	if err != nil {
		return outcome{}, err
	}
	if cur != nil && !narrow {
		want, err := o.digest(ctx)
		if err != nil {
			return outcome{}, err
		}
		if want == cur.Digest {
			return outcome{status: Skipped, digest: cur.Digest, mediaType: cur.MediaType}, nil
		}
	}
	a, err := o.get(ctx)
	if err != nil {
		return outcome{}, err
	}
	var before *v1.Hash
	if narrow {
		if a, before, err = m.narrow(it.Job, a); err != nil {
			return outcome{}, err
		}
	}
	h, err := a.digest()
	if err != nil {
		return outcome{}, err
	}
	out := outcome{status: Copied, digest: h, mediaType: a.mediaType(), art: &a, narrowed: before}
	if cur != nil && h == cur.Digest {
		out.status = Skipped
		return out, nil
	}
	if err := t.put(ctx, it, a); err != nil {
		return outcome{}, err
	}
	return out, nil
}

func (a artifact) mediaType() types.MediaType {
	var mt types.MediaType
	switch {
	case a.idx != nil:
		mt, _ = a.idx.MediaType()
	case a.img != nil:
		mt, _ = a.img.MediaType()
	default:
		mt = a.raw.MediaType
	}
	return mt
}

// subjects are the digests whose attachments go with a copied image: the
// image and the manifests of an index. When Options.Platforms narrowed
// the index, its own digest is dropped (its attachments cannot be valid
// for the narrowed copy) and only the kept manifests are subjects.
func (m *Mirror) subjects(ctx context.Context, t task, out outcome) (subjects []v1.Hash, dropped *v1.Hash, err error) {
	var idx v1.ImageIndex
	switch {
	case out.art != nil && out.art.idx != nil:
		idx = out.art.idx
	case out.art == nil && out.mediaType.IsIndex():
		if idx, err = t.target.indexOf(ctx, item{Job: t.Job}, out.digest); err != nil {
			return nil, nil, err
		}
	}
	if out.narrowed != nil {
		dropped = out.narrowed
	} else {
		subjects = append(subjects, out.digest)
	}
	if idx != nil {
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, nil, err
		}
		for _, d := range im.Manifests {
			subjects = append(subjects, d.Digest)
		}
	}
	return subjects, dropped, nil
}

// maxDepth bounds the chains of attachments of attachments followed (a
// signature of an SBOM of an image is depth 2).
const maxDepth = 4

// attachments copies (or, in a dry run, plans) what is attached to the
// subjects, then what is attached to those attachments, and so on. A
// missing attachment is not an error; a failed copy of a present one is
// recorded in res.Attachments. The error is about finding them.
func (m *Mirror) attachments(ctx context.Context, rs *runState, t task, subjects []v1.Hash, dropped *v1.Hash, out outcome, res *Result) error {
	if dropped != nil {
		fs, warn, err := t.attachmentsOf(ctx, rs, *dropped)
		if err != nil {
			return err
		}
		if warn != "" {
			m.warn(t.Job, warn)
		}
		n := 0
		for _, f := range fs {
			if wanted(m.opts.Attachments, f.kind) {
				n++
			}
		}
		if n > 0 {
			m.warn(t.Job, fmt.Sprintf("%d attachments (signatures, attestations, …) of the index %s are not copied: they cannot be valid for the narrowed copy %s; those of its platform manifests are copied", n, dropped, out.digest))
		}
	}
	seen := map[v1.Hash]bool{}
	for _, s := range subjects {
		seen[s] = true
	}
	level := subjects
	for depth := 0; len(level) > 0 && depth < maxDepth; depth++ {
		var next []v1.Hash
		for _, s := range level {
			fs, warn, err := t.attachmentsOf(ctx, rs, s)
			if err != nil {
				return err
			}
			if warn != "" {
				m.warn(t.Job, warn)
			}
			for _, f := range fs {
				if !wanted(m.opts.Attachments, f.kind) {
					continue
				}
				a, h := m.attachment(ctx, t, f)
				res.Attachments = append(res.Attachments, a)
				if h != nil && !seen[*h] {
					seen[*h] = true
					next = append(next, *h)
				}
			}
		}
		level = next
	}
	return nil
}

// attachment copies or plans one attachment, and returns its digest when
// known (to look for its own attachments).
func (m *Mirror) attachment(ctx context.Context, t task, f found) (Attachment, *v1.Hash) {
	a := Attachment{Kind: f.kind, Source: f.src, Subject: f.subject.String(), Referrer: f.referrer()}
	tg, ref, dest, err := t.target.attached(t.Job, f)
	a.Destination = dest
	if err != nil {
		a.Status, a.Err = Failed, m.secrets.safe(err)
		return a, nil
	}
	if m.opts.DryRun {
		a.Status = Planned
		var h v1.Hash
		if f.desc != nil {
			h = f.desc.Digest
		} else if h, err = f.origin.digest(ctx); err != nil {
			a.Status, a.Err = Failed, m.secrets.safe(err)
			return a, nil
		}
		a.Digest = h.String()
		return a, &h
	}
	out, err := m.copyOne(ctx, item{Job: Job{Source: f.src, Target: ref}, att: &f}, f.origin, tg, false)
	if err != nil {
		a.Status, a.Err = Failed, m.secrets.safe(err)
		return a, nil
	}
	a.Status, a.Digest = out.status, out.digest.String()
	return a, &out.digest
}

// plan is transfer for a dry run.
func (m *Mirror) plan(ctx context.Context, rs *runState, t task, res *Result) error {
	res.Status = Planned
	if t.Chart != nil {
		// A chart's digest is known without asking anyone.
		h, err := t.origin.digest(ctx)
		if err != nil {
			return err
		}
		res.Digest = h.String()
		return nil
	}
	if m.opts.Pin {
		h, err := t.origin.digest(ctx)
		if err != nil {
			return err
		}
		res.Digest = h.String()
	} else if m.opts.Verify != nil {
		if _, _, err := m.verifyTask(ctx, rs, &t, res, "would copy"); err != nil {
			return err
		}
	}
	if !m.listsAttachments() {
		return nil
	}
	d, err := t.origin.describe(ctx)
	if err != nil {
		m.warn(t.Job, fmt.Sprintf("attachments not listed: %v", err))
		return nil
	}
	out := outcome{status: Planned, digest: d.Digest, mediaType: d.MediaType}
	if d.MediaType.IsIndex() {
		idx, err := t.origin.indexOf(ctx, d.Digest)
		if err != nil {
			m.warn(t.Job, fmt.Sprintf("attachments not listed: %v", err))
			return nil
		}
		a := artifact{idx: idx}
		if len(m.opts.Platforms) > 0 {
			if a, out.narrowed, err = m.narrow(t.Job, a); err != nil {
				return err
			}
			if out.narrowed != nil {
				out.digest, _ = a.digest()
			}
		}
		out.art = &a
	}
	subjects, dropped, err := m.subjects(ctx, t, out)
	if err == nil {
		err = m.attachments(ctx, rs, t, subjects, dropped, out, res)
	}
	if err != nil {
		m.warn(t.Job, fmt.Sprintf("attachments not listed: %v", err))
	}
	return nil
}

// narrow applies Options.Platforms to an index; before is the digest of
// the index before, when it changed.
func (m *Mirror) narrow(j Job, a artifact) (out artifact, before *v1.Hash, err error) {
	if a.idx == nil {
		return a, nil, nil
	}
	orig, err := a.idx.Digest()
	if err != nil {
		return a, nil, err
	}
	idx, kept, total, err := narrow(a.idx, m.opts.Platforms)
	if err != nil {
		return a, nil, err
	}
	if kept == total {
		return a, nil, nil
	}
	after, err := idx.Digest()
	if err != nil {
		return a, nil, err
	}
	if r, err := rewrite.ParseRef(j.Target); err == nil && r.Digest != "" {
		return a, nil, &PinnedNarrowError{Pinned: r.Digest, Kept: kept, Total: total, Digest: after.String()}
	}
	m.warn(j, fmt.Sprintf("platform filter keeps %d of %d manifests: the index digest changes from %s to %s", kept, total, orig, after))
	return artifact{idx: idx}, &orig, nil
}

// PinnedNarrowError is the refusal to narrow an index (Options.Platforms)
// whose target is pinned to its digest: the narrowed index has another.
type PinnedNarrowError struct {
	// Pinned is the digest the target names.
	Pinned string
	// Kept and Total count the manifests the platforms keep, of the
	// index's.
	Kept, Total int
	// Digest is the narrowed index's digest.
	Digest string
}

func (e *PinnedNarrowError) Error() string {
	return fmt.Sprintf("the target is pinned to %s, but the platform filter (Options.Platforms) keeps %d of %d manifests and the index digest becomes %s", e.Pinned, e.Kept, e.Total, e.Digest)
}

// registryOrigin reads from a registry.
type registryOrigin struct {
	m   *Mirror
	ref ref
	pre *remote.Descriptor // the manifest, when already fetched
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

func (o registryOrigin) pinned(h v1.Hash) origin {
	o.ref = o.ref.at(o.ref.tag, h.String())
	return o
}

func (o registryOrigin) describe(ctx context.Context) (v1.Descriptor, error) {
	d, err := o.m.puller.Head(ctx, o.ref.read())
	if err != nil {
		return v1.Descriptor{}, err
	}
	return *d, nil
}

func (o registryOrigin) get(ctx context.Context) (artifact, error) {
	if o.pre != nil {
		return descriptorArtifact(o.pre)
	}
	d, err := o.m.puller.Get(ctx, o.ref.read())
	if err != nil {
		return artifact{}, err
	}
	return descriptorArtifact(d)
}

func descriptorArtifact(d *remote.Descriptor) (artifact, error) {
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

func (o registryOrigin) indexOf(ctx context.Context, h v1.Hash) (v1.ImageIndex, error) {
	d, err := o.m.puller.Get(ctx, o.ref.repo.Digest(h.String()))
	if err != nil {
		return nil, err
	}
	return d.ImageIndex()
}

// attachments lists the cosign tags of h (from the repository's tag list,
// read once per run) and its referrers.
func (o registryOrigin) attachments(ctx context.Context, rs *runState, h v1.Hash) ([]found, string, error) {
	repo := o.ref.repo
	ti, warn, err := o.m.tagIndex(ctx, rs, repo)
	if err != nil {
		return nil, "", err
	}
	var out []found
	if ti != nil {
		for _, suffix := range ti.suffixes[tagPrefix(h)] {
			tag := tagPrefix(h) + "." + suffix
			r := o.ref.at(tag, "")
			out = append(out, found{
				kind: kindOfTag(suffix), subject: h, tag: tag,
				src: r.String(), origin: registryOrigin{m: o.m, ref: r},
			})
		}
	}
	ds, err := o.m.referrers(ctx, repo, h, ti)
	if err != nil {
		return nil, "", err
	}
	for _, d := range ds {
		d := d
		org := registryOrigin{m: o.m, ref: o.ref.at("", d.Digest.String())}
		if strings.HasPrefix(strings.ToLower(d.ArtifactType), sigstoreBundlePrefix) && d.Annotations[sigstorePredicateType] == "" {
			// A sigstore bundle signs or attests; only its manifest's
			// annotations say which (the fallback tag cosign writes
			// leaves them out). The manifest is kept for the copy.
			rd, err := o.m.puller.Get(ctx, org.ref.read())
			if err != nil {
				return nil, "", fmt.Errorf("reading the referrer %s@%s: %w", repo, d.Digest, err)
			}
			var mf struct {
				Annotations map[string]string `json:"annotations"`
			}
			if json.Unmarshal(rd.Manifest, &mf) == nil && len(mf.Annotations) > 0 {
				ann := map[string]string{}
				for k, v := range d.Annotations {
					ann[k] = v
				}
				for k, v := range mf.Annotations {
					ann[k] = v
				}
				d.Annotations = ann
			}
			org.pre = rd
		}
		out = append(out, found{
			kind: kindOfReferrer(d), subject: h, desc: &d,
			src: org.ref.String(), origin: org,
		})
	}
	return out, warn, nil
}

// registryTarget writes to a registry.
type registryTarget struct {
	m   *Mirror
	ref ref
}

func (t registryTarget) downloads() bool { return false }

func (t registryTarget) current(ctx context.Context, it item) (*v1.Descriptor, error) {
	if it.att != nil && it.att.referrer() {
		// A referrer counts as present once the target lists it for its
		// subject (with the API, or in the fallback tag), not merely
		// when its manifest is there.
		ds, err := t.m.referrers(ctx, t.ref.repo, it.att.subject, nil)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if d.Digest == it.att.desc.Digest {
				return &d, nil
			}
		}
		return nil, nil
	}
	d, err := t.m.puller.Head(ctx, t.ref.write())
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && (te.StatusCode == http.StatusNotFound || te.StatusCode == http.StatusForbidden || te.StatusCode == http.StatusUnauthorized) {
			// Absent, or not readable with push-only credentials: write it.
			return nil, nil
		}
		return nil, err
	}
	return d, nil
}

func (t registryTarget) indexOf(ctx context.Context, _ item, h v1.Hash) (v1.ImageIndex, error) {
	d, err := t.m.puller.Get(ctx, t.ref.repo.Digest(h.String()))
	if err != nil {
		return nil, err
	}
	return d.ImageIndex()
}

// attached puts an attachment in the target repository under the same tag
// (cosign) or digest (referrer): go-containerregistry then maintains the
// referrers tag schema where the registry lacks the referrers API.
func (t registryTarget) attached(_ Job, f found) (target, string, string, error) {
	r := t.ref.at(f.tag, "")
	if f.referrer() {
		r = t.ref.at("", f.desc.Digest.String())
	}
	return registryTarget{m: t.m, ref: r}, r.String(), r.String(), nil
}

func (t registryTarget) put(ctx context.Context, _ item, a artifact) error {
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
