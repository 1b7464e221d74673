package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/pkg/rewrite"
)

const (
	bundleType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	spdxType   = "application/spdx+json"
)

// artifactImage is a small OCI artifact: a config of the given media type
// and one layer holding content.
func artifactImage(t testing.TB, configType, content string) v1.Image {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.MediaType(configType))
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(content), types.MediaType(configType))})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// tagAttach pushes a cosign-style attachment of subject under the tag
// "sha256-<hex>.<suffix>" of repo and returns its digest.
func tagAttach(t testing.TB, repo, subject, suffix string) string {
	t.Helper()
	h, err := v1.NewHash(subject)
	if err != nil {
		t.Fatal(err)
	}
	return push(t, repo+":"+h.Algorithm+"-"+h.Hex+"."+suffix, artifactImage(t, "application/vnd.dev.cosign.artifact."+suffix+".v1+json", suffix+" of "+subject))
}

// referrer pushes an OCI 1.1 referrer of the manifest repo@subject, by
// digest; go-containerregistry keeps the referrers tag schema up to date
// when the registry has no referrers API. It returns the digest.
func referrer(t testing.TB, repo, subject, artifactType string, ann map[string]string) string {
	t.Helper()
	r, err := name.ParseReference(repo + "@" + subject)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatalf("subject %s: %v", r, err)
	}
	img := artifactImage(t, artifactType, artifactType+" for "+subject+fmt.Sprint(ann))
	if len(ann) > 0 {
		img = mutate.Annotations(img, ann).(v1.Image)
	}
	// After the annotations: mutate.Annotations drops a subject.
	img = mutate.Subject(img, v1.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size}).(v1.Image)
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dr, _ := name.NewDigest(repo + "@" + h.String())
	if err := remote.Write(dr, img); err != nil {
		t.Fatalf("push referrer of %s: %v", subject, err)
	}
	return h.String()
}

// referrersOf lists the digests of the referrers of repo@subject, as a
// client (cosign) would: API, else tag schema.
func referrersOf(t testing.TB, repo, subject string) []string {
	t.Helper()
	d, err := name.NewDigest(repo + "@" + subject)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Referrers(d)
	if err != nil {
		t.Fatalf("referrers of %s: %v", d, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range im.Manifests {
		out = append(out, m.Digest.String())
	}
	sort.Strings(out)
	return out
}

func fallbackTagOf(subject string) string {
	h, _ := v1.NewHash(subject)
	return h.Algorithm + "-" + h.Hex
}

func sorted(s ...string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// attachmentsBy indexes the attachments of a summary by source.
func attachmentsBy(s Summary) map[string]Attachment {
	out := map[string]Attachment{}
	for _, r := range s.Results {
		for _, a := range r.Attachments {
			out[a.Source] = a
		}
	}
	return out
}

func TestAttachmentsCosignTags(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	app := src.host + "/team/app"
	d := push(t, app+":1.0", randomImage(t, 256, 1))
	other := push(t, app+":2.0", randomImage(t, 256, 1)) // not mirrored
	want := map[string]string{}                          // tag -> digest
	for _, suffix := range []string{"sig", "att", "sbom", "custom"} {
		want[fallbackTagOf(d)+"."+suffix] = tagAttach(t, app, d, suffix)
	}
	otherSig := tagAttach(t, app, other, "sig")
	src.resetLog()

	s := newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Copied != 1 || s.Attachments != (Counts{Copied: 4}) {
		t.Fatalf("%d images copied, attachments %+v; want 1 and 4 copied", s.Copied, s.Attachments)
	}
	kinds := map[string]AttachmentKind{"sig": Signature, "att": Attestation, "sbom": SBOM, "custom": Artifact}
	got := attachmentsBy(s)
	for tag, digest := range want {
		a, ok := got[app+":"+tag]
		if !ok {
			t.Errorf("%s: not reported (%v)", tag, got)
			continue
		}
		suffix := tag[strings.LastIndex(tag, ".")+1:]
		if a.Kind != kinds[suffix] || a.Referrer || a.Subject != d || a.Digest != digest || a.Destination != dst.host+"/team/app:"+tag {
			t.Errorf("%s: reported %+v", tag, a)
		}
		if h := head(t, dst.host+"/team/app:"+tag); h != digest {
			t.Errorf("%s: target has %q, want %s", tag, h, digest)
		}
	}
	if h := head(t, dst.host+"/team/app:"+fallbackTagOf(other)+".sig"); h != "" || otherSig == "" {
		t.Errorf("the signature of an image not mirrored was copied")
	}
	// One listing of the repository's tags.
	if n := src.count(http.MethodGet, `/tags/list`); n != 1 {
		t.Errorf("%d tag listings, want 1", n)
	}

	// Signatures only.
	dst2 := newTestRegistry(t)
	s = newMirror(t, Options{Attachments: AttachmentsSignatures}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst2.host + "/team/app:1.0"}})
	if s.Err() != nil || s.Attachments != (Counts{Copied: 1}) {
		t.Fatalf("signatures only: attachments %+v, %v", s.Attachments, s.Err())
	}
	if head(t, dst2.host+"/team/app:"+fallbackTagOf(d)+".sig") == "" || head(t, dst2.host+"/team/app:"+fallbackTagOf(d)+".att") != "" {
		t.Error("signatures only: want the .sig and not the .att")
	}

	// None: no listing at all.
	dst3 := newTestRegistry(t)
	src.resetLog()
	s = newMirror(t, Options{Attachments: AttachmentsNone}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst3.host + "/team/app:1.0"}})
	if s.Err() != nil || s.Copied != 1 || len(s.Results[0].Attachments) != 0 {
		t.Fatalf("none: %+v", s)
	}
	if n := src.count(http.MethodGet, `/tags/list|/referrers/|/manifests/sha256-`); n != 0 {
		t.Errorf("none: %d listing requests", n)
	}
}

