package mirror

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"google.golang.org/protobuf/encoding/protojson"
)

// Verify says that each image's cosign signature is verified before the
// image is copied (Options.Verify): offline, with public keys only (no
// transparency log, no Fulcio certificate).
type Verify struct {
	// Keys are the public keys that may verify a signature: any one
	// verifying is enough. See ParseVerifyKey.
	Keys []*VerifyKey
	// Warn copies an image that no key verifies, with a warning, instead
	// of failing it (*UnverifiedError).
	Warn bool
}

// VerifyKey is a public key that verifies cosign signatures.
type VerifyKey struct {
	// Name is where the key came from (a file name), for reports.
	Name string
	// ID is "sha256:" and the hex SHA-256 of the key's DER
	// SubjectPublicKeyInfo: what a layout records of the key that
	// verified an image (AnnotationVerifiedKey).
	ID string
	// vs verify the key's signatures: for ECDSA, over SHA-256 (cosign's
	// default whatever the curve) and the curve's own hash.
	vs []signature.Verifier
}

// KeyError is a key that cannot verify signatures: not PEM, a private
// key, or not a public key of a supported kind.
type KeyError struct {
	// Name is where the key came from (ParseVerifyKey's name).
	Name string
	// Reason says what is wrong.
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("%s: %s", Quote(e.Name), e.Reason)
}

// ParseVerifyKey parses a PEM public key, as cosign generate-key-pair
// writes it (cosign.pub): ECDSA (P-256, P-384, P-521), Ed25519 or RSA
// (PKIX "PUBLIC KEY", or PKCS #1 "RSA PUBLIC KEY"). name says where it
// came from, for messages. The error is a *KeyError.
func ParseVerifyKey(name string, pemBytes []byte) (*VerifyKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, &KeyError{Name: name, Reason: "not a PEM public key (want -----BEGIN PUBLIC KEY-----, as cosign.pub holds)"}
	}
	if strings.Contains(block.Type, "PRIVATE KEY") {
		return nil, &KeyError{Name: name, Reason: fmt.Sprintf("a private key (%s), not a public key: give the public key (cosign.pub, not cosign.key)", Quote(block.Type))}
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pem.EncodeToMemory(block))
	if err != nil {
		return nil, &KeyError{Name: name, Reason: fmt.Sprintf("not a public key: %s block: %v", Quote(block.Type), err)}
	}
	var hashes []crypto.Hash
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		hashes = []crypto.Hash{crypto.SHA256}
		switch k.Curve.Params().BitSize {
		case 384:
			hashes = append(hashes, crypto.SHA384)
		case 521:
			hashes = append(hashes, crypto.SHA512)
		}
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return nil, &KeyError{Name: name, Reason: fmt.Sprintf("an RSA key of %d bits: want at least 2048", k.N.BitLen())}
		}
		hashes = []crypto.Hash{crypto.SHA256}
	case ed25519.PublicKey:
		hashes = []crypto.Hash{crypto.Hash(0)}
	default:
		return nil, &KeyError{Name: name, Reason: fmt.Sprintf("a %T key: want ECDSA, Ed25519 or RSA", pub)}
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return nil, &KeyError{Name: name, Reason: err.Error()}
	}
	sum := sha256.Sum256(der)
	k := &VerifyKey{Name: name, ID: "sha256:" + hex.EncodeToString(sum[:])}
	for _, h := range hashes {
		v, err := signature.LoadVerifier(pub, h)
		if err != nil {
			return nil, &KeyError{Name: name, Reason: err.Error()}
		}
		k.vs = append(k.vs, v)
	}
	return k, nil
}

// verifies reports whether the key verifies sig over msg.
func (k *VerifyKey) verifies(sig, msg []byte) bool {
	for _, v := range k.vs {
		if v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(msg)) == nil {
			return true
		}
	}
	return false
}

// Verdict is what the verification of an image's signatures found.
type Verdict string

