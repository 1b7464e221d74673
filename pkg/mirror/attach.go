package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Attachments says which artifacts attached to an image are copied with
// it: signatures, attestations, SBOMs and other OCI 1.1 referrers.
type Attachments string

const (
	// AttachmentsAll copies every attachment; the empty value means the
	// same.
	AttachmentsAll Attachments = "all"
	// AttachmentsSignatures copies signatures only (cosign's ".sig" tags,
	// sigstore bundles that sign, Notary signatures).
	AttachmentsSignatures Attachments = "signatures"
	// AttachmentsNone copies images only, and makes no request to find
	// attachments.
	AttachmentsNone Attachments = "none"
)

// ParseAttachments parses "all", "signatures" or "none".
func ParseAttachments(s string) (Attachments, error) {
	switch a := Attachments(s); a {
	case AttachmentsAll, AttachmentsSignatures, AttachmentsNone:
		return a, nil
	}
	return "", fmt.Errorf("attachments %q: want all, signatures or none", s)
}

// AttachmentKind says what an attachment is.
type AttachmentKind string

const (
	Signature   AttachmentKind = "signature"
	Attestation AttachmentKind = "attestation"
	SBOM        AttachmentKind = "sbom"
	// Artifact is any other attachment: an unknown cosign tag suffix or
	// referrer artifact type.
	Artifact AttachmentKind = "artifact"
)

// Attachment is the outcome of copying one artifact attached to an image.
type Attachment struct {
	Kind AttachmentKind `json:"kind"`
	// Source is where the attachment was read: "repo:sha256-<hex>.sig"
	// for cosign's tag scheme, "repo@sha256:…" for an OCI 1.1 referrer.
	Source string `json:"source"`
	// Destination is where it was written, in the same form, or "oci:DIR".
	Destination string `json:"destination"`
	// Subject is the digest the attachment is attached to: the image, one
	// of the manifests of an index, or another attachment.
	Subject string `json:"subject"`
	// Referrer is true for an OCI 1.1 referrer (found with the referrers
	// API or its tag schema), false for a cosign tag.
	Referrer bool   `json:"referrer"`
	Status   Status `json:"status"`
	// Digest is the attachment's digest, when known.
	Digest string `json:"digest,omitempty"`
	// Err is set when Status is Failed.
	Err error `json:"-"`
}

// Well-known artifact types of OCI 1.1 referrers.
const (
	sigstoreBundlePrefix   = "application/vnd.dev.sigstore.bundle"
	sigstorePredicateType  = "dev.sigstore.bundle.predicateType"
	sigstoreBundleContent  = "dev.sigstore.bundle.content"
	cosignSignPredicate    = "https://sigstore.dev/cosign/sign/v1"
	notarySignature        = "application/vnd.cncf.notary.signature"
	cosignSignatureArtType = "application/vnd.dev.cosign.artifact.sig.v1+json"
)

// kindOfTag classifies a cosign tag by its suffix ("sig", "att", "sbom").
func kindOfTag(suffix string) AttachmentKind {
	switch suffix {
	case "sig":
		return Signature
	case "att":
		return Attestation
	case "sbom":
		return SBOM
	}
	return Artifact
}

// kindOfReferrer classifies a referrer by its artifact type and
// annotations.
func kindOfReferrer(d v1.Descriptor) AttachmentKind {
	at := strings.ToLower(d.ArtifactType)
	switch {
	case strings.HasPrefix(at, sigstoreBundlePrefix):
		pt := d.Annotations[sigstorePredicateType]
		if pt == cosignSignPredicate || d.Annotations[sigstoreBundleContent] == "message-signature" {
			return Signature
		}
		if strings.Contains(pt, "spdx") || strings.Contains(pt, "cyclonedx") {
			return SBOM
		}
		return Attestation
	case at == notarySignature, at == cosignSignatureArtType, strings.Contains(at, "signature"):
		return Signature
	case strings.Contains(at, "spdx"), strings.Contains(at, "cyclonedx"), strings.Contains(at, "sbom"), strings.Contains(at, "syft"):
		return SBOM
	case strings.Contains(at, "in-toto"), strings.Contains(at, "dsse"), strings.Contains(at, "attestation"), strings.Contains(at, "provenance"):
		return Attestation
	}
	return Artifact
}

// found is an attachment found for a subject.
type found struct {
	kind    AttachmentKind
	subject v1.Hash
	tag     string         // cosign tag ("sha256-<hex>.sig"); "" for a referrer
	desc    *v1.Descriptor // a referrer's descriptor
	src     string         // the source reference, for reports
	origin  origin         // where to read it
}

func (f found) referrer() bool { return f.tag == "" }

// wanted says whether mode copies an attachment of kind k.
func wanted(mode Attachments, k AttachmentKind) bool {
	switch mode {
	case AttachmentsNone:
		return false
	case AttachmentsSignatures:
		return k == Signature
	}
	return true
}

