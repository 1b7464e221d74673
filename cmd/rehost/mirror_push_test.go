package main

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestMirrorPushRegistry: --push-registry sends the pushes to a loopback
// registry while every name rehost prints is the --registry one, which
// does not resolve here: the progress lines (with "via"), and the --pin
// lines that rehost rewrite --pins reads.
func TestMirrorPushRegistry(t *testing.T) {
	noDockerConfig(t)
	src, dst := loopbackRegistry(t, nil), loopbackRegistry(t, nil)
	img := pushRandom(t, src+"/team/app:1")
	digest, _ := img.Digest()
	list := src + "/team/app:1\n"
	args := []string{"mirror", "--image-list", "-", "--registry", "sea.hub:5000", "--push-registry", dst, "--attachments", "none"}
	out, errOut, code := rehost(t, list, append(args, "--progress", "plain")...)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	if want := "copied  " + src + "/team/app:1 -> sea.hub:5000/team/app:1 via " + dst + " (" + digest.String()[:19]; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	r, _ := name.ParseReference(dst + "/team/app:1")
	if d, err := remote.Head(r); err != nil || d.Digest != digest {
		t.Fatalf("%s: %v %v, want %s", r, d, err, digest)
	}
	out, errOut, code = rehost(t, list, append(args, "--pin", "--progress", "none")...)
	if want := src + "/team/app:1\tsea.hub:5000/team/app:1@" + digest.String() + "\n"; code != 0 || out != want {
		t.Errorf("--pin: exit %d, %q, want %q: %s", code, out, want, errOut)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--push-registry", "https://10.0.0.5:5000"}, "--push-registry https://10.0.0.5:5000: want HOST[:PORT][/PREFIX]"},
		{[]string{"--push-registry", "10.0.0.5:5000", "--to-oci", t.TempDir()}, "--to-oci pushes nothing"},
	} {
		_, errOut, code := rehost(t, list, append([]string{"mirror", "--image-list", "-", "--dry-run"}, c.args...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
}