const (
	// Verified: a key verifies a signature of the image's digest.
	Verified Verdict = "verified"
	// Unsigned: the image has no cosign signature.
	Unsigned Verdict = "unsigned"
	// BadSignature: no key verifies any of its signatures.
	BadSignature Verdict = "bad signature"
	// OtherDigest: a key verifies a signature attached to the image, but
	// the signature is of another digest.
	OtherDigest Verdict = "signed for another digest"
)

// SignatureFormat is the form of a cosign signature.
type SignatureFormat string

const (
	// TagSignature is cosign's tag scheme: a "sha256-<hex>.sig" tag
	// whose layers are simple-signing payloads, each signed in an
	// annotation.
	TagSignature SignatureFormat = "sig tag"
	// BundleSignature is a sigstore bundle (cosign 3's default): an OCI
	// 1.1 referrer, found with the referrers API or its tag schema,
	// holding a DSSE envelope of an in-toto statement.
	BundleSignature SignatureFormat = "sigstore bundle"
)

// Verification is the outcome of verifying one image's signatures.
type Verification struct {
	Verdict Verdict `json:"verdict"`
	// Digest is the digest verified: the image's, an index's own (as
	// cosign sign signs it).
	Digest string `json:"digest"`
	// Key is the ID of the key that verified (VerifyKey.ID), and KeyName
	// its name, when Verified.
	Key     string `json:"key,omitempty"`
	KeyName string `json:"keyName,omitempty"`
	// Format is the format of the signature that verified, or with
	// OtherDigest the one signed for another digest.
	Format SignatureFormat `json:"format,omitempty"`
	// Signatures counts the cosign signatures found.
	Signatures int `json:"signatures"`
	// SignedDigest is, with OtherDigest, the digest the signature names.
	SignedDigest string `json:"signedDigest,omitempty"`
}

// reason is the verdict in words.
func (v *Verification) reason() string {
	switch v.Verdict {
	case Unsigned:
		return fmt.Sprintf("unsigned: no cosign signature of %s", v.Digest)
	case BadSignature:
		return fmt.Sprintf("bad signature: no key given verifies the %d signatures of %s", v.Signatures, v.Digest)
	case OtherDigest:
		return fmt.Sprintf("signed for another digest: a signature attached to %s (%s) is of %s", v.Digest, v.Format, v.SignedDigest)
	}
	return fmt.Sprintf("verified: %s signed with key %s (%s)", v.Digest, v.KeyName, v.Format)
}

// UnverifiedError is an image no key verifies (Options.Verify): it is
// not copied.
type UnverifiedError struct {
	Verification *Verification
}

func (e *UnverifiedError) Error() string {
	return "not copied: " + e.Verification.reason()
}

// maxSignatureSize bounds a signature payload or bundle read.
const maxSignatureSize = 1 << 20

// MaxSignatures bounds the signatures examined for one image: a source
// that attaches more (a registry that wants rehost to read gigabytes)
// has them count as not verifying, and a warning says so.
const MaxSignatures = 64

// Annotations of cosign's signatures and sigstore's bundles.
const (
	cosignSignatureAnnotation = "dev.cosignproject.cosign/signature"
	inTotoPayloadType         = "application/vnd.in-toto+json"
)

// verify verifies the signatures of the image of t, at digest h, with
// the keys of Options.Verify: the signatures are those attached to h
// where the image is read (its tags and referrers, or in a layout the
// attachments stored with it).
//
// It returns what is attached to h as well, the signatures read kept in
// memory (registry origins), so that the copy lists nothing again and
// copies the signature manifests verified, even if a tag moves.
func (m *Mirror) verify(ctx context.Context, rs *runState, t task, h v1.Hash) (*Verification, *attachedTo, error) {
	v := &Verification{Verdict: Unsigned, Digest: h.String()}
	fs, warn, err := t.origin.attachments(uncounted(ctx), rs, h)
	if err != nil {
		return nil, nil, fmt.Errorf("looking for the signatures of %s: %w", h, err)
	}
	l := &attachedTo{subject: h, fs: fs, warn: warn}
	v, err = m.verifyFound(ctx, t, h, v, fs)
	return v, l, err
}

