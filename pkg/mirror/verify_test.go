package mirror

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/rehost/rehost/pkg/rewrite"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// testKey is a key pair: the public key in PEM, and a signer as cosign
// signs (ECDSA over SHA-256, RSA PKCS #1 v1.5 over SHA-256, Ed25519 pure).
type testKey struct {
	pub  []byte
	sign func(msg []byte) []byte
}

func pubPEM(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func ecdsaKey(t testing.TB, c elliptic.Curve, h crypto.Hash) testKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{pub: pubPEM(t, &k.PublicKey), sign: func(msg []byte) []byte {
		var sum []byte
		if h == crypto.SHA384 {
			s := sha512.Sum384(msg)
			sum = s[:]
		} else {
			s := sha256.Sum256(msg)
			sum = s[:]
		}
		sig, err := ecdsa.SignASN1(rand.Reader, k, sum)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}}
}

func ed25519Key(t testing.TB) testKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{pub: pubPEM(t, pub), sign: func(msg []byte) []byte { return ed25519.Sign(priv, msg) }}
}

func rsaKey(t testing.TB, bits int) testKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{pub: pubPEM(t, &k.PublicKey), sign: func(msg []byte) []byte {
		s := sha256.Sum256(msg)
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, s[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}}
}

func (k testKey) verifyKey(t testing.TB, name string) *VerifyKey {
	t.Helper()
	vk, err := ParseVerifyKey(name, k.pub)
	if err != nil {
		t.Fatal(err)
	}
	return vk
}

// signTag attaches to repo@subject a cosign ".sig" tag whose
// simple-signing payload names signed, signed with k, as cosign sign
// --new-bundle-format=false writes it.
func signTag(t testing.TB, repo, subject, signed string, k testKey) {
	t.Helper()
	var p payload.SimpleContainerImage
	p.Critical.Identity.DockerReference = repo
	p.Critical.Image.DockerManifestDigest = signed
	p.Critical.Type = payload.CosignSignatureType
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(raw, "application/vnd.dev.cosign.simplesigning.v1+json"),
		Annotations: map[string]string{cosignSignatureAnnotation: base64.StdEncoding.EncodeToString(k.sign(raw))},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(subject)
	push(t, repo+":"+tagPrefix(h)+".sig", img)
}

// signBundle attaches to repo@subject a sigstore bundle as an OCI 1.1
// referrer: a DSSE envelope, signed with k, of an in-toto statement of
// cosign's sign predicate whose subject is signed, as cosign 3 sign
// writes it.
func signBundle(t testing.TB, repo, subject, signed string, k testKey) {
	t.Helper()
	sh, _ := v1.NewHash(signed)
	st := &intoto.Statement{
		Type:          intoto.StatementTypeUri,
		Subject:       []*intoto.ResourceDescriptor{{Digest: map[string]string{sh.Algorithm: sh.Hex}}},
		PredicateType: cosignSignPredicate,
		Predicate:     &structpb.Struct{},
	}
	pl, err := protojson.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	b := &protobundle.Bundle{
		MediaType: bundleType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: "test"}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload:     pl,
			PayloadType: inTotoPayloadType,
			Signatures:  []*protodsse.Signature{{Sig: k.sign(dsse.PAE(inTotoPayloadType, pl))}},
		}},
	}
	raw, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(repo + "@" + subject)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatal(err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	// The artifact type is the config's media type (go-containerregistry
	// writes no artifactType field; cosign writes both).
	img = mutate.ConfigMediaType(img, bundleType)
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(raw, bundleType)})
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.Annotations(img, map[string]string{sigstoreBundleContent: "dsse-envelope", sigstorePredicateType: cosignSignPredicate}).(v1.Image)
	img = mutate.Subject(img, v1.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size}).(v1.Image)
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dr, _ := name.NewDigest(repo + "@" + h.String())
	if err := remote.Write(dr, img); err != nil {
		t.Fatal(err)
	}
}