// tagPrefix is the tag-scheme form of a digest: "sha256-<hex>". It is the
// referrers fallback tag, and cosign's tags are it plus ".sig", ".att", ….
func tagPrefix(h v1.Hash) string { return h.Algorithm + "-" + h.Hex }

// tagIndex is a repository's tag list indexed by digest.
type tagIndex struct {
	suffixes map[string][]string // "sha256-<hex>" -> cosign suffixes ("sig", …)
	fallback map[string]bool     // "sha256-<hex>" tags (referrers tag schema)
}

func newTagIndex(tags []string) *tagIndex {
	ti := &tagIndex{suffixes: map[string][]string{}, fallback: map[string]bool{}}
	for _, t := range tags {
		alg, rest, ok := strings.Cut(t, "-")
		if !ok || alg == "" {
			continue
		}
		hex, suffix, dotted := strings.Cut(rest, ".")
		if _, err := v1.NewHash(alg + ":" + hex); err != nil {
			continue
		}
		key := alg + "-" + hex
		if !dotted {
			ti.fallback[key] = true
		} else if suffix != "" {
			ti.suffixes[key] = append(ti.suffixes[key], suffix)
		}
	}
	return ti
}

// runState is what one run learns and shares between its jobs: the tag
// lists of source repositories, each read once.
type runState struct {
	mu   sync.Mutex
	tags map[string]*tagListing
}

type tagListing struct {
	once   sync.Once
	index  *tagIndex // nil when the listing was refused
	warn   string    // why it was refused
	err    error
	warned bool // the warning was given to a job
}

func (rs *runState) listing(repo string) *tagListing {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.tags == nil {
		rs.tags = map[string]*tagListing{}
	}
	l := rs.tags[repo]
	if l == nil {
		l = &tagListing{}
		rs.tags[repo] = l
	}
	return l
}

// refusal reports whether err is a registry refusing a request (not
// found, unauthorized, forbidden, not supported) rather than a failure.
func refusal(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	switch te.StatusCode {
	case http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusBadRequest:
		return true
	}
	return false
}

// tagIndex lists the tags of repo once per run. A registry that refuses
// the listing yields a nil index and a warning: the cosign tags, if any,
// cannot be found, which is not an error.
func (m *Mirror) tagIndex(ctx context.Context, rs *runState, repo name.Repository) (*tagIndex, string, error) {
	l := rs.listing(repo.String())
	l.once.Do(func() {
		ctx := uncounted(ctx)
		tags, err := m.puller.List(ctx, repo)
		switch {
		case err == nil:
			l.index = newTagIndex(tags)
		case refusal(err):
			l.warn = fmt.Sprintf("cannot list the tags of %s, so cosign signatures and attestations stored as tags are not copied: %v", repo, err)
		default:
			l.err = fmt.Errorf("listing the tags of %s for attachments: %w", repo, err)
		}
	})
	warn := ""
	rs.mu.Lock()
	if !l.warned {
		warn, l.warned = l.warn, true
	}
	rs.mu.Unlock()
	return l.index, warn, l.err
}

// referrersAPI tells whether a registry host serves the OCI 1.1
// referrers API, as learnt from the responses to earlier requests (see
// countingTransport); known is false until one was seen.
func (m *Mirror) referrersAPI(host string) (api, known bool) {
	v, ok := m.api.Load(strings.ToLower(host))
	if !ok {
		return false, false
	}
	return v.(bool), true
}

// referrers lists the OCI 1.1 referrers of h in repo: with the referrers
// API where the registry serves it, else from the referrers tag schema
// (go-containerregistry's remote.Referrers does both). Once a registry is
// known to lack the API, the tag list says whether the fallback tag exists,
// so that an image without referrers costs no request.
func (m *Mirror) referrers(ctx context.Context, repo name.Repository, h v1.Hash, ti *tagIndex) ([]v1.Descriptor, error) {
	api, known := m.referrersAPI(repo.RegistryStr())
	if !known {
		// One probe per registry at a time: the jobs running alongside
		// wait for its answer instead of probing too.
		mu, _ := m.probing.LoadOrStore(strings.ToLower(repo.RegistryStr()), &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
		api, known = m.referrersAPI(repo.RegistryStr())
	}
	if known && !api && ti != nil {
		if !ti.fallback[tagPrefix(h)] {
			return nil, nil
		}
		d, err := m.puller.Get(uncounted(ctx), repo.Tag(tagPrefix(h)))
		if err != nil {
			if refusal(err) {
				return nil, nil
			}
			return nil, err
		}
		if !d.MediaType.IsIndex() {
			return nil, nil
		}
		idx, err := d.ImageIndex()
		if err != nil {
			return nil, err
		}
		return subjectManifests(idx)
	}
	idx, err := remote.Referrers(repo.Digest(h.String()), remote.Reuse(m.puller), remote.WithContext(uncounted(ctx)))
	if err != nil {
		if refusal(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing the referrers of %s@%s: %w", repo, h, err)
	}
	return subjectManifests(idx)
}

func subjectManifests(idx v1.ImageIndex) ([]v1.Descriptor, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	return im.Manifests, nil
}
