package mirror

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// layoutReader reads the images of an OCI image layout, trusting nothing
// in it: no link is followed (ociDir), every manifest, index and config is
// bounded (MaxManifestSize, MaxConfigSize) and checked against its digest
// when read, and every layer against its size before it is read and its
// digest as it streams. check walks what an image refers to before any of
// it is pushed.
type layoutReader struct {
	d layoutFS
}

// openLayout opens the layout at dir for reading (see readLayout).
func openLayout(dir string) (*layoutReader, *ociIndex, error) {
	d, err := openOCIDir(dir, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not an OCI image layout: %w", dir, err)
	}
	return readLayout(d)
}

// readLayout opens the layout whose files src holds: oci-layout and
// index.json must be regular files, the latter at most MaxManifestSize.
// src is closed when it fails, else by the layoutReader.
func readLayout(src fileSource) (*layoutReader, *ociIndex, error) {
	r := &layoutReader{d: layoutFS{src}}
	if err := r.checkLayoutFile(); err != nil {
		src.Close()
		return nil, nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	raw, err := r.d.readFile("index.json", MaxManifestSize)
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	idx, err := r.newIndex(v1.Descriptor{MediaType: types.OCIImageIndex}, raw, "index.json")
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return r, idx, nil
}

// layoutFile is the content of the oci-layout file.
type layoutFile struct {
	Version string `json:"imageLayoutVersion"`
}

// checkLayoutFile checks the oci-layout file: a regular file naming a
// layout version.
func (r *layoutReader) checkLayoutFile() error {
	b, err := r.d.readFile("oci-layout", maxLayoutFile)
	if err != nil {
		return err
	}
	var lf layoutFile
	if err := json.Unmarshal(b, &lf); err != nil || lf.Version == "" {
		return fmt.Errorf("%s: no imageLayoutVersion", r.d.show("oci-layout"))
	}
	return nil
}

func (r *layoutReader) Close() error { return r.d.Close() }

// newIndex is the index whose raw manifest is raw; name is what messages
// call it.
func (r *layoutReader) newIndex(desc v1.Descriptor, raw []byte, name string) (*ociIndex, error) {
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		return nil, fmt.Errorf("%s: not an index: %v", name, err)
	}
	return &ociIndex{r: r, desc: desc, raw: raw, name: name}, nil
}

// index reads the index of desc (size and digest checked).
func (r *layoutReader) index(desc v1.Descriptor) (*ociIndex, error) {
	if !desc.MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: media type %s is not an index", r.d.show(blobPath(desc.Digest)), Quote(string(desc.MediaType)))
	}
	raw, err := r.d.readVerified(desc, MaxManifestSize)
	if err != nil {
		return nil, err
	}
	return r.newIndex(desc, raw, r.d.show(blobPath(desc.Digest)))
}

// image reads the image manifest of desc (size and digest checked).
func (r *layoutReader) image(desc v1.Descriptor) (v1.Image, error) {
	if !desc.MediaType.IsImage() {
		return nil, fmt.Errorf("%s: media type %s is not an image", r.d.show(blobPath(desc.Digest)), Quote(string(desc.MediaType)))
	}
	raw, err := r.d.readVerified(desc, MaxManifestSize)
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: not an image manifest: %v", r.d.show(blobPath(desc.Digest)), err)
	}
	return partial.CompressedToImage(&ociImage{r: r, desc: desc, raw: raw, m: m})
}

// check walks everything desc refers to, before any of it is pushed:
// each index is read (its declared and actual size bounded), parsed, its
// children checked for cycles and depth and walked, then its digest
// verified; each image manifest and config is read (bounded) and verified;
// each layer and other blob must be a regular file of its declared size
// (its content is verified as it is pushed).
func (r *layoutReader) check(desc v1.Descriptor) error {
	return r.checkNode(desc, nil, map[v1.Hash]bool{})
}

func (r *layoutReader) checkNode(desc v1.Descriptor, chain []v1.Hash, done map[v1.Hash]bool) error {
	if done[desc.Digest] {
		return nil
	}
	chain = append(chain, desc.Digest)
	switch {
	case desc.MediaType.IsIndex():
		raw, err := r.d.readBlob(desc, MaxManifestSize)
		if err != nil {
			return err
		}
		var im v1.IndexManifest
		if err := json.Unmarshal(raw, &im); err != nil {
			return fmt.Errorf("%s: not an index: %v", r.d.show(blobPath(desc.Digest)), err)
		}
		for _, c := range im.Manifests {
			for _, a := range chain {
				if c.Digest == a {
					return fmt.Errorf("%s: %w: %s", r.d.where(), ErrCycle, showChain(append(chain, c.Digest)))
				}
			}
			if c.MediaType.IsIndex() && len(chain) >= MaxIndexDepth {
				return fmt.Errorf("%s: %w (more than %d): %s", r.d.where(), ErrTooDeep, MaxIndexDepth, showChain(append(chain, c.Digest)))
			}
			if err := r.checkNode(c, chain, done); err != nil {
				return err
			}
		}
		// The digest last: a cycle (which only a blob that does not
		// match its digest can make) is reported as the cycle it is.
		if err := r.d.verify(desc.Digest, raw); err != nil {
			return err
		}
	case desc.MediaType.IsImage():
		img, err := r.image(desc)
		if err != nil {
			return err
		}
		m, err := img.Manifest()
		if err != nil {
			return err
		}
		if _, err := img.RawConfigFile(); err != nil {
			return err
		}
		for _, l := range m.Layers {
			if !l.MediaType.IsDistributable() {
				continue // a foreign layer: pushed by reference, never read
			}
			if err := r.d.statBlob(l); err != nil {
				return err
			}
		}
	default:
		if err := r.d.statBlob(desc); err != nil {
			return err
		}
	}
	done[desc.Digest] = true
	return nil
}

