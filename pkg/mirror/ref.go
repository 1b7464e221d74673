package mirror

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/rehost/rehost/pkg/rewrite"
)

// ref is a job reference parsed for go-containerregistry. It keeps a tag
// and a digest written together ("repo:tag@sha256:…"), which
// name.ParseReference would reduce to the digest.
type ref struct {
	repo   name.Repository
	name   string // the repository as rehost spells it ("docker.io/library/nginx"), for reports
	tag    string // "" when none was written
	digest string // "" when none was written
}

// at is the same repository with another tag or digest.
func (r ref) at(tag, digest string) ref {
	return ref{repo: r.repo, name: r.name, tag: tag, digest: digest}
}

// String is the reference as rehost spells it.
func (r ref) String() string {
	s := r.name
	if s == "" {
		s = r.repo.String()
	}
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// parseRef parses s with rehost's parser (name package underneath); the
// registry is insecure (plain HTTP allowed) when insecure says so.
func parseRef(s string, insecure func(host string) bool) (ref, error) {
	r, err := rewrite.ParseRef(s)
	if err != nil {
		return ref{}, err
	}
	var opts []name.Option
	if insecure != nil && insecure(r.Registry) {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(r.RepositoryName(), opts...)
	if err != nil {
		return ref{}, fmt.Errorf("%s: %w", s, err)
	}
	out := ref{repo: repo, name: r.RepositoryName(), tag: r.Tag, digest: r.Digest}
	if out.tag == "" && out.digest == "" {
		out.tag = name.DefaultTag
	}
	return out, nil
}

// read is the reference to read: the digest when one was written, since
// that is what a container runtime pulls.
func (r ref) read() name.Reference {
	if r.digest != "" {
		return r.repo.Digest(r.digest)
	}
	return r.repo.Tag(r.tag)
}

// write is the reference to write: the tag when one was written (the
// manifest is copied byte for byte, so its digest resolves too), else the
// digest.
func (r ref) write() name.Reference {
	if r.tag != "" {
		return r.repo.Tag(r.tag)
	}
	return r.repo.Digest(r.digest)
}

// address is where the reference is read or written, as the registry is
// asked ("mirror.corp:5000/dockerhub/library/nginx:1.25"): the registry
// and repository of repo, which String does not show when name is set.
func (r ref) address() string {
	s := r.repo.RegistryStr() + "/" + r.repo.RepositoryStr()
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}
