package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/pkg/rewrite"
	"golang.org/x/sync/errgroup"
)

// Annotations rehost writes on the index.json descriptors of an OCI image
// layout, one descriptor per source image.
const (
	// AnnotationSource is the image's source reference, fully qualified:
	// "docker.io/library/nginx:1.25". Import maps it again to find the
	// target, so the layout does not depend on the registry it was made for.
	AnnotationSource = "dev.rehost.source"
	// AnnotationTarget is the target reference computed when the layout was
	// written; informational.
	AnnotationTarget = "dev.rehost.target"
	// AnnotationRefName is the OCI image-spec annotation naming the image;
	// rehost sets it to the source reference.
	AnnotationRefName = "org.opencontainers.image.ref.name"
	// AnnotationContainerdName is the name containerd's "ctr images import"
	// gives the image; rehost sets it to the source reference.
	AnnotationContainerdName = "io.containerd.image.name"
	// AnnotationAttachment marks an attachment (a cosign tag or an OCI 1.1
	// referrer) stored with its image; the value is its AttachmentKind.
	// AnnotationSource is then the attachment's own source:
	// "repo:sha256-<hex>.sig" or "repo@sha256:…". A referrer's manifest
	// also names its subject itself.
	AnnotationAttachment = "dev.rehost.attachment"
	// AnnotationSubject is the digest an attachment is attached to.
	AnnotationSubject = "dev.rehost.subject"
	// AnnotationVerifiedKey is the ID of the key (VerifyKey.ID) that
	// verified the image's signature when it was written
	// (Options.Verify). The signatures are stored with the image (unless
	// Options.Attachments leaves them out), so that Import and
	// ImportArchive with Options.Verify verify them again.
	AnnotationVerifiedKey = "dev.rehost.verified-key"
)

// Export writes the source image of each job into the OCI image layout at
// dir, creating it when missing and adding to it otherwise. Each image's
// descriptor in index.json carries the source reference (AnnotationSource,
// AnnotationRefName, AnnotationContainerdName) and the target
// (AnnotationTarget); an image already there with the same digest is
// skipped, one whose source moved to another digest is replaced. A blob
// already in the layout (a regular file of the right size) is not written
// again. Attachments (Options.Attachments) get descriptors of their own in
// index.json, marked with AnnotationAttachment and AnnotationSubject:
// cosign tags as tagged manifests, referrers by digest. The chart of a
// chart job (ChartJob) is stored as its OCI artifact, its descriptor
// marked with AnnotationChart and AnnotationChartVersion (and, for a
// relocated chart, AnnotationChartRegistry and AnnotationChartPathStyle);
// a layout holds one chart of a name and version.
//
// Nothing is written outside dir, and no symbolic link inside it is
// followed: a link at oci-layout, index.json, blobs, blobs/<algorithm> or a
// blob fails the run with ErrSymlink naming it. Every file is written to a
// temporary file beside it, checked (blobs against their digest and size)
// and renamed into place; index.json names an image only once all its
// blobs are written, so an interrupted run leaves a layout that a new run
// completes. The returned error is about the layout itself; per-image
// failures are in the Summary.
func (m *Mirror) Export(ctx context.Context, jobs []Job, dir string) (Summary, error) {
	dest := &layoutTarget{dir: dir, dest: "oci:" + dir}
	if !m.opts.DryRun {
		if err := dest.open(); err != nil {
			return Summary{}, m.secrets.safe(err)
		}
		defer dest.close()
	}
	s := m.run(ctx, m.batch(m.exportTasks(jobs, dest), nil), nil)
	if m.opts.DryRun {
		return s, nil
	}
	return s, m.secrets.safe(dest.flush())
}

// exportTasks are the tasks that write the jobs into the layout dest.
func (m *Mirror) exportTasks(jobs []Job, dest *layoutTarget) []task {
	tasks := make([]task, len(jobs))
	for i, j := range jobs {
		tasks[i] = task{Job: j, dest: dest.dest, target: dest}
		if j.Chart != nil {
			tasks[i].origin = chartOrigin{c: j.Chart}
			continue
		}
		o, err := m.sourceOrigin(j)
		if err != nil {
			tasks[i].err = err
			continue
		}
		tasks[i].origin = o
	}
	return tasks
}