// showChain is "sha256:a → sha256:b → sha256:a".
func showChain(hs []v1.Hash) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return strings.Join(s, " → ")
}

// ociIndex is index.json or an index blob of a layout.
type ociIndex struct {
	r    *layoutReader
	desc v1.Descriptor // its descriptor; only the media type for index.json
	raw  []byte
	name string // for messages
}

var _ v1.ImageIndex = (*ociIndex)(nil)

func (i *ociIndex) MediaType() (types.MediaType, error) {
	if i.desc.MediaType == "" {
		return types.OCIImageIndex, nil
	}
	return i.desc.MediaType, nil
}

func (i *ociIndex) Digest() (v1.Hash, error) {
	if i.desc.Digest != (v1.Hash{}) {
		return i.desc.Digest, nil
	}
	return partial.Digest(i)
}

func (i *ociIndex) Size() (int64, error) { return int64(len(i.raw)), nil }

func (i *ociIndex) RawManifest() ([]byte, error) { return i.raw, nil }

// IndexManifest is parsed anew at each call: callers may change it.
func (i *ociIndex) IndexManifest() (*v1.IndexManifest, error) {
	var im v1.IndexManifest
	if err := json.Unmarshal(i.raw, &im); err != nil {
		return nil, fmt.Errorf("%s: %v", i.name, err)
	}
	return &im, nil
}

// Descriptor keeps the descriptor the index was read with.
func (i *ociIndex) Descriptor() (*v1.Descriptor, error) {
	if i.desc.Digest == (v1.Hash{}) {
		h, err := i.Digest()
		if err != nil {
			return nil, err
		}
		return &v1.Descriptor{MediaType: types.OCIImageIndex, Size: int64(len(i.raw)), Digest: h}, nil
	}
	d := i.desc
	return &d, nil
}

// child finds the descriptor of h among the index's manifests.
func (i *ociIndex) child(h v1.Hash) (v1.Descriptor, error) {
	im, err := i.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	for _, d := range im.Manifests {
		if d.Digest == h {
			return d, nil
		}
	}
	return v1.Descriptor{}, fmt.Errorf("%s lists no %s", i.name, h)
}

func (i *ociIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	d, err := i.child(h)
	if err != nil {
		return nil, err
	}
	return i.r.index(d)
}

func (i *ociIndex) Image(h v1.Hash) (v1.Image, error) {
	d, err := i.child(h)
	if err != nil {
		return nil, err
	}
	return i.r.image(d)
}

// Layer is a child that is neither an image nor an index (an attestation
// blob, say), pushed as a blob.
func (i *ociIndex) Layer(h v1.Hash) (v1.Layer, error) {
	d, err := i.child(h)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToLayer(&ociBlob{r: i.r, desc: d})
}

// ociImage is an image manifest of a layout.
type ociImage struct {
	r    *layoutReader
	desc v1.Descriptor
	raw  []byte
	m    *v1.Manifest
}

func (li *ociImage) MediaType() (types.MediaType, error) { return li.desc.MediaType, nil }

func (li *ociImage) RawManifest() ([]byte, error) { return li.raw, nil }

// RawConfigFile reads the config blob (bounded, digest checked).
func (li *ociImage) RawConfigFile() ([]byte, error) {
	return li.r.d.readVerified(li.m.Config, MaxConfigSize)
}

// Descriptor keeps the descriptor the image was read with (its platform).
func (li *ociImage) Descriptor() (*v1.Descriptor, error) {
	d := li.desc
	return &d, nil
}

func (li *ociImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h == li.m.Config.Digest {
		return &ociBlob{r: li.r, desc: li.m.Config}, nil
	}
	for _, l := range li.m.Layers {
		if l.Digest == h {
			return &ociBlob{r: li.r, desc: l}, nil
		}
	}
	return nil, fmt.Errorf("%s: the manifest lists no layer %s", li.r.d.show(blobPath(li.desc.Digest)), h)
}

// ociBlob is a layer or other blob of a layout, streamed and verified.
type ociBlob struct {
	r    *layoutReader
	desc v1.Descriptor
}

func (b *ociBlob) Digest() (v1.Hash, error)            { return b.desc.Digest, nil }
func (b *ociBlob) Size() (int64, error)                { return b.desc.Size, nil }
func (b *ociBlob) MediaType() (types.MediaType, error) { return b.desc.MediaType, nil }
func (b *ociBlob) Compressed() (io.ReadCloser, error)  { return b.r.d.openBlob(b.desc) }
