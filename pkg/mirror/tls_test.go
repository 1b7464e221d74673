package mirror

import (
	"encoding/pem"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

var errConnRefused = syscall.ECONNREFUSED

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

type tlsRegistry struct {
	host  string
	caPEM []byte
}

// newTLSRegistry serves the in-memory registry over TLS with httptest's
// self-signed certificate.
func newTLSRegistry(t *testing.T) tlsRegistry {
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(nopLogger())))
	srv.Config.ErrorLog = nopLogger()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return tlsRegistry{host: u.Host, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
}

// withConfig returns img with another config (so another digest), same layers.
func withConfig(t testing.TB, img v1.Image, label string) v1.Image {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.Labels = map[string]string{"name": label}
	out, err := mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
