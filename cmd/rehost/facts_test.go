package main

import (
	"strings"
	"testing"
)

// hasFacts reports whether msg holds each fact, in the order given: the
// names, counts, flags, paths and file:line positions a message must
// carry, whatever sentence is written around them. Tests check whole
// sentences only where the wording is the contract: a message the docs
// quote, a golden output, the text a formatter exists to produce.
func hasFacts(msg string, facts ...string) bool {
	for _, f := range facts {
		i := strings.Index(msg, f)
		if i < 0 {
			return false
		}
		msg = msg[i+len(f):]
	}
	return true
}

func TestHasFacts(t *testing.T) {
	const msg = "rehost: app.yaml:9: 2 image(s) found; --embedded lists them\n"
	for _, tt := range []struct {
		name  string
		facts []string
		want  bool
	}{
		{"all in order", []string{"app.yaml:9", "2 image(s)", "--embedded"}, true},
		{"none", nil, true},
		{"out of order", []string{"--embedded", "app.yaml:9"}, false},
		{"missing", []string{"app.yaml:9", "3 image(s)"}, false},
		{"used once", []string{"image(s)", "image(s)"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := hasFacts(msg, tt.facts...); got != tt.want {
				t.Errorf("hasFacts(%q) = %v, want %v", tt.facts, got, tt.want)
			}
		})
	}
}