// Import pushes every image of the OCI image layout at dir into a registry.
// Each image's target is computed by mapper from the source reference the
// layout recorded (AnnotationSource, else a fully qualified
// AnnotationContainerdName or AnnotationRefName): the layout can be made
// for one registry and pushed into another, only the destination changes.
// Images the mapper leaves where they are (excluded, or already in the
// target registry) are reported as warnings and not pushed. The
// attachments stored with an image (see Export) are pushed with it, into
// the same target repository: cosign tags under their tag, referrers by
// digest (with the referrers API where the registry serves it, else its
// tag schema). Each chart (see Export) is pushed to
// <mapper.ChartsRepository()>/<name>:<version>, its name and version
// checked against its verified config; a chart relocated for another
// registry or path style than mapper's fails, since its values would pull
// from elsewhere.
//
// The layout is untrusted (it may come on removable media): no symbolic
// link inside it is followed (ErrSymlink); index.json, manifests and
// indexes are bounded by MaxManifestSize and configs by MaxConfigSize,
// declared sizes checked before anything is read (ErrTooLarge); every blob
// must match its declared size (ErrSizeMismatch) and digest
// (ErrDigestMismatch); and everything an image refers to is walked before
// any of it is pushed, refusing indexes that list themselves (ErrCycle) or
// nest deeper than MaxIndexDepth (ErrTooDeep). Such an image fails, naming
// the file or the chain of digests, and nothing of it is pushed; layers
// are checked as they stream, and a layer that does not match fails its
// image before its manifest is pushed. The returned error is about reading
// index.json; per-image failures are in the Summary.
func (m *Mirror) Import(ctx context.Context, dir string, mapper *rewrite.Mapper) (Summary, error) {
	lr, ii, err := openLayout(dir)
	if err != nil {
		return Summary{}, m.secrets.safe(err)
	}
	defer lr.Close()
	return m.importLayout(ctx, lr, ii, mapper, nil)
}

// importLayout pushes the images of the layout lr, whose index.json is
// ii (see Import), with notices found before.
func (m *Mirror) importLayout(ctx context.Context, lr *layoutReader, ii *ociIndex, mapper *rewrite.Mapper, notices []notice) (Summary, error) {
	im, err := ii.IndexManifest()
	if err != nil {
		return Summary{}, m.secrets.safe(err)
	}
	var tasks []task
	for i, d := range im.Manifests {
		if d.Annotations[AnnotationAttachment] != "" {
			continue // pushed with its image
		}
		if d.Annotations[AnnotationChart] != "" {
			tasks = append(tasks, m.importChart(lr, ii, d, mapper))
			continue
		}
		src := layoutSource(d)
		t := task{Job: Job{Source: src}, origin: layoutOrigin{r: lr, index: ii, desc: d, all: im.Manifests, repo: repoOf(src)}}
		if src == "" {
			t.Job.Source = fmt.Sprintf("%s index.json manifests[%d] (%s)", lr.d.where(), i, d.Digest)
			t.err = fmt.Errorf("no source reference recorded (annotation %s)", AnnotationSource)
			tasks = append(tasks, t)
			continue
		}
		mp, err := mapper.Map(src)
		if err != nil {
			t.err = err
			tasks = append(tasks, t)
			continue
		}
		if mp.Action != rewrite.Rewritten {
			notices = append(notices, notice{t.Job, fmt.Sprintf("not pushed: the mapping leaves it where it is (%s)", mp.Action)})
			continue
		}
		t.Job.Target = mp.Target.Qualified()
		t.dest = t.Job.Target
		dst, via, err := m.parseTarget(t.Job.Target)
		if err != nil {
			t.err = err
		} else {
			t.target, t.via = registryTarget{m: m, ref: dst}, via
		}
		tasks = append(tasks, t)
	}
	if m.opts.Attachments != AttachmentsNone {
		// Of every image of the layout, before Options.Shard keeps a
		// part: an orphan is noticed in the part of its repository.
		notices = append(notices, orphans(ii, im.Manifests, tasks)...)
	}
	return m.run(ctx, m.batch(tasks, notices), nil), nil
}