func TestParseVerifyKey(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, c := range []struct {
		name string
		pem  []byte
		want string // "" for a key that parses
	}{
		{"p256", ecdsaKey(t, elliptic.P256(), crypto.SHA256).pub, ""},
		{"p384", ecdsaKey(t, elliptic.P384(), crypto.SHA384).pub, ""},
		{"ed25519", ed25519Key(t).pub, ""},
		{"rsa", rsaKey(t, 2048).pub, ""},
		{"rsa1024", pubPEM(t, &small.PublicKey), "RSA key of 1024 bits"},
		{"private", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), "a private key"},
		{"cosign.key", []byte("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n"), "cosign.pub, not cosign.key"},
		{"certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}), "not a public key"},
		{"text", []byte("ssh-ed25519 AAAAC3Nza me@host\n"), "not a PEM public key"},
		{"empty", nil, "not a PEM public key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := ParseVerifyKey(c.name+".pem", c.pem)
			if c.want == "" {
				if err != nil || !strings.HasPrefix(k.ID, "sha256:") || len(k.ID) != len("sha256:")+64 {
					t.Fatalf("got %+v, %v", k, err)
				}
				return
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Name != c.name+".pem" || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name+".pem") {
				t.Fatalf("got %v, want a *KeyError naming the file and saying %q", err, c.want)
			}
		})
	}
}

// verifyFixture is a source registry holding images signed every way.
type verifyFixture struct {
	src, dst        *testRegistry
	keys            []*VerifyKey
	digests         map[string]string // name -> digest
	jobs            []Job
	ec, ed, p384, o testKey
}

func newVerifyFixture(t *testing.T, referrersAPI bool) *verifyFixture {
	f := &verifyFixture{
		src: newTestRegistry(t, registry.WithReferrersSupport(referrersAPI)), dst: newTestRegistry(t, registry.WithReferrersSupport(referrersAPI)),
		ec: ecdsaKey(t, elliptic.P256(), crypto.SHA256), ed: ed25519Key(t),
		p384: ecdsaKey(t, elliptic.P384(), crypto.SHA384), o: ecdsaKey(t, elliptic.P256(), crypto.SHA256),
		digests: map[string]string{},
	}
	f.keys = []*VerifyKey{f.ec.verifyKey(t, "ec.pub"), f.ed.verifyKey(t, "ed.pub"), f.p384.verifyKey(t, "p384.pub")}
	for _, n := range []string{"tag", "bundle", "index", "p384", "unsigned", "wrongkey", "elsewhere", "garbled"} {
		repo := f.src.host + "/team/" + n
		var x remote.Taggable = randomImage(t, 128, 1)
		if n == "index" {
			x = randomIndex(t, 128, 1, "linux/amd64", "linux/arm64")
		}
		f.digests[n] = push(t, repo+":1", x)
		f.jobs = append(f.jobs, Job{Source: repo + ":1", Target: f.dst.host + "/team/" + n + ":1"})
	}
	repo := func(n string) string { return f.src.host + "/team/" + n }
	signTag(t, repo("tag"), f.digests["tag"], f.digests["tag"], f.ec)
	signBundle(t, repo("bundle"), f.digests["bundle"], f.digests["bundle"], f.ed)
	signBundle(t, repo("index"), f.digests["index"], f.digests["index"], f.ec)
	signTag(t, repo("p384"), f.digests["p384"], f.digests["p384"], f.p384)
	signTag(t, repo("wrongkey"), f.digests["wrongkey"], f.digests["wrongkey"], f.o)
	signBundle(t, repo("wrongkey"), f.digests["wrongkey"], f.digests["wrongkey"], f.o)
	// A valid signature of another image, attached to this one.
	signTag(t, repo("elsewhere"), f.digests["elsewhere"], f.digests["tag"], f.ec)
	// A bundle that is not one, beside a tag with a garbled signature.
	referrer(t, repo("garbled"), f.digests["garbled"], bundleType, map[string]string{sigstorePredicateType: cosignSignPredicate})
	signTag(t, repo("garbled"), f.digests["garbled"], f.digests["garbled"], testKey{sign: func([]byte) []byte { return []byte("x") }})
	return f
}

func TestVerifyCopy(t *testing.T) {
	for _, api := range []bool{false, true} {
		t.Run(fmt.Sprintf("referrersAPI=%v", api), func(t *testing.T) { testVerifyCopy(t, api) })
	}
}

