package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/pkg/rewrite"
)

// importDocker pushes the images of a docker save archive (a manifest.json
// listing each image's config, layers and RepoTags): each RepoTags entry
// to the target the mapper gives it. The archive is read in place by
// go-containerregistry's tarball package, through the checked index.
func (m *Mirror) importDocker(ctx context.Context, t *tarIndex, mapper *rewrite.Mapper) (Summary, error) {
	fsys := layoutFS{t}
	raw, err := fsys.readFile("manifest.json", MaxManifestSize)
	if err != nil {
		return Summary{}, m.secrets.safe(err)
	}
	var mf tarball.Manifest
	if err := json.Unmarshal(raw, &mf); err != nil {
		return Summary{}, fmt.Errorf("%s: not a docker save manifest: %v", t.show("manifest.json"), err)
	}
	opener := func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(t.r, 0, t.size)), nil
	}
	// A tag listed by two images would be read as the first one's.
	count := map[string]int{}
	for _, d := range mf {
		for _, tag := range d.RepoTags {
			if r, err := name.NewTag(tag); err == nil {
				count[r.Name()]++
			}
		}
	}
	var tasks []task
	var notices []notice
	for i, d := range mf {
		at := fmt.Sprintf("%s manifest.json[%d]", t.where(), i)
		checked := t.checkDockerImage(d)
		if len(d.RepoTags) == 0 {
			tasks = append(tasks, task{Job: Job{Source: at + " (config " + Quote(d.Config) + ")"}, err: fmt.Errorf("no RepoTags: nothing says what the image is called, so it has no target")})
			continue
		}
		img := &dockerImage{opener: opener}
		for _, tag := range d.RepoTags {
			tk, skip := m.dockerTask(tag, at, img, count, checked, mapper)
			if skip != "" {
				notices = append(notices, notice{tk.Job, skip})
				continue
			}
			tasks = append(tasks, tk)
		}
	}
	return m.run(ctx, m.batch(tasks, notices), nil), nil
}

// dockerTask is the task that pushes the image img, listed in manifest.json
// (at) with the RepoTags entry tag, or the reason it is not pushed.
// count counts the images that list each tag; checked is the image's
// check (checkDockerImage).
func (m *Mirror) dockerTask(tag, at string, img *dockerImage, count map[string]int, checked error, mapper *rewrite.Mapper) (tk task, skip string) {
	tk = task{Job: Job{Source: tag}, origin: dockerOrigin{img: img, tag: tag}}
	mp, err := mapper.Map(tag)
	if err != nil {
		tk.err = fmt.Errorf("%s: RepoTags: %w", at, err)
		return tk, ""
	}
	tk.Job.Source = mp.Source.Qualified()
	if mp.Action != rewrite.Rewritten {
		return tk, fmt.Sprintf("not pushed: the mapping leaves it where it is (%s)", mp.Action)
	}
	tk.Job.Target = mp.Target.Qualified()
	tk.dest = tk.Job.Target
	r, err := name.NewTag(tag)
	switch {
	case err != nil:
		tk.err = fmt.Errorf("%s: RepoTags: %v", at, err)
	case count[r.Name()] > 1:
		tk.err = fmt.Errorf("%s: the tag %s is listed by %d images of the archive", at, Quote(tag), count[r.Name()])
	case checked != nil:
		tk.err = checked
	}
	if tk.err != nil {
		return tk, ""
	}
	dst, via, err := m.parseTarget(tk.Job.Target)
	if err != nil {
		tk.err = err
		return tk, ""
	}
	tk.target, tk.via = registryTarget{m: m, ref: dst}, via
	return tk, ""
}

// checkDockerImage checks an image of manifest.json before anything of it
// is read: its config is a regular file of at most MaxConfigSize, its
// layers regular files.
func (t *tarIndex) checkDockerImage(d tarball.Descriptor) error {
	at := func(p string) string { c, _ := cleanEntryName(p); return c }
	cfg := at(d.Config)
	e, ok := t.entries[cfg]
	switch {
	case d.Config == "" || !ok:
		return fmt.Errorf("%s: manifest.json names the config %s, which the archive does not hold", t.where(), Quote(d.Config))
	case e.dir:
		return fmt.Errorf("%s: %w (a directory)", t.show(cfg), ErrNotRegular)
	case e.size > MaxConfigSize:
		return fmt.Errorf("%s: %s, %w of %s", t.show(cfg), bytesize.Fixed(e.size), ErrTooLarge, bytesize.Fixed(MaxConfigSize))
	}
	for _, l := range d.Layers {
		e, ok := t.entries[at(l)]
		switch {
		case !ok:
			return fmt.Errorf("%s: manifest.json names the layer %s, which the archive does not hold", t.where(), Quote(l))
		case e.dir:
			return fmt.Errorf("%s: %w (a directory)", t.show(at(l)), ErrNotRegular)
		}
	}
	return nil
}

// dockerImage is an image of a docker save archive, read once (its
// digest is computed from its layers).
type dockerImage struct {
	opener tarball.Opener
	once   sync.Once
	img    v1.Image
	err    error
}

func (d *dockerImage) get(tag string) (v1.Image, error) {
	d.once.Do(func() {
		var t name.Tag
		if t, d.err = name.NewTag(tag); d.err != nil {
			return
		}
		d.img, d.err = tarball.Image(d.opener, &t)
	})
	return d.img, d.err
}

// dockerOrigin reads an image of a docker save archive by one of its
// RepoTags. It has no attachments.
type dockerOrigin struct {
	img *dockerImage
	tag string
}

func (o dockerOrigin) digest(context.Context) (v1.Hash, error) {
	img, err := o.img.get(o.tag)
	if err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

func (o dockerOrigin) describe(context.Context) (v1.Descriptor, error) {
	img, err := o.img.get(o.tag)
	if err != nil {
		return v1.Descriptor{}, err
	}
	d, err := partial.Descriptor(img)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return *d, nil
}

func (o dockerOrigin) get(context.Context) (artifact, error) {
	img, err := o.img.get(o.tag)
	return artifact{img: img}, err
}

func (o dockerOrigin) indexOf(context.Context, v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("%s is an image, not an index", Quote(o.tag))
}

func (o dockerOrigin) attachments(context.Context, *runState, v1.Hash) ([]found, string, error) {
	return nil, "", nil
}

func (o dockerOrigin) pinned(v1.Hash) origin { return o }
