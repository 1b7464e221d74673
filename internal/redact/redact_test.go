package redact

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"testing"
)

func TestURLs(t *testing.T) {
	for in, want := range map[string]string{
		"GET http://user:secret@127.0.0.1:8080/index.yaml: 401":   "GET http://[redacted]@127.0.0.1:8080/index.yaml: 401",
		"oci://tok@ghcr.io/x and https://a:b@h/c?d=e@f":           "oci://[redacted]@ghcr.io/x and https://[redacted]@h/c?d=e@f",
		`Get "https://u:p%40ss@host/x.tgz"`:                       `Get "https://[redacted]@host/x.tgz"`,
		"mail@example.com and http://host/a@b and http://h?x=a@b": "mail@example.com and http://host/a@b and http://h?x=a@b",
		"no url": "no url",
	} {
		if got := URLs(in); got != want {
			t.Errorf("URLs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStrip(t *testing.T) {
	clean, user, pass := Strip("https://me:s3cret@charts.example:8443/repo")
	if clean != "https://charts.example:8443/repo" || user != "me" || pass != "s3cret" {
		t.Errorf("Strip = %q %q %q", clean, user, pass)
	}
	if clean, user, pass := Strip("https://charts.example"); clean != "https://charts.example" || user != "" || pass != "" {
		t.Errorf("Strip without user = %q %q %q", clean, user, pass)
	}
}

func TestSecrets(t *testing.T) {
	var s Secrets
	s.AddHeader("Basic " + base64.StdEncoding.EncodeToString([]byte("robot:hunter2hunter2")))
	s.Add("short")
	msg := "server said: 401 hunter2hunter2 robot:hunter2hunter2 short https://x:y@h"
	if got, want := s.String(msg), "server said: 401 [redacted] [redacted] short https://[redacted]@h"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	err := s.Error(&fs.PathError{Op: "open", Path: "hunter2hunter2", Err: fs.ErrNotExist})
	if err.Error() != "open [redacted]: file does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Error = %v", err)
	}
	plain := errors.New("nothing secret")
	if s.Error(plain) != plain || s.Error(nil) != nil {
		t.Error("Error changed an error with nothing to redact")
	}
}