func testVerifyCopy(t *testing.T, api bool) {
	f := newVerifyFixture(t, api)
	ev := &events{}
	s := newMirror(t, Options{Verify: &Verify{Keys: f.keys}, Reporter: ev}).Copy(context.Background(), f.jobs)
	want := map[string]struct {
		verdict Verdict
		format  SignatureFormat
		key     string
	}{
		"tag":       {Verified, TagSignature, "ec.pub"},
		"bundle":    {Verified, BundleSignature, "ed.pub"},
		"index":     {Verified, BundleSignature, "ec.pub"},
		"p384":      {Verified, TagSignature, "p384.pub"},
		"unsigned":  {Unsigned, "", ""},
		"wrongkey":  {BadSignature, "", ""},
		"elsewhere": {OtherDigest, TagSignature, ""},
		"garbled":   {BadSignature, "", ""},
	}
	if s.Verified != 4 || s.Unverified != 4 || s.Copied != 4 || s.Failed != 4 {
		t.Errorf("summary: %d verified, %d unverified, %d copied, %d failed", s.Verified, s.Unverified, s.Copied, s.Failed)
	}
	for _, r := range s.Results {
		n := strings.TrimSuffix(r.Source[strings.LastIndex(r.Source, "/")+1:], ":1")
		w := want[n]
		v := r.Verification
		if v == nil || v.Verdict != w.verdict || v.Format != w.format || v.KeyName != w.key || v.Digest != f.digests[n] {
			t.Errorf("%s: verification %+v, want %+v", n, v, w)
			continue
		}
		got := head(t, r.Target)
		if w.verdict == Verified {
			if r.Status != Copied || got != f.digests[n] || v.Key == "" {
				t.Errorf("%s: %s, target %q, key %q: want copied", n, r.Status, got, v.Key)
			}
			continue
		}
		var ue *UnverifiedError
		if r.Status != Failed || got != "" || !errors.As(r.Err, &ue) || ue.Verification != v {
			t.Errorf("%s: %s, target %q, %v: want failed and not copied", n, r.Status, got, r.Err)
		}
		if r.Bytes != 0 || len(r.Attachments) != 0 {
			t.Errorf("%s: %d bytes, %d attachments copied", n, r.Bytes, len(r.Attachments))
		}
	}
	msgs := map[string]string{
		"unsigned":  "not copied: unsigned: no cosign signature of " + f.digests["unsigned"],
		"wrongkey":  "not copied: bad signature: no key given verifies the 2 signatures of " + f.digests["wrongkey"],
		"elsewhere": "not copied: signed for another digest: a signature attached to " + f.digests["elsewhere"] + " (sig tag) is of " + f.digests["tag"],
	}
	for _, r := range s.Results {
		n := strings.TrimSuffix(r.Source[strings.LastIndex(r.Source, "/")+1:], ":1")
		if m, ok := msgs[n]; ok && (r.Err == nil || r.Err.Error() != m) {
			t.Errorf("%s: %v, want %q", n, r.Err, m)
		}
	}
	// The signatures went with the verified images.
	if s.Attachments.Copied != 4 || s.Attachments.Failed != 0 {
		t.Errorf("attachments %+v, want 4 copied", s.Attachments)
	}
}

func TestVerifyWarn(t *testing.T) {
	f := newVerifyFixture(t, false)
	ev := &events{}
	s := newMirror(t, Options{Verify: &Verify{Keys: f.keys[:1], Warn: true}, Reporter: ev}).Copy(context.Background(), f.jobs)
	// With the ECDSA key only, bundle (Ed25519) and p384 are not verified.
	if s.Err() != nil || s.Copied != len(f.jobs) || s.Verified != 2 || s.Unverified != 6 {
		t.Fatalf("%d copied, %d verified, %d unverified: %v", s.Copied, s.Verified, s.Unverified, s.Err())
	}
	n := 0
	for _, w := range ev.warnings {
		if strings.Contains(w, "copied unverified: ") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d warnings of an unverified copy, want 6:\n%s", n, strings.Join(ev.warnings, "\n"))
	}
}