func TestAttachmentsReferrers(t *testing.T) {
	for _, c := range []struct{ srcAPI, dstAPI bool }{{false, false}, {true, true}, {false, true}, {true, false}} {
		t.Run(fmt.Sprintf("source-api=%v/target-api=%v", c.srcAPI, c.dstAPI), func(t *testing.T) {
			src := newTestRegistry(t, registry.WithReferrersSupport(c.srcAPI))
			dst := newTestRegistry(t, registry.WithReferrersSupport(c.dstAPI))
			app := src.host + "/team/app"
			d := push(t, app+":1.0", randomImage(t, 256, 1))
			sig := referrer(t, app, d, bundleType, map[string]string{sigstorePredicateType: cosignSignPredicate})
			sbom := referrer(t, app, d, spdxType, nil)
			// The source stores them as it should: a fallback tag only
			// without the API.
			if got := head(t, app+":"+fallbackTagOf(d)) != ""; got == c.srcAPI {
				t.Fatalf("source fallback tag present: %v, with API %v", got, c.srcAPI)
			}

			s := newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if s.Attachments != (Counts{Copied: 2}) {
				t.Fatalf("attachments %+v, want 2 copied", s.Attachments)
			}
			got := attachmentsBy(s)
			if a := got[app+"@"+sig]; a.Kind != Signature || !a.Referrer || a.Subject != d || a.Destination != dst.host+"/team/app@"+sig {
				t.Errorf("signature reported as %+v", a)
			}
			if a := got[app+"@"+sbom]; a.Kind != SBOM || !a.Referrer {
				t.Errorf("sbom reported as %+v", a)
			}
			// The target lists both, through its API or the tag schema,
			// exactly as the distribution spec says.
			if r, w := referrersOf(t, dst.host+"/team/app", d), sorted(sig, sbom); strings.Join(r, ",") != strings.Join(w, ",") {
				t.Errorf("target referrers %v, want %v", r, w)
			}
			fallback := head(t, dst.host+"/team/app:"+fallbackTagOf(d))
			if c.dstAPI && fallback != "" {
				t.Error("a fallback tag was written to a registry with the referrers API")
			}
			if !c.dstAPI && fallback == "" {
				t.Error("no fallback tag on a registry without the referrers API")
			}
			for _, r := range []string{sig, sbom} {
				if head(t, dst.host+"/team/app@"+r) != r {
					t.Errorf("referrer %s missing in the target", r)
				}
			}

			// Re-run: present, so skipped, and nothing is written.
			dst.resetLog()
			s = newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
			if s.Err() != nil || s.Skipped != 1 || s.Attachments != (Counts{Skipped: 2}) {
				t.Errorf("re-run: %d skipped, attachments %+v, %v", s.Skipped, s.Attachments, s.Err())
			}
			for _, m := range []string{http.MethodPut, http.MethodPost, http.MethodPatch} {
				if n := dst.count(m, "."); n != 0 {
					t.Errorf("re-run: %d %s requests to the target", n, m)
				}
			}
		})
	}
}