// orphans are notices for the attachments of a layout that no image of it
// leads to (their image was removed from index.json): they are not pushed.
func orphans(ii v1.ImageIndex, all []v1.Descriptor, tasks []task) []notice {
	reached := map[string]bool{} // repo@digest
	for _, t := range tasks {
		o, ok := t.origin.(layoutOrigin)
		if !ok || t.err != nil {
			continue
		}
		reached[o.repo+"@"+o.desc.Digest.String()] = true
		if o.desc.MediaType.IsIndex() {
			if idx, err := ii.ImageIndex(o.desc.Digest); err == nil {
				if im, err := idx.IndexManifest(); err == nil {
					for _, c := range im.Manifests {
						reached[o.repo+"@"+c.Digest.String()] = true
					}
				}
			}
		}
	}
	for grew := true; grew; {
		grew = false
		for _, d := range all {
			repo := repoOf(d.Annotations[AnnotationSource])
			if d.Annotations[AnnotationAttachment] != "" && reached[repo+"@"+d.Annotations[AnnotationSubject]] && !reached[repo+"@"+d.Digest.String()] {
				reached[repo+"@"+d.Digest.String()] = true
				grew = true
			}
		}
	}
	var out []notice
	for _, d := range all {
		src := d.Annotations[AnnotationSource]
		if d.Annotations[AnnotationAttachment] != "" && !reached[repoOf(src)+"@"+d.Digest.String()] {
			out = append(out, notice{Job{Source: src}, fmt.Sprintf("not pushed: this %s is attached to %s, which is not an image of the layout", Quote(d.Annotations[AnnotationAttachment]), Quote(d.Annotations[AnnotationSubject]))})
		}
	}
	return out
}

// layoutSource is the source reference recorded on a layout descriptor.
func layoutSource(d v1.Descriptor) string {
	if s := d.Annotations[AnnotationSource]; s != "" {
		return s
	}
	// Other tools may record a bare tag ("1.25") as the ref name: only a
	// fully qualified name says where the image comes from.
	for _, k := range []string{AnnotationContainerdName, AnnotationRefName} {
		s := d.Annotations[k]
		if r, err := name.ParseReference(s, name.StrictValidation); err == nil && strings.HasPrefix(s, r.Context().RegistryStr()+"/") {
			return s
		}
	}
	return ""
}

// repoOf is the repository of a reference, "" when it does not parse.
func repoOf(s string) string {
	r, err := rewrite.ParseRef(s)
	if err != nil {
		return ""
	}
	return r.RepositoryName()
}

// layoutOrigin reads an image from a layout.
type layoutOrigin struct {
	r     *layoutReader
	index v1.ImageIndex   // index.json
	desc  v1.Descriptor   // the image's descriptor in index.json
	all   []v1.Descriptor // index.json, for attachments
	repo  string          // the source repository of the image
}

func (o layoutOrigin) digest(context.Context) (v1.Hash, error) { return o.desc.Digest, nil }

func (o layoutOrigin) pinned(v1.Hash) origin { return o }

func (o layoutOrigin) describe(context.Context) (v1.Descriptor, error) { return o.desc, nil }

func (o layoutOrigin) indexOf(_ context.Context, h v1.Hash) (v1.ImageIndex, error) {
	return o.index.ImageIndex(h)
}

// attachments are the descriptors of index.json attached to h in the
// image's source repository.
func (o layoutOrigin) attachments(_ context.Context, _ *runState, h v1.Hash) ([]found, string, error) {
	var out []found
	for _, d := range o.all {
		kind := d.Annotations[AnnotationAttachment]
		src := d.Annotations[AnnotationSource]
		if kind == "" || d.Annotations[AnnotationSubject] != h.String() || repoOf(src) != o.repo || o.repo == "" {
			continue
		}
		r, err := rewrite.ParseRef(src)
		if err != nil {
			continue
		}
		f := found{kind: AttachmentKind(kind), subject: h, tag: r.Tag, src: src,
			origin: layoutOrigin{r: o.r, index: o.index, desc: d, all: o.all, repo: o.repo}}
		if f.tag == "" {
			d := d
			f.desc = &d
		}
		out = append(out, f)
	}
	return out, "", nil
}

