package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/rehost/rehost/pkg/rewrite"
)

// NotInMirrorError is an image its source mirror does not have, while
// Options.SourceMirrorOnly keeps rehost from its own registry.
type NotInMirrorError struct {
	// Mirror is the address the image was looked for at:
	// "mirror.corp:5000/dockerhub/library/nginx:1.25".
	Mirror string
	// Err is the mirror's answer (not found).
	Err error
}

func (e *NotInMirrorError) Error() string {
	return fmt.Sprintf("not in the source mirror (%s: %v), and its own registry is not asked (Options.SourceMirrorOnly)", e.Mirror, e.Err)
}

func (e *NotInMirrorError) Unwrap() error { return e.Err }

// sourceOrigin is where the image of job j is read from: its source
// registry, or its source mirror (Options.SourceMirrors) when a prefix
// covers it.
func (m *Mirror) sourceOrigin(j Job) (origin, error) {
	src, err := parseRef(j.Source, m.insecure.has)
	if err != nil {
		return nil, err
	}
	if m.opts.SourceMirrors.Len() == 0 {
		return registryOrigin{m: m, ref: src}, nil
	}
	r, err := rewrite.ParseRef(j.Source)
	if err != nil {
		return nil, err
	}
	mr, prefix, err := m.opts.SourceMirrors.Mirror(r)
	if err != nil {
		return nil, err
	}
	if prefix == "" {
		return registryOrigin{m: m, ref: src}, nil
	}
	var opts []name.Option
	if m.insecure.has(mr.Registry) {
		opts = append(opts, name.Insecure)
	}
	reg, err := name.NewRegistry(mr.Registry, opts...)
	if err != nil {
		return nil, fmt.Errorf("source mirror of %s: %w", j.Source, err)
	}
	// The mirror's repository under the source's name: what is read
	// comes from the mirror, what is reported and recorded (attachment
	// sources included) keeps the name of the source.
	mirrored := src
	mirrored.repo = reg.Repo(mr.Repository)
	return &mirroredOrigin{
		mirror: registryOrigin{m: m, ref: mirrored},
		source: registryOrigin{m: m, ref: src},
		only:   m.opts.SourceMirrorOnly,
		job:    j,
	}, nil
}

// mirroredOrigin reads an image from its source mirror, and from its own
// registry when the mirror does not have it (unless only): the first
// request decides, and the rest of the image (its index's manifests, its
// attachments) is read from where it was found. Only an answer that the
// image is not there (404, MANIFEST_UNKNOWN, NAME_UNKNOWN) sends rehost to
// its registry; any other failure of the mirror (refused credentials, an
// error, a policy that forbids the image) is the image's failure, so that
// a mirror that stands for a policy is not bypassed.
type mirroredOrigin struct {
	mirror, source registryOrigin
	only           bool
	job            Job
	decided        bool // a request answered: in the mirror, or fell back
	fellBack       bool // read from the source registry
}

// at is the origin the image is read from, once decided; the mirror
// until then.
func (o *mirroredOrigin) at() registryOrigin {
	if o.fellBack {
		return o.source
	}
	return o.mirror
}

// from is the address the image is read from: the mirror's, unless the
// image fell back to its own registry ("" then, the source itself).
func (o *mirroredOrigin) from() string {
	if o.fellBack {
		return ""
	}
	return o.mirror.ref.address()
}

// try runs f on the mirror and, when it does not have the image, on the
// source (unless only); later calls go where the first one succeeded.
func (o *mirroredOrigin) try(f func(registryOrigin) error) error {
	if o.decided {
		return f(o.at())
	}
	err := f(o.mirror)
	if err == nil || !notFound(err) {
		o.decided = err == nil
		return err
	}
	if o.only {
		return &NotInMirrorError{Mirror: o.mirror.ref.address(), Err: err}
	}
	if err := f(o.source); err != nil {
		return fmt.Errorf("not in the source mirror (%s), and from its own registry: %w", o.mirror.ref.address(), err)
	}
	o.decided, o.fellBack = true, true
	o.mirror.m.warn(o.job, fmt.Sprintf("not in the source mirror (%s): read from %s", o.mirror.ref.address(), o.source.ref))
	return nil
}

func (o *mirroredOrigin) digest(ctx context.Context) (v1.Hash, error) {
	if o.mirror.ref.digest != "" {
		// Known from the reference: no request, nothing decided.
		return v1.NewHash(o.mirror.ref.digest)
	}
	var h v1.Hash
	err := o.try(func(r registryOrigin) (err error) { h, err = r.digest(ctx); return err })
	return h, err
}

// pinned reads the image by digest h, from where it was decided.
func (o *mirroredOrigin) pinned(h v1.Hash) origin {
	o.mirror = o.mirror.pinned(h).(registryOrigin)
	o.source = o.source.pinned(h).(registryOrigin)
	return o
}

func (o *mirroredOrigin) describe(ctx context.Context) (v1.Descriptor, error) {
	var d v1.Descriptor
	err := o.try(func(r registryOrigin) (err error) { d, err = r.describe(ctx); return err })
	return d, err
}

func (o *mirroredOrigin) get(ctx context.Context) (artifact, error) {
	var a artifact
	err := o.try(func(r registryOrigin) (err error) { a, err = r.get(ctx); return err })
	return a, err
}

func (o *mirroredOrigin) indexOf(ctx context.Context, h v1.Hash) (v1.ImageIndex, error) {
	var idx v1.ImageIndex
	err := o.try(func(r registryOrigin) (err error) { idx, err = r.indexOf(ctx, h); return err })
	return idx, err
}

// attachments are looked for where the image was found: in the mirror
// (a pull-through cache serves the tags and referrers of its upstream),
// or in the source registry when the image fell back to it. An image
// whose copy needed no request (pinned by digest, present in the
// target) is looked for in the mirror first.
func (o *mirroredOrigin) attachments(ctx context.Context, rs *runState, h v1.Hash) ([]found, string, error) {
	if !o.decided {
		if _, err := o.describe(ctx); err != nil {
			return nil, "", err
		}
	}
	return o.at().attachments(ctx, rs, h)
}

// notFound reports whether err is a registry's answer that it does not
// have what was asked for.
func notFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}