func TestAttachmentsIndexChildren(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	app := src.host + "/team/app"
	idx := randomIndex(t, 256, 1, "linux/amd64", "linux/arm64")
	d := push(t, app+":1.0", idx)
	im, _ := idx.IndexManifest()
	amd, arm := im.Manifests[0].Digest.String(), im.Manifests[1].Digest.String()
	indexSig := tagAttach(t, app, d, "sig")
	amdSig := tagAttach(t, app, amd, "sig")
	armSig := tagAttach(t, app, arm, "sig")
	amdRef := referrer(t, app, amd, bundleType, map[string]string{sigstorePredicateType: "https://slsa.dev/provenance/v1"})
	job := Job{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}

	s := newMirror(t, Options{}).Copy(context.Background(), []Job{job})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Attachments != (Counts{Copied: 4}) {
		t.Fatalf("attachments %+v, want 4 copied", s.Attachments)
	}
	for tag, want := range map[string]string{fallbackTagOf(d) + ".sig": indexSig, fallbackTagOf(amd) + ".sig": amdSig, fallbackTagOf(arm) + ".sig": armSig} {
		if got := head(t, dst.host+"/team/app:"+tag); got != want {
			t.Errorf("%s: target %q, want %s", tag, got, want)
		}
	}
	if got := referrersOf(t, dst.host+"/team/app", amd); len(got) != 1 || got[0] != amdRef {
		t.Errorf("referrers of the amd64 manifest in the target: %v, want %s", got, amdRef)
	}
	if a := attachmentsBy(s)[app+"@"+amdRef]; a.Kind != Attestation || a.Subject != amd {
		t.Errorf("per-platform attestation reported as %+v", a)
	}

	// --platform: the index's own signature cannot be valid for the
	// narrowed copy: one warning, and the kept platform's attachments are
	// still copied.
	dst2 := newTestRegistry(t)
	amd64, _ := v1.ParsePlatform("linux/amd64")
	ev := &events{}
	s = newMirror(t, Options{Platforms: []v1.Platform{*amd64}, Reporter: ev}).Copy(context.Background(), []Job{{Source: job.Source, Target: dst2.host + "/team/app:1.0"}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Attachments != (Counts{Copied: 2}) {
		t.Errorf("narrowed: attachments %+v, want 2 copied (amd64 signature and attestation)", s.Attachments)
	}
	n := 0
	for _, w := range ev.warnings {
		if strings.Contains(w, "cannot be valid for the narrowed copy") {
			n++
			if !strings.Contains(w, "1 attachments") || !strings.Contains(w, d) {
				t.Errorf("warning %q should count 1 attachment of %s", w, d)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d warnings about the index's attachments, want 1: %q", n, ev.warnings)
	}
	if head(t, dst2.host+"/team/app:"+fallbackTagOf(amd)+".sig") != amdSig {
		t.Error("narrowed: the amd64 signature was not copied")
	}
	if head(t, dst2.host+"/team/app:"+fallbackTagOf(arm)+".sig") != "" || head(t, dst2.host+"/team/app:"+fallbackTagOf(d)+".sig") != "" {
		t.Error("narrowed: the arm64 or index signature was copied")
	}
}

func TestAttachmentsOfAttachments(t *testing.T) {
	for _, api := range []bool{false, true} {
		t.Run(fmt.Sprintf("api=%v", api), func(t *testing.T) {
			src := newTestRegistry(t, registry.WithReferrersSupport(api))
			dst := newTestRegistry(t, registry.WithReferrersSupport(api))
			app := src.host + "/team/app"
			d := push(t, app+":1.0", randomImage(t, 256, 1))
			sbom := tagAttach(t, app, d, "sbom")
			sbomSig := tagAttach(t, app, sbom, "sig") // a signature of the SBOM
			att := referrer(t, app, d, bundleType, map[string]string{sigstorePredicateType: "https://spdx.dev/Document"})
			attSig := referrer(t, app, att, notarySignature, nil) // a signature of the referrer

			s := newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if s.Attachments != (Counts{Copied: 4}) {
				t.Fatalf("attachments %+v, want 4 copied", s.Attachments)
			}
			got := attachmentsBy(s)
			if a := got[app+":"+fallbackTagOf(sbom)+".sig"]; a.Subject != sbom || a.Kind != Signature || a.Digest != sbomSig {
				t.Errorf("signature of the SBOM reported as %+v", a)
			}
			if a := got[app+"@"+attSig]; a.Subject != att || a.Kind != Signature {
				t.Errorf("signature of the referrer reported as %+v", a)
			}
			if head(t, dst.host+"/team/app:"+fallbackTagOf(sbom)+".sig") != sbomSig {
				t.Error("the signature of the SBOM is not in the target")
			}
			if r := referrersOf(t, dst.host+"/team/app", att); len(r) != 1 || r[0] != attSig {
				t.Errorf("referrers of the referrer in the target: %v, want %s", r, attSig)
			}
		})
	}
}

func TestAttachmentsMissingAndFailed(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	plain := push(t, src.host+"/team/plain:1", randomImage(t, 256, 1))
	app := src.host + "/team/app"
	d := push(t, app+":1.0", randomImage(t, 256, 1))
	sig := tagAttach(t, app, d, "sig")
	tagAttach(t, app, d, "att")
	_ = plain

	// No attachment: not an error, nothing reported.
	s := newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: src.host + "/team/plain:1", Target: dst.host + "/team/plain:1"}})
	if s.Err() != nil || s.Copied != 1 || len(s.Results[0].Attachments) != 0 || s.Attachments != (Counts{}) {
		t.Fatalf("an image without attachments: %+v, %v", s, s.Err())
	}

	// A signature that is there but cannot be read: the run fails, the
	// image and the other attachment are copied.
	src.setInject(func(r *http.Request) int {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/manifests/"+fallbackTagOf(d)+".sig") {
			return http.StatusInternalServerError
		}
		return 0
	})
	s = newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
	if s.Copied != 1 || s.Failed != 0 || s.Attachments != (Counts{Copied: 1, Failed: 1}) {
		t.Fatalf("%d copied, %d failed, attachments %+v; want 1, 0, 1 copied 1 failed", s.Copied, s.Failed, s.Attachments)
	}
	err := s.Err()
	var ae *AttachmentError
	if !errors.As(err, &ae) || ae.Attachment.Kind != Signature || !strings.Contains(err.Error(), fallbackTagOf(d)+".sig") || !strings.Contains(err.Error(), "500") {
		t.Errorf("Err() = %v, want an AttachmentError naming the signature", err)
	}
	// The next run copies it, and skips the rest.
	src.setInject(nil)
	s = newMirror(t, Options{}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
	if s.Err() != nil || s.Skipped != 1 || s.Attachments != (Counts{Copied: 1, Skipped: 1}) {
		t.Errorf("re-run: %d skipped, attachments %+v, %v", s.Skipped, s.Attachments, s.Err())
	}
	if head(t, dst.host+"/team/app:"+fallbackTagOf(d)+".sig") != sig {
		t.Error("the signature was not copied by the re-run")
	}
}

// TestAttachmentsRerun: a re-run with attachments reads no manifest or
// blob content and writes nothing; it lists the tags of each repository
// once and probes the referrers API of the source once.
func TestAttachmentsRerun(t *testing.T) {
	f := newFixture(t)
	app := f.src.host + "/team/app"
	tagAttach(t, app, f.digests[app+":1.0"], "sig")
	jobs := f.jobs(t, rewrite.Config{})
	if s := newMirror(t, Options{}).Copy(context.Background(), jobs); s.Err() != nil || s.Copied != 3 || s.Attachments != (Counts{Copied: 1}) {
		t.Fatalf("first run: %d copied, attachments %+v, %v", s.Copied, s.Attachments, s.Err())
	}
	f.src.resetLog()
	f.dst.resetLog()
	s := newMirror(t, Options{}).Copy(context.Background(), jobs)
	if s.Err() != nil || s.Skipped != 3 || s.Attachments != (Counts{Skipped: 1}) || s.Bytes != 0 {
		t.Fatalf("re-run: %d skipped, attachments %+v, %d bytes, %v", s.Skipped, s.Attachments, s.Bytes, s.Err())
	}
	for _, m := range []string{http.MethodPut, http.MethodPost, http.MethodPatch} {
		if n := f.dst.count(m, ".") + f.src.count(m, "."); n != 0 {
			t.Errorf("re-run: %d %s requests", n, m)
		}
	}
	if n := f.src.count(http.MethodGet, `/blobs/|/manifests/[^s]`); n != 0 {
		t.Errorf("re-run: %d GET requests for source content", n)
	}
	if n := f.src.count(http.MethodGet, `/tags/list`); n != 3 {
		t.Errorf("re-run: %d tag listings, want one per repository (3)", n)
	}
	// The registry has no referrers API: learnt once (and go-containerregistry
	// then tries the fallback tag once), not per image.
	if n := f.src.count(http.MethodGet, `/referrers/`); n != 1 {
		t.Errorf("re-run: %d referrers API requests, want 1", n)
	}
	if n := f.src.count(http.MethodGet, `/manifests/sha256-`); n != 1 {
		t.Errorf("re-run: %d fallback tag requests, want 1", n)
	}
}

func TestAttachmentsDryRun(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	app := src.host + "/team/app"
	idx := randomIndex(t, 256, 1, "linux/amd64", "linux/arm64")
	d := push(t, app+":1.0", idx)
	im, _ := idx.IndexManifest()
	child := im.Manifests[1].Digest.String()
	sig := tagAttach(t, app, d, "sig")
	childSig := tagAttach(t, app, child, "sig")
	ref := referrer(t, app, d, spdxType, nil)
	src.resetLog()

	s := newMirror(t, Options{DryRun: true}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Planned != 1 || s.Attachments != (Counts{Planned: 3}) {
		t.Fatalf("%d planned, attachments %+v; want 1 and 3 planned", s.Planned, s.Attachments)
	}
	got := attachmentsBy(s)
	for src, want := range map[string]string{app + ":" + fallbackTagOf(d) + ".sig": sig, app + ":" + fallbackTagOf(child) + ".sig": childSig, app + "@" + ref: ref} {
		if a := got[src]; a.Status != Planned || a.Digest != want || !strings.HasPrefix(a.Destination, dst.host+"/team/app") {
			t.Errorf("%s: planned as %+v", src, a)
		}
	}
	if len(dst.reqs) != 0 {
		t.Errorf("a dry run asked the target: %v", dst.reqs)
	}
	for _, m := range []string{http.MethodPut, http.MethodPost, http.MethodPatch} {
		if n := src.count(m, "."); n != 0 {
			t.Errorf("a dry run wrote: %d %s", n, m)
		}
	}
	if r := s.Results[0]; len(s.Results) != 1 || r.Status != Planned || r.Source != app+":1.0" || r.Destination != dst.host+"/team/app:1.0" || len(r.Attachments) != 3 {
		t.Errorf("plan %+v", s.Results)
	}
	if a := got[app+":"+fallbackTagOf(d)+".sig"]; a.Kind != Signature || a.Destination != dst.host+"/team/app:"+fallbackTagOf(d)+".sig" {
		t.Errorf("the signature is planned as %+v", a)
	}
	if !s.DryRun || !s.ListedAttachments || s.Planned != 1 || s.Failed != 0 || s.Attachments != (Counts{Planned: 3}) {
		t.Errorf("summary: dry run %v, listed attachments %v, %d planned, %d failed, attachments %+v", s.DryRun, s.ListedAttachments, s.Planned, s.Failed, s.Attachments)
	}
}

func TestAttachmentsLayoutRoundTrip(t *testing.T) {
	src := newTestRegistry(t)
	app := src.host + "/team/app"
	idx := randomIndex(t, 256, 1, "linux/amd64", "linux/arm64")
	d := push(t, app+":1.0", idx)
	im, _ := idx.IndexManifest()
	child := im.Manifests[0].Digest.String()
	sig := tagAttach(t, app, d, "sig")
	childSig := tagAttach(t, app, child, "sig")
	att := referrer(t, app, d, bundleType, map[string]string{sigstorePredicateType: "https://slsa.dev/provenance/v1"})
	attSig := tagAttach(t, app, att, "sig")
	dir := filepath.Join(t.TempDir(), "bundle")
	jobs := []Job{{Source: app + ":1.0", Target: "sea.hub:5000/team/app:1.0"}}

	s, err := newMirror(t, Options{}).Export(context.Background(), jobs, dir)
	if err != nil || s.Err() != nil || s.Copied != 1 || s.Attachments != (Counts{Copied: 4}) {
		t.Fatalf("export: %d copied, attachments %+v, %v, %v", s.Copied, s.Attachments, err, s.Err())
	}
	// index.json: the image, its cosign tags as tagged manifests, the
	// referrer by digest, each attachment with its subject.
	byDigest := map[string]v1.Descriptor{}
	for _, desc := range layoutIndex(t, dir).Manifests {
		byDigest[desc.Digest.String()] = desc
	}
	if len(byDigest) != 5 {
		t.Fatalf("index.json has %d manifests, want 5", len(byDigest))
	}
	for digest, want := range map[string][3]string{
		sig:      {"signature", d, app + ":" + fallbackTagOf(d) + ".sig"},
		childSig: {"signature", child, app + ":" + fallbackTagOf(child) + ".sig"},
		att:      {"attestation", d, app + "@" + att},
		attSig:   {"signature", att, app + ":" + fallbackTagOf(att) + ".sig"},
	} {
		a := byDigest[digest].Annotations
		if a[AnnotationAttachment] != want[0] || a[AnnotationSubject] != want[1] || a[AnnotationSource] != want[2] {
			t.Errorf("%s: annotations %v, want %v", digest, a, want)
		}
		if strings.Contains(want[2], "@") == (a[AnnotationRefName] != "") {
			t.Errorf("%s: ref name %q: cosign tags are tagged manifests, referrers are not", digest, a[AnnotationRefName])
		}
	}
	// The referrer's manifest in the layout names its subject.
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(att)
	raw, err := p.Bytes(h)
	if err != nil || !strings.Contains(string(raw), `"subject"`) || !strings.Contains(string(raw), d) {
		t.Errorf("referrer manifest in the layout: %s, %v", raw, err)
	}

	// Re-export: skipped.
	s, err = newMirror(t, Options{}).Export(context.Background(), jobs, dir)
	if err != nil || s.Skipped != 1 || s.Attachments != (Counts{Skipped: 4}) || s.Bytes != 0 {
		t.Errorf("re-export: %d skipped, attachments %+v, %d bytes, %v", s.Skipped, s.Attachments, s.Bytes, err)
	}

	for _, api := range []bool{false, true} {
		t.Run(fmt.Sprintf("import/api=%v", api), func(t *testing.T) {
			dst := newTestRegistry(t, registry.WithReferrersSupport(api))
			mp := mapper(t, rewrite.Config{Registry: dst.host + "/offline"})
			s, err := newMirror(t, Options{}).Import(context.Background(), dir, mp)
			if err != nil || s.Err() != nil || s.Copied != 1 || s.Attachments != (Counts{Copied: 4}) || len(s.Results) != 1 {
				t.Fatalf("import: %d results, %d copied, attachments %+v, %v, %v", len(s.Results), s.Copied, s.Attachments, err, s.Err())
			}
			repo := dst.host + "/offline/team/app"
			if head(t, repo+":1.0") != d {
				t.Error("image missing after import")
			}
			for tag, want := range map[string]string{fallbackTagOf(d) + ".sig": sig, fallbackTagOf(child) + ".sig": childSig, fallbackTagOf(att) + ".sig": attSig} {
				if got := head(t, repo+":"+tag); got != want {
					t.Errorf("%s: %q after import, want %s", tag, got, want)
				}
			}
			if r := referrersOf(t, repo, d); len(r) != 1 || r[0] != att {
				t.Errorf("referrers after import: %v, want %s", r, att)
			}
			s, err = newMirror(t, Options{}).Import(context.Background(), dir, mp)
			if err != nil || s.Skipped != 1 || s.Attachments != (Counts{Skipped: 4}) {
				t.Errorf("re-import: %d skipped, attachments %+v, %v", s.Skipped, s.Attachments, err)
			}
		})
	}

	// Attachments whose image left the layout are named, not pushed.
	p, err = layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveDescriptors(func(desc v1.Descriptor) bool { return desc.Digest.String() == d }); err != nil {
		t.Fatal(err)
	}
	dst := newTestRegistry(t)
	ev := &events{}
	s, err = newMirror(t, Options{Reporter: ev}).Import(context.Background(), dir, mapper(t, rewrite.Config{Registry: dst.host}))
	if err != nil || len(s.Results) != 0 || s.Err() != nil {
		t.Fatalf("import without the image: %d results, %v, %v", len(s.Results), err, s.Err())
	}
	if n := strings.Count(strings.Join(ev.warnings, "\n"), "not pushed: this "); n != 4 {
		t.Errorf("%d warnings about orphaned attachments, want 4: %q", n, ev.warnings)
	}
	if n := dst.count(http.MethodPut, "."); n != 0 {
		t.Errorf("%d PUT requests for orphaned attachments", n)
	}
}

// TestAttachmentsRequestCost: looking for attachments of images that have
// none costs one tag listing per repository, plus one probe of the
// referrers API (and go-containerregistry's fallback tag request) per
// registry and run.
func TestAttachmentsRequestCost(t *testing.T) {
	const images = 6
	src := newTestRegistry(t)
	var jobs []Job
	for i := 0; i < images; i++ {
		ref := fmt.Sprintf("%s/team/app%d:1", src.host, i)
		push(t, ref, randomImage(t, 128, 1))
		jobs = append(jobs, Job{Source: ref})
	}
	requests := func(mode Attachments) int {
		dst := newTestRegistry(t)
		js := make([]Job, len(jobs))
		for i, j := range jobs {
			js[i] = Job{Source: j.Source, Target: dst.host + strings.TrimPrefix(j.Source, src.host)}
		}
		src.resetLog()
		if s := newMirror(t, Options{Attachments: mode}).Copy(context.Background(), js); s.Err() != nil || s.Copied != images {
			t.Fatalf("%s: %d copied, %v", mode, s.Copied, s.Err())
		}
		src.mu.Lock()
		defer src.mu.Unlock()
		return len(src.reqs) + len(dst.reqs)
	}
	none, all := requests(AttachmentsNone), requests(AttachmentsAll)
	if extra := all - none; extra != images+2 {
		t.Errorf("looking for attachments added %d requests for %d images, want %d (a tag listing each, one referrers probe)", extra, images, images+2)
	}
}

// TestAttachmentsBundleKind: cosign's fallback tag lists its sigstore
// bundles without their annotations; whether a bundle signs or attests is
// read from its manifest, so that AttachmentsSignatures keeps the
// signature and leaves the attestation.
func TestAttachmentsBundleKind(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	app := src.host + "/team/app"
	d := push(t, app+":1.0", randomImage(t, 256, 1))
	sig := referrer(t, app, d, bundleType, map[string]string{sigstorePredicateType: cosignSignPredicate, sigstoreBundleContent: "dsse-envelope"})
	att := referrer(t, app, d, bundleType, map[string]string{sigstorePredicateType: "https://slsa.dev/provenance/v1", sigstoreBundleContent: "dsse-envelope"})
	// Rewrite the fallback tag as cosign writes it: artifact types, no
	// annotations.
	var descs []v1.Descriptor
	for _, r := range []string{sig, att} {
		h, _ := v1.NewHash(r)
		descs = append(descs, v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: int64(len(rawManifest(t, app+"@"+r))), ArtifactType: bundleType})
	}
	raw, _ := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: descs})
	tag, _ := name.NewTag(app + ":" + fallbackTagOf(d))
	if err := remote.Put(tag, rawIndex(raw)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rawManifest(t, tag.String())), "annotations") {
		t.Fatal("the fallback tag still has annotations")
	}

	s := newMirror(t, Options{Attachments: AttachmentsSignatures}).Copy(context.Background(), []Job{{Source: app + ":1.0", Target: dst.host + "/team/app:1.0"}})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Attachments != (Counts{Copied: 1}) {
		t.Fatalf("attachments %+v, want the signature only", s.Attachments)
	}
	if a := attachmentsBy(s)[app+"@"+sig]; a.Kind != Signature || a.Status != Copied {
		t.Errorf("signature bundle reported as %+v", a)
	}
	if got := referrersOf(t, dst.host+"/team/app", d); len(got) != 1 || got[0] != sig {
		t.Errorf("target referrers %v, want the signature %s only", got, sig)
	}
}