// get checks everything the image refers to (layoutReader.check) before
// returning it: nothing of an image that fails is pushed.
func (o layoutOrigin) get(context.Context) (artifact, error) {
	if !o.desc.MediaType.IsIndex() && !o.desc.MediaType.IsImage() {
		return artifact{}, fmt.Errorf("unsupported media type %s", Quote(string(o.desc.MediaType)))
	}
	if err := o.r.check(o.desc); err != nil {
		return artifact{}, err
	}
	if o.desc.MediaType.IsIndex() {
		idx, err := o.r.index(o.desc)
		return artifact{idx: idx}, err
	}
	img, err := o.r.image(o.desc)
	return artifact{img: img}, err
}

// layoutTarget writes into a layout (see ociDir): blobs concurrently,
// each through a temporary file; index.json under a lock, rewritten whole
// after each image. With arc set, it plans an archive instead
// (ExportArchive): arc records the blobs and descriptors, and writes the
// archive once every task has run.
type layoutTarget struct {
	dir  string
	dest string // Result.Destination: "oci:DIR", "oci-archive:FILE"
	arc  *archivePlan
	d    *ociDir
	r    *layoutReader
	mu   sync.Mutex
	im   v1.IndexManifest
	have map[string]v1.Descriptor // source -> descriptor in index.json
}

func (t *layoutTarget) downloads() bool { return true }

// open opens the layout, creating it when missing: oci-layout,
// index.json, blobs/ and blobs/sha256/ must be what they say, never links.
func (t *layoutTarget) open() error {
	d, err := openOCIDir(t.dir, true)
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", t.dir, err)
	}
	t.d, t.r = d, &layoutReader{d: layoutFS{d}}
	if err := t.init(); err != nil {
		d.Close()
		return err
	}
	return nil
}

func (t *layoutTarget) init() error {
	_, err := t.d.lstat("oci-layout")
	switch {
	case err == nil:
		if err := t.r.checkLayoutFile(); err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := t.d.writeFile("oci-layout", []byte(layoutVersion)); err != nil {
			return err
		}
	default:
		return err
	}
	_, err = t.d.lstat("index.json")
	switch {
	case err == nil:
		raw, err := t.r.d.readFile("index.json", MaxManifestSize)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &t.im); err != nil {
			return fmt.Errorf("%s: not an index: %v", t.d.show("index.json"), err)
		}
	case errors.Is(err, fs.ErrNotExist):
		t.im = v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{}}
		if err := t.writeIndex(); err != nil {
			return err
		}
	default:
		return err
	}
	if err := t.d.mkdirs("blobs/sha256"); err != nil {
		return err
	}
	t.have = map[string]v1.Descriptor{}
	for _, d := range t.im.Manifests {
		if k := layoutKey(d.Annotations); k != "" {
			t.have[k] = d
		}
	}
	return nil
}

// layoutKey is what identifies a descriptor of index.json: its source
// reference, or for a chart its name and version (a reference has no
// space).
func layoutKey(a map[string]string) string {
	if name := a[AnnotationChart]; name != "" {
		return "chart " + name + " " + a[AnnotationChartVersion]
	}
	return a[AnnotationSource]
}

// jobKey is the layoutKey of the descriptor a job writes.
func jobKey(j Job) string {
	if j.Chart != nil {
		return "chart " + j.Chart.Name + " " + j.Chart.Version
	}
	return j.Source
}

func (t *layoutTarget) close() { t.d.Close() }

