package mirror

import (
	"context"
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/rehost/rehost/internal/bounded"
)

// Quote returns s as it is when it is safe to print as one word (printable
// characters, no space, quote or backslash), otherwise quoted as by
// strconv.Quote, with no terminal escape, newline or bidirectional control
// left raw. Strings longer than 512 bytes are cut, and their size given.
// Reports quote every string read from an OCI layout or a registry this
// way: the image sources and attachment values recorded in a layout's
// annotations are untrusted. It is bounded.Word, the quoting every rehost
// module uses.
func Quote(s string) string { return bounded.Word(s) }

// clean escapes what is not printable in a message (bounded.Clean): a
// message stays one line.
func clean(s string) string { return bounded.Clean(s) }

// redacted replaces a credential in a message.
const redacted = "[redacted]"

// credentialPatterns find credentials in text that came from a server (an
// error body may echo the request's headers) or names a URL.
var credentialPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Authorization headers (also echoed as "authorization": "…").
	{regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|negotiate|token)\s+)?[^\s"',;}\]]+`), "${1}" + redacted},
	// Other headers that carry secrets.
	{regexp.MustCompile(`(?i)\b((?:set-)?cookie|x-registry-auth|x-auth-token|x-api-key|private-token)(["']?\s*:\s*)[^\r\n]+`), "${1}${2}" + redacted},
	// Query values and form fields.
	{regexp.MustCompile(`(?i)([?&;\s](?:access_token|refresh_token|id_token|token|password|passwd|pwd|secret|client_secret|x-amz-signature|x-amz-credential|x-amz-security-token|signature|sig)=)[^&\s"'#]+`), "${1}" + redacted},
	// JSON fields (a token endpoint's answer, a Docker config).
	{regexp.MustCompile(`(?i)("(?:access_token|refresh_token|id_token|token|password|secret|identitytoken|registrytoken|auth)"\s*:\s*")[^"]*`), "${1}" + redacted},
	// User information in URLs.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@`), "${1}" + redacted + "@"},
}

// schemeCredential is an authentication scheme and what follows it,
// anywhere in a message: "Bearer eyJhbGciOi…", "Basic dXNlcjpwYXNz".
var schemeCredential = regexp.MustCompile(`\b(Bearer|Basic|bearer|basic|BEARER|BASIC)(\s+)([A-Za-z0-9._~+/-]+=*)`)

// credentialLike tells a credential after its scheme from a word ("basic
// authentication"): a Basic credential decodes to "user:password", a
// bearer token is not a lower-case word.
func credentialLike(scheme, v string) bool {
	if strings.EqualFold(scheme, "basic") {
		dec, err := base64.StdEncoding.DecodeString(v)
		return err == nil && strings.Contains(string(dec), ":")
	}
	if len(v) < 8 {
		return false
	}
	for _, r := range v {
		if r < 'a' || r > 'z' {
			return true
		}
	}
	return false
}

// secrets are the credentials a Mirror used: those its keychain gave and
// the Authorization headers it sent (bearer tokens obtained from token
// servers included). Messages are scrubbed of them, in case a server
// echoes them in a form no pattern recognises.
type secrets struct {
	mu   sync.RWMutex
	vals map[string]bool
	list []string // longest first
}

// minSecret is the shortest credential scrubbed by value: shorter ones
// would redact ordinary words.
const minSecret = 6

func (s *secrets) add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grew := false
	for _, v := range vals {
		if len(v) < minSecret || s.vals[v] {
			continue
		}
		if s.vals == nil {
			s.vals = map[string]bool{}
		}
		s.vals[v] = true
		s.list = append(s.list, v)
		grew = true
	}
	if grew {
		sort.Slice(s.list, func(i, j int) bool { return len(s.list[i]) > len(s.list[j]) })
	}
}

// header notes the credentials of an Authorization header value.
func (s *secrets) header(v string) {
	if v == "" {
		return
	}
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		s.add(v)
		return
	}
	cred = strings.TrimSpace(cred)
	s.add(v, cred)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				s.add(string(dec), pass)
			}
		}
	}
}

// config notes the credentials of an authn.AuthConfig.
func (s *secrets) config(c *authn.AuthConfig) {
	if c == nil {
		return
	}
	s.add(c.Password, c.Auth, c.IdentityToken, c.RegistryToken)
	if c.Username != "" && c.Password != "" {
		s.add(base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password)))
	}
	if c.Auth != "" {
		if dec, err := base64.StdEncoding.DecodeString(c.Auth); err == nil {
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				s.add(pass)
			}
		}
	}
}

// scrub redacts credentials from a message that may hold server text, then
// escapes what is not printable (clean).
func (s *secrets) scrub(msg string) string {
	if s != nil {
		s.mu.RLock()
		for _, v := range s.list {
			msg = strings.ReplaceAll(msg, v, redacted)
		}
		s.mu.RUnlock()
	}
	for _, p := range credentialPatterns {
		msg = p.re.ReplaceAllString(msg, p.repl)
	}
	msg = schemeCredential.ReplaceAllStringFunc(msg, func(m string) string {
		sub := schemeCredential.FindStringSubmatch(m)
		if !credentialLike(sub[1], sub[3]) {
			return m
		}
		return sub[1] + sub[2] + redacted
	})
	return clean(msg)
}

// safeError is an error whose message is scrubbed (secrets.scrub); the
// error it wraps stays available to errors.Is and errors.As.
type safeError struct {
	msg string
	err error
}

func (e *safeError) Error() string { return e.msg }
func (e *safeError) Unwrap() error { return e.err }

// safe wraps err so that its message is scrubbed.
func (s *secrets) safe(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := err.(*safeError); ok {
		err = se.err
	}
	return &safeError{msg: s.scrub(err.Error()), err: err}
}

// recordingKeychain notes the credentials its keychain gives.
type recordingKeychain struct {
	kc authn.Keychain
	s  *secrets
}

func (k recordingKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

func (k recordingKeychain) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	a, err := authn.Resolve(ctx, k.kc, r)
	if err != nil || a == nil || a == authn.Anonymous {
		// go-containerregistry compares with authn.Anonymous: keep it.
		return a, err
	}
	return recordingAuth{a: a, s: k.s}, nil
}

type recordingAuth struct {
	a authn.Authenticator
	s *secrets
}

func (r recordingAuth) Authorization() (*authn.AuthConfig, error) {
	return r.AuthorizationContext(context.Background())
}

func (r recordingAuth) AuthorizationContext(ctx context.Context) (*authn.AuthConfig, error) {
	c, err := authn.Authorization(ctx, r.a)
	r.s.config(c)
	return c, err
}