// rawIndex is an index manifest pushed as it is.
type rawIndex []byte

func (r rawIndex) RawManifest() ([]byte, error)        { return r, nil }
func (r rawIndex) MediaType() (types.MediaType, error) { return types.OCIImageIndex, nil }

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		d    v1.Descriptor
		want AttachmentKind
	}{
		{v1.Descriptor{ArtifactType: bundleType, Annotations: map[string]string{sigstorePredicateType: cosignSignPredicate}}, Signature},
		{v1.Descriptor{ArtifactType: bundleType, Annotations: map[string]string{sigstoreBundleContent: "message-signature"}}, Signature},
		{v1.Descriptor{ArtifactType: bundleType, Annotations: map[string]string{sigstorePredicateType: "https://slsa.dev/provenance/v1"}}, Attestation},
		{v1.Descriptor{ArtifactType: bundleType, Annotations: map[string]string{sigstorePredicateType: "https://cyclonedx.org/bom"}}, SBOM},
		{v1.Descriptor{ArtifactType: bundleType}, Attestation},
		{v1.Descriptor{ArtifactType: notarySignature}, Signature},
		{v1.Descriptor{ArtifactType: "application/vnd.dev.cosign.artifact.sig.v1+json"}, Signature},
		{v1.Descriptor{ArtifactType: spdxType}, SBOM},
		{v1.Descriptor{ArtifactType: "application/vnd.cyclonedx+json"}, SBOM},
		{v1.Descriptor{ArtifactType: "application/vnd.in-toto+json"}, Attestation},
		{v1.Descriptor{ArtifactType: "application/vnd.example.thing"}, Artifact},
		{v1.Descriptor{}, Artifact},
	} {
		if got := kindOfReferrer(c.d); got != c.want {
			t.Errorf("kindOfReferrer(%s %v) = %s, want %s", c.d.ArtifactType, c.d.Annotations, got, c.want)
		}
	}
	for suffix, want := range map[string]AttachmentKind{"sig": Signature, "att": Attestation, "sbom": SBOM, "vex": Artifact} {
		if got := kindOfTag(suffix); got != want {
			t.Errorf("kindOfTag(%s) = %s, want %s", suffix, got, want)
		}
	}
	hex := strings.Repeat("ab", 32)
	ti := newTagIndex([]string{"1.0", "latest", "sha256-" + hex, "sha256-" + hex + ".sig", "sha256-" + hex + ".att", "sha256-" + hex + ".", "sha256-nothex.sig", "sha256-" + hex[:10] + ".sig", "sha512-" + hex + ".sig"})
	if !ti.fallback["sha256-"+hex] || len(ti.fallback) != 1 {
		t.Errorf("fallback tags %v", ti.fallback)
	}
	if got := strings.Join(ti.suffixes["sha256-"+hex], ","); got != "sig,att" || len(ti.suffixes) != 1 {
		t.Errorf("cosign suffixes %v", ti.suffixes)
	}
	for _, s := range []string{"all", "signatures", "none"} {
		if a, err := ParseAttachments(s); err != nil || string(a) != s {
			t.Errorf("ParseAttachments(%q) = %q, %v", s, a, err)
		}
	}
	if _, err := ParseAttachments("sigs"); err == nil {
		t.Error("ParseAttachments accepted sigs")
	}
	if _, err := New(Options{Attachments: "some"}); err == nil {
		t.Error("New accepted Attachments some")
	}
}

// TestAttachmentRefSpelling: attachments are named as rehost spells their
// image's repository (docker.io, not go-containerregistry's
// index.docker.io), so that a layout's attachments match their image on
// import.
func TestAttachmentRefSpelling(t *testing.T) {
	r, err := parseRef("docker.io/library/nginx:1.25", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.at("sha256-abc.sig", "").String(); got != "docker.io/library/nginx:sha256-abc.sig" {
		t.Errorf("cosign tag reference %q", got)
	}
	if got := r.at("", "sha256:"+strings.Repeat("a", 64)).String(); got != "docker.io/library/nginx@sha256:"+strings.Repeat("a", 64) {
		t.Errorf("referrer reference %q", got)
	}
	if repoOf(r.at("sha256-abc.sig", "").String()) != repoOf("docker.io/library/nginx:1.25") {
		t.Error("an attachment's repository differs from its image's")
	}
}
