package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// shardSource is the registry the image list names; --source-mirror
// reads it from the loopback registry, so that the names (and so the
// shards) do not depend on the port the test gets.
const shardSource = "registry.example"

// seedShardSource seeds src with repos repositories of small indexes and
// images, each with a cosign signature tag and an OCI referrer (an SBOM),
// one repository with two tags of one index; it returns the image list.
func seedShardSource(t *testing.T, src string, repos int) string {
	t.Helper()
	var list strings.Builder
	for i := 0; i < repos; i++ {
		repo := fmt.Sprintf("%s/team/app-%d", src, i)
		var d string
		if i%2 == 0 {
			d = seedIndex(t, repo+":1.0", "linux/amd64", "linux/arm64")
		} else {
			d = seedIndex(t, repo+":1.0", "linux/amd64")
		}
		fmt.Fprintf(&list, "%s/team/app-%d:1.0\n", shardSource, i)
		if i == 3 {
			seed(t, repo+":latest", mustIndex(t, repo+":1.0"))
			fmt.Fprintf(&list, "%s/team/app-%d:latest\n", shardSource, i)
		}
		h, _ := v1.NewHash(d)
		sig := artifact(t, "application/vnd.dev.cosign.artifact.sig.v1+json", "signature of "+d)
		seed(t, repo+":"+h.Algorithm+"-"+h.Hex+".sig", sig)
		sbom := mutate.Subject(artifact(t, "application/spdx+json", "sbom of "+d), v1.Descriptor{MediaType: types.OCIImageIndex, Digest: h, Size: sizeOf(t, repo+"@"+d)}).(v1.Image)
		sd, err := sbom.Digest()
		if err != nil {
			t.Fatal(err)
		}
		seed(t, repo+"@"+sd.String(), sbom)
	}
	return list.String()
}