// attachedTo is what is attached to subject, listed once (see verify).
type attachedTo struct {
	subject v1.Hash
	fs      []found
	warn    string
}

// verifyFound verifies the signatures among fs (see verify), keeping
// each registry signature read in fs.
func (m *Mirror) verifyFound(ctx context.Context, t task, h v1.Hash, v *Verification, fs []found) (*Verification, error) {
	read := 0 // signature manifests read
	for i := range fs {
		f := fs[i]
		if f.kind != Signature {
			continue
		}
		format := TagSignature
		if f.referrer() {
			if f.desc == nil || !strings.HasPrefix(strings.ToLower(f.desc.ArtifactType), sigstoreBundlePrefix) {
				continue // a Notary signature: not cosign's
			}
			format = BundleSignature
		}
		if read++; read > MaxSignatures {
			m.warn(t.Job, fmt.Sprintf("more than %d signatures of %s: the others are not read", MaxSignatures, h))
			return v.settle(), nil
		}
		if ro, ok := f.origin.(registryOrigin); ok && ro.pre == nil {
			// Kept for the copy (with the task's context, which counts
			// the bytes the copy reads through it).
			rd, err := m.puller.Get(ctx, ro.ref.read())
			if err != nil {
				return nil, fmt.Errorf("reading the signature %s: %w", f.src, err)
			}
			ro.pre = rd
			f.origin, fs[i].origin = ro, ro
		}
		a, err := f.origin.get(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the signature %s: %w", f.src, err)
		}
		if a.img == nil {
			continue
		}
		layers, err := a.img.Layers()
		if err != nil {
			return nil, fmt.Errorf("reading the signature %s: %w", f.src, err)
		}
		mf, err := a.img.Manifest()
		if err != nil {
			return nil, fmt.Errorf("reading the signature %s: %w", f.src, err)
		}
		for i, l := range layers {
			if i >= len(mf.Layers) {
				break
			}
			if v.Signatures >= MaxSignatures {
				m.warn(t.Job, fmt.Sprintf("more than %d signatures of %s: the others are not read", MaxSignatures, h))
				return v.settle(), nil
			}
			var sigs []signed
			switch format {
			case TagSignature:
				b64, ok := mf.Layers[i].Annotations[cosignSignatureAnnotation]
				if !ok {
					continue
				}
				raw, err := readSignatureBlob(l)
				if err != nil {
					return nil, fmt.Errorf("reading the signature %s: %w", f.src, err)
				}
				sigs = simpleSigning(b64, raw)
			case BundleSignature:
				if !strings.HasPrefix(strings.ToLower(string(mf.Layers[i].MediaType)), sigstoreBundlePrefix) {
					continue
				}
				raw, err := readSignatureBlob(l)
				if err != nil {
					return nil, fmt.Errorf("reading the signature %s: %w", f.src, err)
				}
				sigs = bundleSignatures(raw)
			}
			for _, s := range sigs {
				v.Signatures++
				for _, k := range m.opts.Verify.Keys {
					if !k.verifies(s.sig, s.msg) {
						continue
					}
					d, ok := s.digests()
					switch {
					case ok && d.has(h):
						v.Verdict, v.Key, v.KeyName, v.Format, v.SignedDigest = Verified, k.ID, k.Name, format, ""
						return v, nil
					case v.Verdict != OtherDigest:
						v.Verdict, v.Format, v.SignedDigest = OtherDigest, format, d.String()
					}
				}
			}
		}
	}
	return v.settle(), nil
}

// settle is v once every signature was examined and none verified.
func (v *Verification) settle() *Verification {
	if v.Verdict == Unsigned && v.Signatures > 0 {
		v.Verdict = BadSignature
	}
	return v
}

