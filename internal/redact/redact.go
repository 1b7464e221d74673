// Package redact keeps credentials out of messages: the user information
// of URLs ("https://user:secret@host") and, by value, the credentials a
// run sent.
package redact

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mark replaces a credential.
const Mark = "[redacted]"

// userinfo is the user information of a URL, anywhere in a message.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#"']+@`)

// URLs replaces the user information of every URL in s:
// "https://user:secret@host/x" reads "https://[redacted]@host/x".
func URLs(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllString(s, "${1}"+Mark+"@")
}

// Strip returns rawURL without its user information, and the user name and
// password it held ("" when none, or when rawURL is not a URL).
func Strip(rawURL string) (clean, user, password string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL, "", ""
	}
	user = u.User.Username()
	password, _ = u.User.Password()
	u.User = nil
	return u.String(), user, password
}

// MinSecret is the shortest credential redacted by value: shorter ones
// would blot out ordinary words.
const MinSecret = 6

// Secrets are credentials to redact by value wherever they appear, in case
// a message holds them in a form no pattern recognises (a server that
// echoes the Authorization header in its status line). The zero value is
// ready to use and safe for concurrent use.
type Secrets struct {
	mu   sync.RWMutex
	vals map[string]bool
	list []string // longest first
}

// Add notes credentials; values shorter than MinSecret are ignored.
func (s *Secrets) Add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grew := false
	for _, v := range vals {
		if len(v) < MinSecret || s.vals[v] {
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

// AddUser notes a user name and password: the password, "user:password"
// and its Basic encoding.
func (s *Secrets) AddUser(user, password string) {
	if password == "" {
		return
	}
	s.Add(password, user+":"+password, base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
}

// AddHeader notes the credentials of an Authorization header value.
func (s *Secrets) AddHeader(v string) {
	if v == "" {
		return
	}
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		s.Add(v)
		return
	}
	cred = strings.TrimSpace(cred)
	s.Add(v, cred)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			if user, pass, ok := strings.Cut(string(dec), ":"); ok {
				s.AddUser(user, pass)
			}
		}
	}
}

// String redacts the URLs of msg (URLs) and every secret noted.
func (s *Secrets) String(msg string) string {
	msg = URLs(msg)
	if s == nil {
		return msg
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.list {
		if strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, Mark)
		}
	}
	return msg
}

// Error is err with its message redacted by s (Secrets.String); it wraps
// err, so that errors.Is and errors.As see through it. Nil for nil.
func (s *Secrets) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
