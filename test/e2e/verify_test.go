package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// copyTag copies the manifest of repo:from to repo:to, as is: a
// signature of one digest put where the signatures of another are looked
// for.
func copyTag(t *testing.T, repo, from, to string) {
	t.Helper()
	src, err := name.NewTag(repo + ":" + from)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Get(src)
	if err != nil {
		t.Fatalf("get %s: %v", src, err)
	}
	dst, err := name.NewTag(repo + ":" + to)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Tag(dst, d); err != nil {
		t.Fatalf("tag %s: %v", dst, err)
	}
}

func tagOf(digest string) string { return strings.Replace(digest, ":", "-", 1) }

// TestMirrorVerifyKey signs images with the real cosign (a key made for
// the test; both of cosign's formats: a sigstore bundle, as an OCI 1.1
// referrer in the registry's tag schema, and a sha256-<hex>.sig tag),
// signs others with another key, replays signatures of one image onto
// another, and leaves one unsigned; rehost mirror --verify-key copies the
// signed ones only, directly, into a layout, and through an archive
// (written with --verify=warn) pushed with --from-archive --verify-key.
func TestMirrorVerifyKey(t *testing.T) {
	cs, other := newCosign(t), newCosign(t)
	src, dst := startRegistry(t), startRegistry(t)
	seedImage := func(ref string) string {
		img, err := random.Image(2048, 2)
		if err != nil {
			t.Fatal(err)
		}
		return seed(t, ref, img)
	}
	d := map[string]string{}
	for _, n := range []string{"sig-tag", "bundle", "unsigned", "wrong-key", "replayed-tag", "replayed-bundle"} {
		d[n] = seedImage(src + "/team/" + n + ":1")
	}
	d["index"] = seedIndex(t, src+"/team/index:1", "linux/amd64", "linux/arm64")
	legacy := "--new-bundle-format=false"
	cs.sign(t, src+"/team/sig-tag@"+d["sig-tag"], legacy)
	cs.sign(t, src+"/team/bundle@"+d["bundle"])
	cs.sign(t, src+"/team/index@"+d["index"])
	other.sign(t, src+"/team/wrong-key@"+d["wrong-key"], legacy)
	other.sign(t, src+"/team/wrong-key@"+d["wrong-key"])
	// Signatures of another image of the same repository, put where the
	// replayed image's are looked for: its .sig tag, its referrers tag.
	for _, n := range []string{"replayed-tag", "replayed-bundle"} {
		d[n+"/other"] = seedImage(src + "/team/" + n + ":other")
	}
	cs.sign(t, src+"/team/replayed-tag@"+d["replayed-tag/other"], legacy)
	copyTag(t, src+"/team/replayed-tag", tagOf(d["replayed-tag/other"])+".sig", tagOf(d["replayed-tag"])+".sig")
	cs.sign(t, src+"/team/replayed-bundle@"+d["replayed-bundle/other"])
	copyTag(t, src+"/team/replayed-bundle", tagOf(d["replayed-bundle/other"]), tagOf(d["replayed-bundle"]))
	// What cosign says, so that the test proves something.
	cs.verify(t, src+"/team/sig-tag@"+d["sig-tag"], legacy)
	cs.verify(t, src+"/team/bundle@"+d["bundle"])
	cs.verify(t, src+"/team/index@"+d["index"])
	other.verify(t, src+"/team/wrong-key@"+d["wrong-key"])
	if _, err := cs.try("verify", "--key", "cosign.pub", "--insecure-ignore-tlog", "--allow-insecure-registry", src+"/team/unsigned@"+d["unsigned"]); err == nil {
		t.Error("cosign verifies the unsigned image")
	}
	if t.Failed() {
		t.FailNow()
	}

	dir := t.TempDir()
	list := filepath.Join(dir, "images.txt")
	var lines []string
	for _, n := range []string{"sig-tag", "bundle", "index", "unsigned", "wrong-key", "replayed-tag", "replayed-bundle"} {
		lines = append(lines, src+"/team/"+n+":1")
	}
	if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(cs.dir, "cosign.pub")
	signed := []string{"sig-tag", "bundle", "index"}
	refused := map[string]string{
		"unsigned":        "not copied: unsigned: no cosign signature of " + d["unsigned"],
		"wrong-key":       "not copied: bad signature: no key given verifies the 2 signatures of " + d["wrong-key"],
		"replayed-tag":    "not copied: signed for another digest: a signature attached to " + d["replayed-tag"] + " (sig tag) is of " + d["replayed-tag/other"],
		"replayed-bundle": "not copied: signed for another digest: a signature attached to " + d["replayed-bundle"] + " (sigstore bundle) is of " + d["replayed-bundle/other"],
	}
	// checkRun checks a run's stderr, exit status and what reg holds
	// (reg "" for a layout).
	checkRun := func(what string, errOut []byte, err error, srcName func(string) string, reg string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: exit status 0, want 1", what)
		}
		if !regexp.MustCompile(`3 copied, 0 skipped, 4 failed, .*; signatures: 3 verified, 4 not\n`).Match(errOut) {
			t.Errorf("%s: summary:\n%s", what, errOut)
		}
		_, failures, _ := strings.Cut(string(errOut), "rehost: mirror: 4 of 7 images failed:\n")
		for n, reason := range refused {
			if !strings.Contains(failures, srcName(n)+" -> ") || !strings.Contains(failures, ": "+reason+" (--verify-key; --verify=warn copies it with a warning)") {
				t.Errorf("%s: the failures at the end lack %s: %s:\n%s", what, n, reason, errOut)
			}
			if reg != "" && digestOf(t, reg+"/team/"+n+":1") != "" {
				t.Errorf("%s: %s was copied", what, n)
			}
		}
		for _, n := range signed {
			if !strings.Contains(string(errOut), "copied  "+srcName(n)+" -> ") || !strings.Contains(string(errOut), ", signed: "+key+")") {
				t.Errorf("%s: no copied line of %s naming the key:\n%s", what, n, errOut)
			}
			if reg != "" {
				if got := digestOf(t, reg+"/team/"+n+":1"); got != d[n] {
					t.Errorf("%s: %s is %q, want %s", what, n, got, d[n])
				}
			}
		}
	}
	srcName := func(n string) string { return src + "/team/" + n + ":1" }

	// Directly: the signed images, with their signatures (cosign
	// verifies them in the target).
	_, errOut, err := runErr(nil, rehostBin(), "mirror", "--image-list", list, "--registry", dst, "--verify-key", key, "--progress", "plain")
	checkRun("mirror", errOut, err, srcName, dst)
	cs.verify(t, dst+"/team/sig-tag@"+d["sig-tag"], legacy)
	cs.verify(t, dst+"/team/bundle@"+d["bundle"])
	cs.verify(t, dst+"/team/index@"+d["index"])

	// Into a layout: the signed images, recorded with the key.
	layout := filepath.Join(dir, "layout")
	_, errOut, err = runErr(nil, rehostBin(), "mirror", "--image-list", list, "--to-oci", layout, "--verify-key", key, "--progress", "plain")
	checkRun("--to-oci", errOut, err, srcName, "")
	raw, err := os.ReadFile(filepath.Join(layout, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for _, desc := range im.Manifests {
		if desc.Annotations["dev.rehost.attachment"] == "" {
			recorded[desc.Annotations["dev.rehost.source"]] = desc.Annotations["dev.rehost.verified-key"]
		}
	}
	if len(recorded) != 3 {
		t.Errorf("the layout holds %d images, want the 3 signed: %v", len(recorded), recorded)
	}
	for _, n := range signed {
		if k := recorded[srcName(n)]; !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(k) || k != recorded[srcName("sig-tag")] {
			t.Errorf("%s: verified key %q recorded", n, k)
		}
	}

	// Through an archive written with --verify=warn: everything is
	// carried, and pushed only once verified again on the far side.
	archive := filepath.Join(dir, "bundle.tar")
	_, errOut = mustMirror(t, "--image-list", list, "--to-archive", archive, "--verify-key", key, "--verify=warn", "--progress", "plain")
	if !regexp.MustCompile(`7 copied, 0 skipped, 0 failed, .*; signatures: 3 verified, 4 not\n`).Match(errOut) || strings.Count(string(errOut), ": copied unverified: ") != 4 {
		t.Errorf("--to-archive --verify=warn:\n%s", errOut)
	}
	far := startRegistry(t)
	_, errOut, err = runErr(nil, rehostBin(), "mirror", "--from-archive", archive, "--registry", far+"/offline", "--verify-key", key, "--progress", "plain")
	checkRun("--from-archive", errOut, err, srcName, far+"/offline")
	cs.verify(t, far+"/offline/team/bundle@"+d["bundle"])
	cs.verify(t, far+"/offline/team/sig-tag@"+d["sig-tag"], legacy)

	// The far side trusts another key: nothing of the first is pushed;
	// the image that key signed is.
	other2 := startRegistry(t)
	_, errOut, err = runErr(nil, rehostBin(), "mirror", "--from-archive", archive, "--registry", other2, "--verify-key", filepath.Join(other.dir, "cosign.pub"), "--progress", "plain")
	if err == nil || !regexp.MustCompile(`1 copied, 0 skipped, 6 failed, .*; signatures: 1 verified, 6 not\n`).Match(errOut) || digestOf(t, other2+"/team/wrong-key:1") != d["wrong-key"] {
		t.Errorf("--from-archive with the other key: %v\n%s", err, errOut)
	}
}