func (t *layoutTarget) current(_ context.Context, it item) (*v1.Descriptor, error) {
	if t.arc != nil {
		// An archive is new: each task writes all it needs, so that what
		// it holds does not depend on which task ran first.
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.have[jobKey(it.Job)]
	if !ok {
		return nil, nil
	}
	if it.verified != d.Annotations[AnnotationVerifiedKey] && it.att == nil {
		// Written again to record the key that verifies it now.
		return nil, nil
	}
	if c := it.Chart; c != nil {
		// The same chart recorded as relocated for another mapping (or
		// not relocated) is written again, to record what it is now.
		var r Relocation
		if c.Relocated != nil {
			r = *c.Relocated
		}
		if d.Annotations[AnnotationChartRegistry] != r.Registry || d.Annotations[AnnotationChartPathStyle] != string(r.PathStyle) {
			return nil, nil
		}
	}
	return &d, nil
}

// indexOf reads the index h that index.json lists.
func (t *layoutTarget) indexOf(_ context.Context, _ item, h v1.Hash) (v1.ImageIndex, error) {
	if t.arc != nil {
		return nil, fmt.Errorf("index %s: an archive being written is not read back", h)
	}
	t.mu.Lock()
	var found *v1.Descriptor
	for _, d := range t.im.Manifests {
		if d.Digest == h {
			d := d
			found = &d
			break
		}
	}
	t.mu.Unlock()
	if found == nil {
		return nil, fmt.Errorf("index %s: not in %s", h, t.d.show("index.json"))
	}
	return t.r.index(*found)
}

// attached stores an attachment in the same layout; the target recorded
// is the attachment's place beside the image's target.
func (t *layoutTarget) attached(j Job, f found) (target, string, string, error) {
	ref := ""
	if repo := repoOf(j.Target); repo != "" {
		if f.referrer() {
			ref = repo + "@" + f.desc.Digest.String()
		} else {
			ref = repo + ":" + f.tag
		}
	}
	return t, ref, t.dest, nil
}

func (t *layoutTarget) put(ctx context.Context, it item, a artifact) error {
	j := it.Job
	var d *v1.Descriptor
	var err error
	if t.arc != nil {
		ctx = t.arc.itemContext(ctx, it)
	}
	switch {
	case a.idx != nil:
		if err = t.writeIndexBlobs(ctx, a.idx, 1); err == nil {
			d, err = partial.Descriptor(a.idx)
		}
	case a.img != nil:
		if err = t.writeImage(ctx, a.img); err == nil {
			d, err = partial.Descriptor(a.img)
		}
	default:
		err = fmt.Errorf("media type %s cannot be stored in an OCI layout", Quote(string(a.raw.MediaType)))
	}
	if err != nil {
		return err
	}
	desc := *d
	desc.Platform = nil // the descriptor of an index child; not an index.json property
	desc.Annotations = map[string]string{
		AnnotationSource: j.Source,
		AnnotationTarget: j.Target,
	}
	if c := j.Chart; c != nil {
		desc.Annotations[AnnotationChart] = c.Name
		desc.Annotations[AnnotationChartVersion] = c.Version
		if r := c.Relocated; r != nil {
			desc.Annotations[AnnotationChartRegistry] = r.Registry
			desc.Annotations[AnnotationChartPathStyle] = string(r.PathStyle)
		}
	} else if it.att == nil || !it.att.referrer() {
		// An image or a cosign tag: a tagged manifest.
		desc.Annotations[AnnotationRefName] = j.Source
		desc.Annotations[AnnotationContainerdName] = j.Source
	}
	if it.verified != "" {
		desc.Annotations[AnnotationVerifiedKey] = it.verified
	}
	if it.att != nil {
		desc.Annotations[AnnotationAttachment] = string(it.att.kind)
		desc.Annotations[AnnotationSubject] = it.att.subject.String()
		if it.att.desc != nil && it.att.desc.ArtifactType != "" {
			desc.ArtifactType = it.att.desc.ArtifactType
		}
	}
	if t.arc != nil {
		return t.arc.record(ctx, desc)
	}
	return t.addDesc(jobKey(j), desc)
}

// addDesc puts desc in index.json, in the place of the descriptor of the
// same key, and writes index.json (into a directory).
func (t *layoutTarget) addDesc(key string, desc v1.Descriptor) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.im.Manifests[:0:0]
	for _, d := range t.im.Manifests {
		if layoutKey(d.Annotations) != key {
			kept = append(kept, d)
		}
	}
	t.im.Manifests = append(kept, desc)
	if t.arc == nil {
		if err := t.writeIndex(); err != nil {
			return err
		}
	}
	t.have[key] = desc
	return nil
}

