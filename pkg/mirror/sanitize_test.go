package mirror

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
)

// TestScrub: credentials are redacted by pattern, and by value once a
// Mirror has used them; ordinary words stay.
func TestScrub(t *testing.T) {
	var s secrets
	s.config(&authn.AuthConfig{Username: "robot", Password: "hunter2-long"})
	s.header("Bearer opaque-token-value")
	for _, c := range []struct{ in, want string }{
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "Authorization: [redacted]"},
		{`"authorization": "Basic dXNlcjpwYXNz"`, `"authorization": "[redacted]"`},
		{"proxy-authorization=Basic dXNlcjpwYXNz", "proxy-authorization=[redacted]"},
		{"sent Basic dXNlcjpwYXNz here", "sent Basic [redacted] here"},
		{"sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "sent Bearer [redacted]"},
		{"GET https://h/token?scope=x&token=abc123&y=1", "GET https://h/token?scope=x&token=[redacted]&y=1"},
		{"form password=pw&user=x", "form password=[redacted]&user=x"},
		{`{"token":"abc","access_token":"def"}`, `{"token":"[redacted]","access_token":"[redacted]"}`},
		{`{"password": "pw"}`, `{"password": "[redacted]"}`},
		{"https://robot:pw@example.com/x", "https://[redacted]@example.com/x"},
		{"Cookie: session=abc; other=def", "Cookie: [redacted]"},
		{"echoed hunter2-long and opaque-token-value", "echoed [redacted] and [redacted]"},
		{"echoed " + "cm9ib3Q6aHVudGVyMi1sb25n", "echoed [redacted]"}, // base64 of robot:hunter2-long
		// Words that look like schemes are not credentials.
		{"requires basic authentication", "requires basic authentication"},
		{"bearer tokenization failed", "bearer tokenization failed"},
		{"UNAUTHORIZED: authentication required", "UNAUTHORIZED: authentication required"},
		{"MANIFEST_UNKNOWN: manifest unknown; map[Tag:1]", "MANIFEST_UNKNOWN: manifest unknown; map[Tag:1]"},
	} {
		if got := s.scrub(c.in); got != c.want {
			t.Errorf("scrub(%q) =\n  %q, want\n  %q", c.in, got, c.want)
		}
	}
}

// TestSafeError: a scrubbed error still unwraps to what it wraps.
func TestSafeError(t *testing.T) {
	var s secrets
	inner := fmt.Errorf("denied: Authorization: Bearer abcdefghijkl\n: %w", ErrStalled)
	err := s.safe(inner)
	if strings.Contains(err.Error(), "abcdefghijkl") || strings.Contains(err.Error(), "\n") {
		t.Errorf("not scrubbed: %q", err)
	}
	if !errors.Is(err, ErrStalled) {
		t.Error("the scrubbed error does not unwrap")
	}
	if s.safe(nil) != nil {
		t.Error("safe(nil) != nil")
	}
	if again := s.safe(err); again.(*safeError).err != inner {
		t.Error("safe wraps a scrubbed error twice")
	}
}