// TestVerifyPinsTheDigest: the image copied is the one verified, even
// when its tag moves meanwhile.
func TestVerifyPinsTheDigest(t *testing.T) {
	f := newVerifyFixture(t, false)
	// A source that moves the tag as soon as the signature is read.
	var moved atomic.Bool
	var src *testRegistry
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	src = serveRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".sig") && !moved.Swap(true) {
			push(t, src.host+"/team/tag:1", randomImage(t, 64, 1))
		}
	}))
	d := push(t, src.host+"/team/tag:1", randomImage(t, 128, 1))
	signTag(t, src.host+"/team/tag", d, d, f.ec)
	job := Job{Source: src.host + "/team/tag:1", Target: f.dst.host + "/team/tag:1"}
	s := newMirror(t, Options{Verify: &Verify{Keys: f.keys}}).Copy(context.Background(), []Job{job})
	if !moved.Load() || head(t, job.Source) == d {
		t.Fatal("the tag did not move")
	}
	if s.Verified != 1 || s.Copied != 1 || head(t, job.Target) != d {
		t.Fatalf("%d verified, %d copied, target %s, want %s: %v", s.Verified, s.Copied, head(t, job.Target), d, s.Err())
	}
}

// TestVerifyLayout: Export records the key that verified each image,
// and Import verifies again from the signatures stored with it.
func TestVerifyLayout(t *testing.T) {
	f := newVerifyFixture(t, false)
	dir := filepath.Join(t.TempDir(), "bundle")
	s, err := newMirror(t, Options{Verify: &Verify{Keys: f.keys, Warn: true}}).Export(context.Background(), f.jobs, dir)
	if err != nil || s.Err() != nil || s.Verified != 4 {
		t.Fatalf("export: %d verified, %v, %v", s.Verified, err, s.Err())
	}
	recorded := map[string]string{}
	for _, d := range layoutIndex(t, dir).Manifests {
		if d.Annotations[AnnotationAttachment] == "" {
			recorded[d.Annotations[AnnotationSource]] = d.Annotations[AnnotationVerifiedKey]
		}
	}
	for _, r := range s.Results {
		want := ""
		if r.Verification.Verdict == Verified {
			want = r.Verification.Key
		}
		if got := recorded[r.Source]; got != want {
			t.Errorf("%s: %s %q, want %q", r.Source, AnnotationVerifiedKey, got, want)
		}
	}

	dst := newTestRegistry(t)
	mp := mapper(t, rewrite.Config{Registry: dst.host + "/far"})
	s, err = newMirror(t, Options{Verify: &Verify{Keys: f.keys}}).Import(context.Background(), dir, mp)
	if err != nil || s.Verified != 4 || s.Unverified != 4 || s.Copied != 4 || s.Failed != 4 {
		t.Fatalf("import: %d verified, %d unverified, %d copied, %d failed, %v", s.Verified, s.Unverified, s.Copied, s.Failed, err)
	}
	for _, r := range s.Results {
		if (r.Verification.Verdict == Verified) != (r.Status == Copied) {
			t.Errorf("%s: %s, %+v", r.Source, r.Status, r.Verification)
		}
	}
	// Another key on the far side: nothing verifies.
	other := newTestRegistry(t)
	s, err = newMirror(t, Options{Verify: &Verify{Keys: []*VerifyKey{f.o.verifyKey(t, "other.pub")}}}).Import(context.Background(), dir, mapper(t, rewrite.Config{Registry: other.host}))
	if err != nil || s.Verified != 1 || s.Copied != 1 {
		// wrongkey is signed with the other key.
		t.Fatalf("import with another key: %d verified, %d copied, %v", s.Verified, s.Copied, err)
	}
}