// artifact is a one-layer OCI artifact of the media type.
func artifact(t *testing.T, mediaType, content string) v1.Image {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.MediaType(mediaType))
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(content), types.MediaType(mediaType))})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func mustIndex(t *testing.T, ref string) v1.ImageIndex {
	t.Helper()
	r, _ := name.ParseReference(ref)
	idx, err := remote.Index(r)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func sizeOf(t *testing.T, ref string) int64 {
	t.Helper()
	r, _ := name.ParseReference(ref)
	d, err := remote.Head(r)
	if err != nil {
		t.Fatal(err)
	}
	return d.Size
}

// registryContents is every tag of every repository of a registry with
// its digest, and the referrers of each tagged manifest:
// "repo:tag digest" and "repo@digest <- referrer" lines, sorted.
func registryContents(t *testing.T, host string) []string {
	t.Helper()
	reg, err := name.NewRegistry(host)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(t.Context(), reg)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range repos {
		repo := reg.Repo(r)
		tags, err := remote.List(repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range tags {
			d := digestOf(t, repo.Tag(tag).String())
			out = append(out, r+":"+tag+" "+d)
			h, _ := v1.NewHash(d)
			idx, err := remote.Referrers(repo.Digest(h.String()))
			if err != nil {
				t.Fatalf("referrers of %s@%s: %v", r, d, err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range im.Manifests {
				out = append(out, r+"@"+d+" <- "+m.Digest.String())
			}
		}
	}
	sort.Strings(out)
	return out
}

// copiedLine is a line of --progress plain for an image or attachment
// copied: "copied  SRC -> DST (...)", "  copied  KIND SRC -> DST (...)".
var copiedLine = regexp.MustCompile(`^\s*copied\s+(?:(?:signature|attestation|sbom|artifact)\s+)?(\S+) -> `)

// copiedBy is what a run's stderr says it copied: sources of images and
// attachments.
func copiedBy(stderr []byte) []string {
	var out []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if m := copiedLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestMirrorShards runs rehost mirror --shard K/3, three processes at
// once against one registry (the real `registry`), and compares with one
// run: the same tags, digests and referrers; each image and attachment
// copied by one shard; a shard run again copies nothing. Then three
// processes push the shards of one archive (--from-archive --shard) and
// give the same registry again.
func TestMirrorShards(t *testing.T) {
	src, one, three := startRegistry(t), startRegistry(t), startRegistry(t)
	list := filepath.Join(t.TempDir(), "imageList")
	if err := os.WriteFile(list, []byte(seedShardSource(t, src, 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"mirror", "--image-list", list, "--source-mirror", shardSource + "=" + src, "--source-mirror-only", "--insecure", "--progress", "plain"}

	_, wholeErr, err := runErr(nil, rehostBin(), append(common, "--registry", one)...)
	if err != nil {
		t.Fatalf("one run: %v\n%s", err, wholeErr)
	}
	whole := copiedBy(wholeErr)
	if !bytes.Contains(wholeErr, []byte("11 copied, 0 skipped, 0 failed")) {
		t.Fatalf("one run: want 11 images copied:\n%s", wholeErr)
	}

	// Three shards at once, as the pods of an Indexed Job run.
	shards := func(extra ...string) [3][]byte {
		var (
			wg   sync.WaitGroup
			outs [3][]byte
			errs [3]error
		)
		for k := 0; k < 3; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := append(append([]string{}, extra...), "--shard", fmt.Sprintf("%d/3", k))
				cmd := exec.Command(rehostBin(), args...)
				var e bytes.Buffer
				cmd.Stderr = &e
				errs[k] = cmd.Run()
				outs[k] = e.Bytes()
			}()
		}
		wg.Wait()
		for k, err := range errs {
			if err != nil {
				t.Fatalf("shard %d/3: %v\n%s", k, err, outs[k])
			}
		}
		return outs
	}
	outs := shards(append(common, "--registry", three)...)
	seen := map[string]int{}
	for k, out := range outs {
		if !bytes.Contains(out, []byte(fmt.Sprintf("shard %d/3: ", k))) || !bytes.Contains(out, []byte("left to the other shards")) {
			t.Errorf("shard %d/3: no summary of the shard:\n%s", k, out)
		}
		// Two tags of one index may both copy its signature, in a shard
		// as in one run, whichever comes first: a shard counts once.
		got := copiedBy(out)
		if len(got) == 0 {
			t.Errorf("shard %d/3 copied nothing:\n%s", k, out)
		}
		mine := map[string]bool{}
		for _, s := range got {
			mine[s] = true
		}
		for s := range mine {
			seen[s]++
		}
	}
	wholeSet := map[string]bool{}
	for _, s := range whole {
		wholeSet[s] = true
	}
	for s, n := range seen {
		if n != 1 || !wholeSet[s] {
			t.Errorf("%s copied by %d shards (by the one run: %v)", s, n, wholeSet[s])
		}
	}
	if len(seen) != len(wholeSet) {
		t.Errorf("the shards copied %d images and attachments, the one run %d", len(seen), len(wholeSet))
	}
	want := registryContents(t, one)
	if got := registryContents(t, three); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("three shards wrote:\n%s\none run:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) < 11+10+10 {
		t.Errorf("the target holds %d tags and referrers, want at least 31 (11 images, 10 signatures, 10 referrers):\n%s", len(want), strings.Join(want, "\n"))
	}

	// A shard run again resumes: nothing new.
	_, again, err := runErr(nil, rehostBin(), append(common, "--registry", three, "--shard", "1/3")...)
	if err != nil {
		t.Fatalf("shard 1/3 again: %v\n%s", err, again)
	}
	if c := copiedBy(again); len(c) != 0 || !regexp.MustCompile(`shard 1/3: 0 copied, [1-9]\d* skipped, 0 failed.*attachments: 0 copied`).Match(again) {
		t.Errorf("shard 1/3 again copied %v:\n%s", c, again)
	}

	// One archive, pushed by three shards at once.
	archive := filepath.Join(t.TempDir(), "bundle.tar")
	if _, errOut, err := runErr(nil, rehostBin(), "mirror", "--image-list", list, "--source-mirror", shardSource+"="+src, "--source-mirror-only", "--progress", "plain", "--to-archive", archive); err != nil {
		t.Fatalf("--to-archive: %v\n%s", err, errOut)
	}
	fromArchive := startRegistry(t)
	seen = map[string]int{}
	for _, out := range shards("mirror", "--from-archive", archive, "--registry", fromArchive, "--insecure", "--progress", "plain") {
		// Two tags of one index may both push its signature, in a shard
		// as in one run, whichever comes first: a shard counts once.
		mine := map[string]bool{}
		for _, s := range copiedBy(out) {
			mine[s] = true
		}
		for s := range mine {
			seen[s]++
		}
	}
	if len(seen) != len(wholeSet) {
		t.Errorf("--from-archive: the shards pushed %d images and attachments, the one run copied %d", len(seen), len(wholeSet))
	}
	for s, n := range seen {
		if n != 1 {
			t.Errorf("--from-archive: %s pushed by %d shards", s, n)
		}
	}
	if got := registryContents(t, fromArchive); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("three shards of the archive pushed:\n%s\none run:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
