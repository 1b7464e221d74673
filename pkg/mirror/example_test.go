package mirror_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/mirror"
	"github.com/rehost/rehost/pkg/rewrite"
)

// localRegistry serves an in-memory registry on 127.0.0.1 and returns its host.
func localRegistry() (string, func()) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	return strings.TrimPrefix(srv.URL, "http://"), srv.Close
}

// Copy the images of a manifest into the private registry, using the same
// mapping as the rewritten manifest.
func ExampleMirror_Copy() {
	source, stop := localRegistry()
	defer stop()
	private, stop2 := localRegistry()
	defer stop2()
	img, _ := random.Image(1024, 2)
	ref, _ := name.ParseReference(source + "/team/app:1.0")
	if err := remote.Write(ref, img); err != nil {
		panic(err)
	}

	rw, err := manifest.New(rewrite.Config{Registry: private})
	if err != nil {
		panic(err)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec:\n  containers:\n  - {name: app, image: " + source + "/team/app:1.0}\n"
	if err := rw.Rewrite(nil, strings.NewReader(pod), "pod.yaml"); err != nil {
		panic(err)
	}

	m, err := mirror.New(mirror.Options{Keychain: authn.NewMultiKeychain()})
	if err != nil {
		panic(err)
	}
	s := m.Copy(context.Background(), mirror.Jobs(rw.Images()))
	fmt.Println(s.Copied, "copied,", s.Failed, "failed")
	fmt.Println(strings.TrimPrefix(s.Results[0].Target, private))

	// A second run finds the image in place.
	s = m.Copy(context.Background(), mirror.Jobs(rw.Images()))
	fmt.Println(s.Skipped, "skipped")
	// Output:
	// 1 copied, 0 failed
	// /team/app:1.0
	// 1 skipped
}

// Signatures travel with their images: here a cosign signature stored
// under the "sha256-<hex>.sig" tag of the image's repository.
func ExampleMirror_Copy_attachments() {
	source, stop := localRegistry()
	defer stop()
	private, stop2 := localRegistry()
	defer stop2()
	img, _ := random.Image(1024, 1)
	digest, _ := img.Digest()
	ref, _ := name.ParseReference(source + "/team/app:1.0")
	if err := remote.Write(ref, img); err != nil {
		panic(err)
	}
	sig, _ := random.Image(256, 1) // stands in for cosign's signature manifest
	sigRef, _ := name.ParseReference(source + "/team/app:sha256-" + digest.Hex + ".sig")
	if err := remote.Write(sigRef, sig); err != nil {
		panic(err)
	}

	m, err := mirror.New(mirror.Options{Keychain: authn.NewMultiKeychain(), Attachments: mirror.AttachmentsAll})
	if err != nil {
		panic(err)
	}
	s := m.Copy(context.Background(), []mirror.Job{{Source: source + "/team/app:1.0", Target: private + "/team/app:1.0"}})
	fmt.Println(s.Copied, "image copied,", s.Attachments.Copied, "attachment copied")
	a := s.Results[0].Attachments[0]
	fmt.Println(a.Kind, strings.TrimPrefix(a.Destination, private) == "/team/app:sha256-"+digest.Hex+".sig")
	// Output:
	// 1 image copied, 1 attachment copied
	// signature true
}

// Carry images across an air gap in one file, split into parts for the
// media, then push them where the registry really is: the targets name
// sea.hub:5000 (what the cluster pulls), the pushes go to the address the
// pushing host reaches.
func ExampleMirror_ExportArchive() {
	source, stop := localRegistry()
	defer stop()
	registryNode, stop2 := localRegistry()
	defer stop2()
	img, _ := random.Image(700<<10, 2)
	ref, _ := name.ParseReference(source + "/team/app:1.0")
	if err := remote.Write(ref, img); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "media")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// Connected side.
	mapper, err := rewrite.NewMapper(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		panic(err)
	}
	mp, err := mapper.Map(source + "/team/app:1.0")
	if err != nil {
		panic(err)
	}
	jobs := []mirror.Job{{Source: mp.Source.Qualified(), Target: mp.Target.Qualified()}}
	m, err := mirror.New(mirror.Options{Keychain: authn.NewMultiKeychain()})
	if err != nil {
		panic(err)
	}
	bundle := filepath.Join(dir, "bundle.tar")
	s, err := m.ExportArchive(context.Background(), jobs, bundle, mirror.ArchiveOptions{PartSize: mirror.MinPartSize})
	if err != nil || s.Err() != nil {
		panic(fmt.Sprint(err, s.Err()))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}

	// Air-gapped side: the parts are checked, then pushed.
	far, err := mirror.New(mirror.Options{
		Keychain:     authn.NewMultiKeychain(),
		PushRegistry: &mirror.PushRegistry{Name: mapper.Root(), Address: registryNode},
	})
	if err != nil {
		panic(err)
	}
	s, err = far.ImportArchive(context.Background(), bundle, mapper)
	if err != nil || s.Err() != nil {
		panic(fmt.Sprint(err, s.Err()))
	}
	r := s.Results[0]
	fmt.Println(r.Status, r.Target, r.Via == registryNode)
	// Output:
	// bundle.tar.part000
	// bundle.tar.part001
	// bundle.tar.sha256
	// copied sea.hub:5000/team/app:1.0 true
}

// One of three workers: the shard comes from the command line or the
// environment (a Kubernetes Indexed Job's JOB_COMPLETION_INDEX); every
// tag of a repository is in the same shard, and the three shards
// together hold every job once.
func ExampleShard() {
	jobs := []mirror.Job{
		{Source: "docker.io/library/nginx:1.25"},
		{Source: "docker.io/library/nginx:1.26"},
		{Source: "quay.io/jetstack/cert-manager-controller:v1.14.0"},
		{Source: "registry.k8s.io/pause:3.10"},
	}
	for k := 0; k < 3; k++ {
		sh, err := mirror.ParseShard(fmt.Sprintf("%d/3", k))
		if err != nil {
			panic(err)
		}
		fmt.Printf("shard %s:", sh)
		for _, j := range sh.Jobs(jobs) {
			fmt.Print(" ", j.Source)
		}
		fmt.Println()
	}
	_, err := mirror.ParseShard("3/3")
	fmt.Println(err)
	// Output:
	// shard 0/3: docker.io/library/nginx:1.25 docker.io/library/nginx:1.26
	// shard 1/3: quay.io/jetstack/cert-manager-controller:v1.14.0
	// shard 2/3: registry.k8s.io/pause:3.10
	// shard 3/3: the index 3 is not less than the count 3: the 3 shards are numbered 0 to 2
}