// TestVerifySourceMirror: the signatures are looked for in the source
// mirror the image is read from, never at its own registry.
func TestVerifySourceMirror(t *testing.T) {
	cm := newCorporateMirror(t)
	k := ecdsaKey(t, elliptic.P256(), crypto.SHA256)
	h := cm.reg.host
	// quay.io/prometheus/prometheus is signed in the mirror; nginx's
	// ".sig" there holds no cosign signature (no signature annotation).
	signBundle(t, h+"/q/prometheus/prometheus", cm.quay, cm.quay, k)
	dst := newTestRegistry(t)
	tr := &loopbackOnly{}
	jobs := []Job{
		{Source: "quay.io/prometheus/prometheus:v2", Target: dst.host + "/prometheus/prometheus:v2"},
		{Source: "docker.io/library/nginx:1.25", Target: dst.host + "/library/nginx:1.25"},
	}
	sm := sourceMirrors(t, "docker.io="+h+"/dockerhub", "quay.io="+h+"/q")
	s := newMirror(t, Options{Transport: tr, SourceMirrors: sm, Verify: &Verify{Keys: []*VerifyKey{k.verifyKey(t, "k.pub")}}}).Copy(context.Background(), jobs)
	if other := tr.asked(); len(other) != 0 {
		t.Errorf("asked registries other than the mirror: %v", other)
	}
	r := s.Results
	if s.Verified != 1 || r[0].Status != Copied || r[0].Verification.Verdict != Verified || r[0].From == "" {
		t.Errorf("prometheus: %s, %+v, from %q", r[0].Status, r[0].Verification, r[0].From)
	}
	if r[1].Status != Failed || r[1].Verification.Verdict != Unsigned || head(t, jobs[1].Target) != "" {
		t.Errorf("nginx: %s, %+v", r[1].Status, r[1].Verification)
	}
}

// TestVerifyBounded: a signature tag of more layers than MaxSignatures
// is read no further, with a warning.
func TestVerifyBounded(t *testing.T) {
	src, dst := newTestRegistry(t), newTestRegistry(t)
	d := push(t, src.host+"/team/app:1", randomImage(t, 64, 1))
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	for i := 0; i < MaxSignatures+10; i++ {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:       static.NewLayer([]byte(fmt.Sprint("payload ", i)), "application/vnd.dev.cosign.simplesigning.v1+json"),
			Annotations: map[string]string{cosignSignatureAnnotation: "AAAA"},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	h, _ := v1.NewHash(d)
	push(t, src.host+"/team/app:"+tagPrefix(h)+".sig", img)
	src.resetLog()
	ev := &events{}
	k := ed25519Key(t)
	s := newMirror(t, Options{Reporter: ev, Verify: &Verify{Keys: []*VerifyKey{k.verifyKey(t, "k.pub")}}}).Copy(context.Background(), []Job{{Source: src.host + "/team/app:1", Target: dst.host + "/team/app:1"}})
	v := s.Results[0].Verification
	if v == nil || v.Verdict != BadSignature || v.Signatures != MaxSignatures || s.Failed != 1 {
		t.Fatalf("%+v, %d failed", v, s.Failed)
	}
	if n := src.count(http.MethodGet, "/blobs/"); n > MaxSignatures {
		t.Errorf("%d blobs read, want at most %d", n, MaxSignatures)
	}
	if len(ev.warnings) != 1 || !strings.Contains(ev.warnings[0], fmt.Sprintf("more than %d signatures", MaxSignatures)) {
		t.Errorf("warnings %q", ev.warnings)
	}
}

func TestVerifyNoKeys(t *testing.T) {
	if _, err := New(Options{Verify: &Verify{}}); err == nil {
		t.Fatal("no error for Verify without keys")
	}
}

// TestVerifyDryRun: a dry run verifies, and plans only what verifies;
// with Pin it makes HEAD requests only and verifies nothing.
func TestVerifyDryRun(t *testing.T) {
	f := newVerifyFixture(t, false)
	s := newMirror(t, Options{DryRun: true, Verify: &Verify{Keys: f.keys}}).Copy(context.Background(), f.jobs)
	if s.Planned != 4 || s.Failed != 4 || s.Verified != 4 || s.Unverified != 4 {
		t.Errorf("dry run: %d planned, %d failed, %d verified, %d unverified", s.Planned, s.Failed, s.Verified, s.Unverified)
	}
	for _, r := range s.Results {
		if (r.Status == Planned) != (r.Verification != nil && r.Verification.Verdict == Verified) {
			t.Errorf("%s: %s, %+v", r.Source, r.Status, r.Verification)
		}
	}
	if len(f.dst.methods()) != 0 {
		t.Errorf("the dry run asked the target: %v", f.dst.methods())
	}
	f.src.resetLog()
	s = newMirror(t, Options{DryRun: true, Pin: true, Verify: &Verify{Keys: f.keys}}).Copy(context.Background(), f.jobs)
	if s.Planned != len(f.jobs) || s.Verified+s.Unverified != 0 {
		t.Errorf("dry run with pin: %d planned, %d verified", s.Planned, s.Verified)
	}
	for m := range f.src.methods() {
		if m != http.MethodHead {
			t.Errorf("dry run with pin: %s requests", m)
		}
	}
}

// BenchmarkVerify copies benchImages images, each signed in both of
// cosign's formats (a .sig tag and a bundle referrer), with and without
// Options.Verify, into a fresh target at every iteration; rtt=2ms adds 2
// ms to every request of both registries. Compare the ns/op of the
// sub-benchmarks of one run: the difference is the cost of verifying.
func BenchmarkVerify(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchmarkVerify(b, rtt) })
	}
}