// blobJobs is how many blobs of an image are written at once.
const blobJobs = 4

// writeImage writes the layers, config and manifest of img.
func (t *layoutTarget) writeImage(ctx context.Context, img v1.Image) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blobJobs)
	for _, l := range layers {
		g.Go(func() error { return t.writeLayer(gctx, l) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	if err := t.writeBytes(ctx, cfgName, cfg); err != nil {
		return err
	}
	h, err := img.Digest()
	if err != nil {
		return err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	return t.writeBytes(ctx, h, raw)
}

func (t *layoutTarget) writeLayer(ctx context.Context, l v1.Layer) error {
	h, err := l.Digest()
	if err != nil {
		return err
	}
	size, err := l.Size()
	if err != nil {
		return err
	}
	if t.arc != nil {
		// A foreign layer may be served from its URLs only: it is read
		// as the layer reads it, not fetched again by digest.
		mt, err := l.MediaType()
		if err != nil {
			return err
		}
		return t.arc.blob(ctx, h, size, l.Compressed, mt.IsDistributable())
	}
	return t.writeBlob(ctx, h, size, l.Compressed)
}

// writeBlob stores a blob: in the directory, or in the archive's plan.
func (t *layoutTarget) writeBlob(ctx context.Context, h v1.Hash, size int64, open func() (io.ReadCloser, error)) error {
	if t.arc != nil {
		return t.arc.blob(ctx, h, size, open, true)
	}
	return t.d.writeBlob(ctx, h, size, open)
}

// writeBytes stores a blob held in memory (a manifest, an index, a
// config).
func (t *layoutTarget) writeBytes(ctx context.Context, h v1.Hash, b []byte) error {
	if t.arc != nil {
		return t.arc.bytes(ctx, h, b)
	}
	return t.writeBlob(ctx, h, int64(len(b)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
}

// writeIndexBlobs writes what idx lists (images, indexes, other blobs),
// then idx itself; depth bounds the nesting (MaxIndexDepth).
func (t *layoutTarget) writeIndexBlobs(ctx context.Context, idx v1.ImageIndex, depth int) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			if depth >= MaxIndexDepth {
				return fmt.Errorf("index %s: %w (more than %d)", d.Digest, ErrTooDeep, MaxIndexDepth)
			}
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return err
			}
			if err := t.writeIndexBlobs(ctx, child, depth+1); err != nil {
				return err
			}
		case d.MediaType.IsImage():
			img, err := idx.Image(d.Digest)
			if err != nil {
				return err
			}
			if err := t.writeImage(ctx, img); err != nil {
				return err
			}
		default:
			wl, ok := idx.(interface {
				Layer(v1.Hash) (v1.Layer, error)
			})
			if !ok {
				return fmt.Errorf("index child %s: media type %s cannot be read", d.Digest, Quote(string(d.MediaType)))
			}
			l, err := wl.Layer(d.Digest)
			if err != nil {
				return err
			}
			if err := t.writeBlob(ctx, d.Digest, d.Size, l.Compressed); err != nil {
				return err
			}
		}
	}
	h, err := idx.Digest()
	if err != nil {
		return err
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return err
	}
	return t.writeBytes(ctx, h, raw)
}

// writeIndex writes index.json, sorted by source (charts by name and
// version), so that a layout written twice from the same images is the
// same whatever order the jobs finished in. The caller holds t.mu (or is
// alone).
func (t *layoutTarget) writeIndex() error {
	raw, err := t.indexJSON()
	if err != nil {
		return err
	}
	return t.d.writeFile("index.json", raw)
}

// indexJSON is the content of index.json: its descriptors sorted by
// source (charts by name and version). The caller holds t.mu (or is
// alone).
func (t *layoutTarget) indexJSON() ([]byte, error) {
	sort.SliceStable(t.im.Manifests, func(i, j int) bool {
		return layoutKey(t.im.Manifests[i].Annotations) < layoutKey(t.im.Manifests[j].Annotations)
	})
	return json.MarshalIndent(t.im, "", "   ")
}

// flush writes index.json a last time.
func (t *layoutTarget) flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.writeIndex()
}
