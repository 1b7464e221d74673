package mirror

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Docker's annotations that tie an attestation manifest (provenance, SBOM)
// to the image manifest it describes.
const (
	annotationRefType   = "vnd.docker.reference.type"
	annotationRefDigest = "vnd.docker.reference.digest"
	attestationManifest = "attestation-manifest"
)

// narrow keeps the manifests of idx whose platform satisfies one of
// platforms, and the attestation manifests of those. It returns idx itself
// when everything is kept, and an error when nothing is.
func narrow(idx v1.ImageIndex, platforms []v1.Platform) (out v1.ImageIndex, kept, total int, err error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, 0, 0, err
	}
	keep := map[v1.Hash]bool{}
	var have []string
	for _, d := range im.Manifests {
		if d.Platform == nil {
			continue
		}
		have = append(have, d.Platform.String())
		for _, p := range platforms {
			if d.Platform.Satisfies(p) {
				keep[d.Digest] = true
				break
			}
		}
	}
	if len(keep) == 0 {
		want := make([]string, len(platforms))
		for i, p := range platforms {
			want[i] = p.String()
		}
		return nil, 0, len(im.Manifests), fmt.Errorf("no manifest for platform %s in the index (it has %s)", strings.Join(want, ", "), strings.Join(have, ", "))
	}
	for _, d := range im.Manifests {
		if d.Annotations[annotationRefType] != attestationManifest {
			continue
		}
		if h, err := v1.NewHash(d.Annotations[annotationRefDigest]); err == nil && keep[h] {
			keep[d.Digest] = true
		}
	}
	for _, d := range im.Manifests {
		if keep[d.Digest] {
			kept++
		}
	}
	if kept == len(im.Manifests) {
		return idx, kept, kept, nil
	}
	return mutate.RemoveManifests(idx, func(d v1.Descriptor) bool { return !keep[d.Digest] }), kept, len(im.Manifests), nil
}