func benchmarkVerify(b *testing.B, rtt time.Duration) {
	src := newTestRegistry(b)
	k := ecdsaKey(b, elliptic.P256(), crypto.SHA256)
	var sources []string
	for i := 0; i < benchImages; i++ {
		repo := fmt.Sprintf("%s/bench/image%d", src.host, i)
		d := push(b, repo+":1", randomImage(b, benchLayerSize, benchLayers))
		signTag(b, repo, d, d, k)
		signBundle(b, repo, d, d, k)
		sources = append(sources, repo+":1")
	}
	src.delay = rtt
	keys := []*VerifyKey{k.verifyKey(b, "k.pub")}
	for _, verify := range []bool{false, true} {
		b.Run(fmt.Sprintf("verify=%v", verify), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dst := newTestRegistry(b)
				dst.delay = rtt
				o := Options{}
				if verify {
					o.Verify = &Verify{Keys: keys}
				}
				m := newMirror(b, o)
				jobs := make([]Job, len(sources))
				for j, s := range sources {
					jobs[j] = Job{Source: s, Target: fmt.Sprintf("%s/bench/image%d:1", dst.host, j)}
				}
				b.StartTimer()
				s := m.Copy(context.Background(), jobs)
				if s.Copied != benchImages || s.Attachments.Copied != 2*benchImages || (verify && s.Verified != benchImages) {
					b.Fatalf("%d copied, %d attachments, %d verified: %v", s.Copied, s.Attachments.Copied, s.Verified, s.Err())
				}
			}
		})
	}
}

// TestVerifyRequests: verifying an image signed in both formats costs two
// requests more than copying it (a HEAD for its digest, the payload of
// the .sig read to verify): the attachments are listed once and the
// signature manifests read once, for the verification and the copy.
func TestVerifyRequests(t *testing.T) {
	k := ecdsaKey(t, elliptic.P256(), crypto.SHA256)
	requests := map[bool]int{}
	for _, verify := range []bool{false, true} {
		src, dst := newTestRegistry(t), newTestRegistry(t)
		repo := src.host + "/team/app"
		d := push(t, repo+":1", randomImage(t, 1024, 2))
		signTag(t, repo, d, d, k)
		signBundle(t, repo, d, d, k)
		src.resetLog()
		o := Options{}
		if verify {
			o.Verify = &Verify{Keys: []*VerifyKey{k.verifyKey(t, "k.pub")}}
		}
		s := newMirror(t, o).Copy(context.Background(), []Job{{Source: repo + ":1", Target: dst.host + "/team/app:1"}})
		if s.Copied != 1 || s.Attachments.Copied != 2 || (verify && s.Verified != 1) {
			t.Fatalf("verify=%v: %d copied, %+v, %d verified: %v", verify, s.Copied, s.Attachments, s.Verified, s.Err())
		}
		for _, n := range src.methods() {
			requests[verify] += n
		}
	}
	if requests[true] > requests[false]+2 {
		t.Errorf("%d requests to the source with verification, %d without: want at most 2 more", requests[true], requests[false])
	}
}
