package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The release's images: a distroless-style base made here (no base image
// is pulled) and one static binary, one image per platform under an OCI
// index. Each command that has an image is in images.
const (
	// imageUser is distroless's nonroot user. It is numeric so that a
	// kubelet can check runAsNonRoot without reading /etc/passwd.
	imageUser = "65532:65532"
	binDir    = "/usr/local/bin"
)

// imageKind is what differs between the images: the command, whose binary
// is the entrypoint at binDir/command, and the description label.
type imageKind struct {
	description string
}

// images are the commands the release builds an image of.
var images = map[string]imageKind{
	"rehost-fn": {description: "rehost as a KRM function: rewrites every image to a private registry (kustomize, kpt)"},
	"rehost":    {description: "rehost: rewrites the images of manifests and charts to a private registry and mirrors them there (rehost mirror --shard for Kubernetes Indexed Jobs)"},
}

// entrypoint is the path of a command in its image.
func entrypoint(command string) string { return binDir + "/" + command }

// The users of the base. kustomize and kpt run container functions with
// docker run --user nobody, which fails unless /etc/passwd has nobody.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
)

// imageSpec is what an image is built from.
type imageSpec struct {
	command  string            // a key of images: rehost-fn, rehost
	binaries map[string]string // platform (linux/amd64) -> the command's binary
	version  string
	revision string
	source   string // repository URL
	created  time.Time
}

// tarEntry is one entry of a layer.
type tarEntry struct {
	name     string
	mode     int64
	uid, gid int
	dir      bool
	data     []byte
}

// layerTar is a tar stream of entries with fixed times and owners, so that
// the same inputs give the same layer digest.
func layerTar(entries []tarEntry, t time.Time) ([]byte, error) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: t, Format: tar.FormatPAX,
			Typeflag: tar.TypeReg, Size: int64(len(e.data)),
		}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func layerOf(data []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// labels are the image's OCI labels (and the index's annotations).
func (s *imageSpec) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       s.command,
		"org.opencontainers.image.description": images[s.command].description,
		"org.opencontainers.image.source":      s.source,
		"org.opencontainers.image.version":     s.version,
		"org.opencontainers.image.revision":    s.revision,
		"org.opencontainers.image.created":     s.created.UTC().Format(time.RFC3339),
	}
}

// image builds the image of one platform.
func (s *imageSpec) image(platform, binary string) (v1.Image, error) {
	os_, arch, ok := strings.Cut(platform, "/")
	if !ok || os_ != "linux" {
		return nil, fmt.Errorf("platform %q: want linux/ARCH", platform)
	}
	path := entrypoint(s.command)
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	t := s.created
	baseTar, err := layerTar([]tarEntry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, gid: 65532, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}, t)
	if err != nil {
		return nil, err
	}
	binTar, err := layerTar([]tarEntry{
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(path, "/"), mode: 0o755, data: bin},
	}, t)
	if err != nil {
		return nil, err
	}
	base, err := layerOf(baseTar)
	if err != nil {
		return nil, err
	}
	cmdLayer, err := layerOf(binTar)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: arch,
		OS:           os_,
		Created:      v1.Time{Time: t},
		Config: v1.Config{
			User:       imageUser,
			Entrypoint: []string{path},
			Env:        []string{"PATH=" + binDir + ":/usr/bin:/bin"},
			WorkingDir: "/",
			Labels:     s.labels(),
		},
	})
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: t}, CreatedBy: "rehost base: /etc/passwd and /etc/group (root, nobody, nonroot 65532), /home/nonroot, /tmp", Comment: "no base image"}},
		mutate.Addendum{Layer: cmdLayer, History: v1.History{Created: v1.Time{Time: t}, CreatedBy: s.command + " " + s.version + " (" + platform + ") at " + path}},
	)
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: t})
}

// index builds the multi-platform index, platforms in sorted order.
func (s *imageSpec) index() (v1.ImageIndex, error) {
	if _, ok := images[s.command]; !ok {
		var known []string
		for c := range images {
			known = append(known, c)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("no image of command %q: want one of %s", s.command, strings.Join(known, ", "))
	}
	if len(s.binaries) == 0 {
		return nil, fmt.Errorf("no binaries: give -binary linux/amd64=PATH")
	}
	var platforms []string
	for p := range s.binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := s.image(p, s.binaries[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}},
		})
	}
	return mutate.Annotations(idx, s.labels()).(v1.ImageIndex), nil
}

// writeImage writes the index as an OCI image layout in dir and, with ref,
// pushes it there. It returns the index digest.
func writeImage(s *imageSpec, dir, ref string, insecure bool) (v1.Hash, error) {
	idx, err := s.index()
	if err != nil {
		return v1.Hash{}, err
	}
	d, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			return d, err
		}
		p, err := layout.Write(dir, empty.Index)
		if err != nil {
			return d, err
		}
		if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": s.version})); err != nil {
			return d, err
		}
	}
	if ref != "" {
		var opts []name.Option
		if insecure {
			opts = append(opts, name.Insecure)
		}
		r, err := name.ParseReference(ref, opts...)
		if err != nil {
			return d, err
		}
		if err := remote.WriteIndex(r, idx); err != nil {
			return d, fmt.Errorf("push %s: %w", ref, err)
		}
	}
	return d, nil
}
