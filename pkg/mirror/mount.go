package mirror

import (
	"fmt"
	"io"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ledger remembers, per destination registry, one repository that holds
// each blob written during the run, so that a later image needing the same
// blob in another repository mounts it instead of uploading it again.
type ledger struct {
	mu    sync.Mutex
	blobs map[string]map[v1.Hash]name.Repository // registry -> blob -> repository
}

func (l *ledger) lookup(dst name.Repository, h v1.Hash) (name.Repository, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	repo, ok := l.blobs[dst.RegistryStr()][h]
	if !ok || repo.String() == dst.String() {
		return name.Repository{}, false
	}
	return repo, true
}

func (l *ledger) record(dst name.Repository, hs []v1.Hash) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.blobs == nil {
		l.blobs = map[string]map[v1.Hash]name.Repository{}
	}
	m := l.blobs[dst.RegistryStr()]
	if m == nil {
		m = map[v1.Hash]name.Repository{}
		l.blobs[dst.RegistryStr()] = m
	}
	for _, h := range hs {
		if _, ok := m[h]; !ok {
			m[h] = dst
		}
	}
}

// mounter wraps an image or index on its way to dst: layers the ledger
// knows in another repository of the same registry become
// remote.MountableLayer values pointing there, which go-containerregistry
// turns into a cross-repository mount (POST ?mount=…&from=…); it falls
// back to an upload when the registry refuses. It also notes every blob it
// hands out, for the ledger once the push succeeded.
type mounter struct {
	ledger *ledger
	dst    name.Repository

	mu   sync.Mutex
	seen []v1.Hash
}

func (m *mounter) commit() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ledger.record(m.dst, m.seen)
}

func (m *mounter) layer(l v1.Layer) v1.Layer {
	h, err := l.Digest()
	if err != nil {
		return l
	}
	l = named(l, h)
	m.mu.Lock()
	m.seen = append(m.seen, h)
	m.mu.Unlock()
	repo, ok := m.ledger.lookup(m.dst, h)
	if !ok {
		return l
	}
	if ml, ok := l.(*remote.MountableLayer); ok {
		l = ml.Layer
	}
	return &remote.MountableLayer{Layer: l, Reference: repo.Digest(h.String())}
}

func (m *mounter) image(img v1.Image) v1.Image { return &mountImage{Image: img, m: m} }

func (m *mounter) index(idx v1.ImageIndex) v1.ImageIndex { return &mountIndex{inner: idx, m: m} }

// named wraps a layer so that an error reading it names the blob (it
// would otherwise surface as the upload's error, naming only the upload).
// A remote.MountableLayer stays one, for go-containerregistry's mounts.
func named(l v1.Layer, h v1.Hash) v1.Layer {
	switch x := l.(type) {
	case *namedLayer:
		return l
	case *remote.MountableLayer:
		if _, ok := x.Layer.(*namedLayer); ok {
			return l
		}
		return &remote.MountableLayer{Layer: &namedLayer{Layer: x.Layer, h: h}, Reference: x.Reference}
	}
	return &namedLayer{Layer: l, h: h}
}

type namedLayer struct {
	v1.Layer
	h v1.Hash
}

func (l *namedLayer) Compressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", l.h, err)
	}
	return &namedReader{ReadCloser: rc, h: l.h}, nil
}

type namedReader struct {
	io.ReadCloser
	h v1.Hash
}

func (r *namedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("reading blob %s: %w", r.h, err)
	}
	return n, err
}

// mountImage is an image whose layers and config go through a mounter.
type mountImage struct {
	v1.Image
	m *mounter
}

func (i *mountImage) Layers() ([]v1.Layer, error) {
	ls, err := i.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for j, l := range ls {
		out[j] = i.m.layer(l)
	}
	return out, nil
}

func (i *mountImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := i.Image.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	return i.m.layer(l), nil
}

// ConfigLayer keeps the wrapped image's config layer (a mountable one for
// remote images).
func (i *mountImage) ConfigLayer() (v1.Layer, error) {
	l, err := partial.ConfigLayer(i.Image)
	if err != nil {
		return nil, err
	}
	return i.m.layer(l), nil
}

// Descriptor keeps the wrapped image's descriptor (platform included).
func (i *mountImage) Descriptor() (*v1.Descriptor, error) { return partial.Descriptor(i.Image) }

// mountIndex is an index whose children go through a mounter.
type mountIndex struct {
	inner v1.ImageIndex
	m     *mounter
}

func (i *mountIndex) MediaType() (types.MediaType, error)       { return i.inner.MediaType() }
func (i *mountIndex) Digest() (v1.Hash, error)                  { return i.inner.Digest() }
func (i *mountIndex) Size() (int64, error)                      { return i.inner.Size() }
func (i *mountIndex) IndexManifest() (*v1.IndexManifest, error) { return i.inner.IndexManifest() }
func (i *mountIndex) RawManifest() ([]byte, error)              { return i.inner.RawManifest() }

func (i *mountIndex) Image(h v1.Hash) (v1.Image, error) {
	img, err := i.inner.Image(h)
	if err != nil {
		return nil, err
	}
	return i.m.image(img), nil
}

func (i *mountIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	idx, err := i.inner.ImageIndex(h)
	if err != nil {
		return nil, err
	}
	return i.m.index(idx), nil
}

// Manifests keeps the wrapped index's children (images, indexes, and
// blobs such as signatures or SBOMs) and wraps them.
func (i *mountIndex) Manifests() ([]partial.Describable, error) {
	ms, err := partial.Manifests(i.inner)
	if err != nil {
		return nil, err
	}
	out := make([]partial.Describable, len(ms))
	for j, d := range ms {
		switch d := d.(type) {
		case v1.ImageIndex:
			out[j] = i.m.index(d)
		case v1.Image:
			out[j] = i.m.image(d)
		case v1.Layer:
			out[j] = i.m.layer(d)
		default:
			out[j] = d
		}
	}
	return out, nil
}

// Descriptor keeps the wrapped index's descriptor.
func (i *mountIndex) Descriptor() (*v1.Descriptor, error) { return partial.Descriptor(i.inner) }
