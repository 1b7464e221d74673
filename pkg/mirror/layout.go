package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/rehost/rehost/pkg/rewrite"
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
)

// Export writes the source image of each job into the OCI image layout at
// dir, creating it when missing and adding to it otherwise. Each image's
// descriptor in index.json carries the source reference (AnnotationSource,
// AnnotationRefName, AnnotationContainerdName) and the target
// (AnnotationTarget); an image already there with the same digest is
// skipped, one whose source moved to another digest is replaced. A blob
// already in the layout is not written again. Attachments
// (Options.Attachments) get descriptors of their own in index.json, marked
// with AnnotationAttachment and AnnotationSubject: cosign tags as tagged
// manifests, referrers by digest. The returned error is about the layout
// itself; per-image failures are in the Summary.
func (m *Mirror) Export(ctx context.Context, jobs []Job, dir string) (Summary, error) {
	dest := &layoutTarget{dir: dir}
	if !m.opts.DryRun {
		if err := dest.open(); err != nil {
			return Summary{}, err
		}
	}
	tasks := make([]task, len(jobs))
	for i, j := range jobs {
		tasks[i] = task{Job: j, dest: "oci:" + dir, target: dest}
		src, err := parseRef(j.Source, m.insecure.has)
		if err != nil {
			tasks[i].err = err
			continue
		}
		tasks[i].origin = registryOrigin{m: m, ref: src}
	}
	s := m.run(ctx, tasks)
	if m.opts.DryRun {
		return s, nil
	}
	return s, dest.sort()
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
// tag schema). The returned error is about reading the layout; per-image
// failures are in the Summary.
func (m *Mirror) Import(ctx context.Context, dir string, mapper *rewrite.Mapper) (Summary, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: not an OCI image layout: %w", dir, err)
	}
	ii, err := p.ImageIndex()
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", dir, err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return Summary{}, fmt.Errorf("%s: index.json: %w", dir, err)
	}
	var tasks []task
	var notices []notice
	for i, d := range im.Manifests {
		if d.Annotations[AnnotationAttachment] != "" {
			continue // pushed with its image
		}
		src := layoutSource(d)
		t := task{Job: Job{Source: src}, origin: layoutOrigin{index: ii, desc: d, all: im.Manifests, repo: repoOf(src)}}
		if src == "" {
			t.Job.Source = fmt.Sprintf("%s index.json manifests[%d] (%s)", dir, i, d.Digest)
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
		dst, err := parseRef(t.Job.Target, m.insecure.has)
		if err != nil {
			t.err = err
		} else {
			t.target = registryTarget{m: m, ref: dst}
		}
		tasks = append(tasks, t)
	}
	if m.opts.Attachments != AttachmentsNone {
		notices = append(notices, orphans(ii, im.Manifests, tasks)...)
	}
	return m.run(ctx, tasks, notices...), nil
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
			out = append(out, notice{Job{Source: src}, fmt.Sprintf("not pushed: this %s is attached to %s, which is not an image of the layout", d.Annotations[AnnotationAttachment], d.Annotations[AnnotationSubject])})
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
	index v1.ImageIndex
	desc  v1.Descriptor
	all   []v1.Descriptor // index.json, for attachments
	repo  string          // the source repository of the image
}

func (o layoutOrigin) digest(context.Context) (v1.Hash, error) { return o.desc.Digest, nil }

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
			origin: layoutOrigin{index: o.index, desc: d, all: o.all, repo: o.repo}}
		if f.tag == "" {
			d := d
			f.desc = &d
		}
		out = append(out, f)
	}
	return out, "", nil
}

func (o layoutOrigin) get(context.Context) (artifact, error) {
	switch {
	case o.desc.MediaType.IsIndex():
		idx, err := o.index.ImageIndex(o.desc.Digest)
		return artifact{idx: idx}, err
	case o.desc.MediaType.IsImage():
		img, err := o.index.Image(o.desc.Digest)
		return artifact{img: img}, err
	}
	return artifact{}, fmt.Errorf("unsupported media type %s", o.desc.MediaType)
}

// layoutTarget writes into a layout. Blobs are written concurrently (the
// layout package writes layers to temporary files and renames them);
// index.json is read and rewritten under a lock.
type layoutTarget struct {
	dir  string
	path layout.Path
	mu   sync.Mutex
	have map[string]v1.Descriptor // source -> descriptor in index.json
}

func (t *layoutTarget) downloads() bool { return true }

func (t *layoutTarget) open() error {
	_, err := os.Stat(filepath.Join(t.dir, "index.json"))
	switch {
	case err == nil:
		t.path, err = layout.FromPath(t.dir)
	case errors.Is(err, fs.ErrNotExist):
		t.path, err = layout.Write(t.dir, empty.Index)
	}
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", t.dir, err)
	}
	ii, err := t.path.ImageIndex()
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", t.dir, err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", t.dir, err)
	}
	t.have = map[string]v1.Descriptor{}
	for _, d := range im.Manifests {
		if s := d.Annotations[AnnotationSource]; s != "" {
			t.have[s] = d
		}
	}
	return nil
}

func (t *layoutTarget) current(_ context.Context, it item) (*v1.Descriptor, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.have[it.Source]
	if !ok {
		return nil, nil
	}
	return &d, nil
}

func (t *layoutTarget) indexOf(_ context.Context, _ item, h v1.Hash) (v1.ImageIndex, error) {
	ii, err := t.path.ImageIndex()
	if err != nil {
		return nil, err
	}
	return ii.ImageIndex(h)
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
	return t, ref, "oci:" + t.dir, nil
}

func (t *layoutTarget) put(_ context.Context, it item, a artifact) error {
	j := it.Job
	var d *v1.Descriptor
	var err error
	switch {
	case a.idx != nil:
		if err = t.path.WriteIndex(a.idx); err == nil {
			d, err = partial.Descriptor(a.idx)
		}
	case a.img != nil:
		if err = t.path.WriteImage(a.img); err == nil {
			d, err = partial.Descriptor(a.img)
		}
	default:
		err = fmt.Errorf("media type %s cannot be stored in an OCI layout", a.raw.MediaType)
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
	if it.att == nil || !it.att.referrer() {
		// An image or a cosign tag: a tagged manifest.
		desc.Annotations[AnnotationRefName] = j.Source
		desc.Annotations[AnnotationContainerdName] = j.Source
	}
	if it.att != nil {
		desc.Annotations[AnnotationAttachment] = string(it.att.kind)
		desc.Annotations[AnnotationSubject] = it.att.subject.String()
		if it.att.desc != nil && it.att.desc.ArtifactType != "" {
			desc.ArtifactType = it.att.desc.ArtifactType
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.have[j.Source]; ok {
		if err := t.path.RemoveDescriptors(func(d v1.Descriptor) bool { return d.Annotations[AnnotationSource] == j.Source }); err != nil {
			return err
		}
	}
	if err := t.path.AppendDescriptor(desc); err != nil {
		return err
	}
	t.have[j.Source] = desc
	return nil
}

// sort orders index.json by source, so that a layout written twice from
// the same images is the same whatever order the jobs finished in.
func (t *layoutTarget) sort() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ii, err := t.path.ImageIndex()
	if err != nil {
		return err
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return err
	}
	sort.SliceStable(im.Manifests, func(i, j int) bool {
		return im.Manifests[i].Annotations[AnnotationSource] < im.Manifests[j].Annotations[AnnotationSource]
	})
	raw, err := json.MarshalIndent(im, "", "   ")
	if err != nil {
		return err
	}
	return t.path.WriteFile("index.json", raw, 0o644)
}