// readSignatureBlob reads a signature layer, at most maxSignatureSize.
func readSignatureBlob(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSignatureSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSignatureSize {
		return nil, fmt.Errorf("%w: a signature of more than %d bytes", ErrTooLarge, maxSignatureSize)
	}
	return b, nil
}

// signed is one signature: sig over msg, and the digests msg names.
type signed struct {
	sig, msg []byte
	digests  func() (digestSet, bool)
}

// digestSet is the digests a signature names.
type digestSet []string

func (d digestSet) has(h v1.Hash) bool {
	for _, s := range d {
		if s == h.String() {
			return true
		}
	}
	return false
}

func (d digestSet) String() string {
	if len(d) == 0 {
		return "no digest"
	}
	return strings.Join(d, ", ")
}

// simpleSigning is the signature of a cosign ".sig" layer: b64 (the
// layer's annotation) over the layer, a simple-signing payload naming
// the image's digest.
func simpleSigning(b64 string, layer []byte) []signed {
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return []signed{{sig: nil, msg: layer, digests: func() (digestSet, bool) { return nil, false }}}
	}
	return []signed{{sig: sig, msg: layer, digests: func() (digestSet, bool) {
		var p payload.SimpleContainerImage
		if err := json.Unmarshal(layer, &p); err != nil {
			return nil, false
		}
		d := p.Critical.Image.DockerManifestDigest
		return digestSet{d}, d != ""
	}}}
}

// bundleSignatures are the signatures of a sigstore bundle's DSSE
// envelope, over its pre-authentication encoding, naming the subjects
// of its in-toto statement. A bundle that does not parse, or holds a
// message signature (of a blob, not an image), gives one signature that
// verifies with no key.
func bundleSignatures(raw []byte) []signed {
	bad := []signed{{digests: func() (digestSet, bool) { return nil, false }}}
	var b protobundle.Bundle
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &b); err != nil {
		return bad
	}
	env := b.GetDsseEnvelope()
	if env == nil || len(env.GetSignatures()) == 0 {
		return bad
	}
	pae := dsse.PAE(env.GetPayloadType(), env.GetPayload())
	subjects := func() (digestSet, bool) {
		if env.GetPayloadType() != inTotoPayloadType {
			return nil, false
		}
		var st intoto.Statement
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(env.GetPayload(), &st); err != nil {
			return nil, false
		}
		if st.GetPredicateType() != cosignSignPredicate {
			return nil, false // an attestation, not a signature
		}
		var d digestSet
		for _, s := range st.GetSubject() {
			for alg, hx := range s.GetDigest() {
				d = append(d, alg+":"+hx)
			}
		}
		return d, len(d) > 0
	}
	var out []signed
	for _, s := range env.GetSignatures() {
		out = append(out, signed{sig: s.GetSig(), msg: pae, digests: subjects})
	}
	return out
}

// errNoKeys is Options.Verify without keys.
var errNoKeys = errors.New("verify: no key given")

// verifyTask verifies the image of t at the digest its origin has now,
// for a copy and for a dry run alike: it records the verification in res
// and what was found attached in t, warns of what the lookup found amiss,
// and refuses an image no key verifies unless Verify.Warn, when it warns
// that it was done ("copied", "would copy") unverified.
func (m *Mirror) verifyTask(ctx context.Context, rs *runState, t *task, res *Result, done string) (v1.Hash, *Verification, error) {
	h, err := t.origin.digest(ctx)
	if err != nil {
		return h, nil, err
	}
	v, l, err := m.verify(ctx, rs, *t, h)
	if err != nil {
		return h, nil, err
	}
	res.Verification, t.listed = v, l
	if l.warn != "" {
		m.warn(t.Job, l.warn)
	}
	if v.Verdict != Verified {
		if !m.opts.Verify.Warn {
			return h, nil, &UnverifiedError{Verification: v}
		}
		m.warn(t.Job, done+" unverified: "+v.reason())
	}
	return h, v, nil
}
