package main

import (
	"crypto/x509"
	"sync"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// useFallbackRoots makes Mozilla's root certificates, as
// golang.org/x/crypto/x509roots/fallback publishes them, the roots Go's TLS
// verification falls back to when the system has none: a container image
// without /etc/ssl/certs, like the release's rehost image. A system with
// roots keeps its own (GODEBUG=x509usefallbackroots=1 forces these).
//
// It is what importing golang.org/x/crypto/x509roots/fallback does, done
// only by the commands that reach registries: that package parses its 117
// certificates at every start (1 to 3 ms and 650 KB, a third of the
// start-up of `rehost rewrite` on one Pod). The requirement of
// golang.org/x/crypto/x509roots/fallback in go.mod is updated for each
// release (govulncheck reports a stale one).
var useFallbackRoots = sync.OnceFunc(func() {
	pool := x509.NewCertPool()
	for r := range bundle.Roots() {
		c, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			continue // trusting one root less, never more
		}
		if r.Constraint == nil {
			pool.AddCert(c)
		} else {
			pool.AddCertWithConstraint(c, r.Constraint)
		}
	}
	x509.SetFallbackRoots(pool)
})
