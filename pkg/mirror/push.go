package mirror

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/rehost/rehost/pkg/rewrite"
)

// PushRegistry sends the pushes for the targets of one registry to
// another address: the name the cluster pulls ("sea.hub:5000", which
// only the cluster's nodes resolve) is not always the address the pushing
// host reaches ("10.0.0.5:5000"). With Name "sea.hub:5000" and Address
// "10.0.0.5:5000", the target "sea.hub:5000/library/nginx:1.25" is pushed
// as "10.0.0.5:5000/library/nginx:1.25", and is still reported, pinned
// and recorded (charts' relocations included) as the former: only the
// requests change. Options.Insecure, Options.RootCAs and the Keychain
// apply to the address, which is the host rehost talks to.
type PushRegistry struct {
	// Name is the registry the targets name, with its prefix if it has
	// one: "sea.hub:5000", "sea.hub:5000/offline" (rewrite.Mapper.Root).
	Name string
	// Address is where the requests for those targets go:
	// host[:port], with a prefix that replaces Name's when given
	// ("10.0.0.5:5000/mirror").
	Address string
}

// pushRoute is a validated PushRegistry: a target whose repository is
// under name (followed by "/") is requested under addr.
type pushRoute struct{ name, addr string }

func newPushRoute(p *PushRegistry) (*pushRoute, error) {
	if p == nil {
		return nil, nil
	}
	root := func(what, s string) (string, error) {
		if s == "" {
			return "", fmt.Errorf("push registry %s: empty", what)
		}
		mp, err := rewrite.NewMapper(rewrite.Config{Registry: s})
		if err != nil {
			return "", fmt.Errorf("push registry %s %q: %w", what, s, err)
		}
		return mp.Root(), nil
	}
	n, err := root("name", p.Name)
	if err != nil {
		return nil, err
	}
	a, err := root("address", p.Address)
	if err != nil {
		return nil, err
	}
	return &pushRoute{name: n, addr: a}, nil
}

// route is where the requests for the repository repo ("sea.hub:5000/a/b")
// go, and the address to report ("" when it is repo's own registry).
func (p *pushRoute) route(repo string) (string, string) {
	if p == nil || p.name == p.addr || len(repo) <= len(p.name) || repo[len(p.name)] != '/' || !strings.EqualFold(repo[:len(p.name)], p.name) {
		return repo, ""
	}
	return p.addr + repo[len(p.name):], p.addr
}

// parseTarget parses the target reference s: its requests go where
// Options.PushRegistry routes them (an insecure host is the address's),
// while the reference keeps its name for reports. via is the address
// when it differs.
func (m *Mirror) parseTarget(s string) (r ref, via string, err error) {
	if r, err = parseRef(s, nil); err != nil {
		return ref{}, "", err
	}
	at, via := m.push.route(r.name)
	var opts []name.Option
	host, _, _ := strings.Cut(at, "/")
	if m.insecure.has(host) {
		opts = append(opts, name.Insecure)
	}
	if r.repo, err = name.NewRepository(at, opts...); err != nil {
		return ref{}, "", fmt.Errorf("%s: %w", s, err)
	}
	return r, via, nil
}
