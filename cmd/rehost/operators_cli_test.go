package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const calicoApp = "../../testdata/operators/calico-app"

// TestSealerAppImages: a sealer app directory with the tigera operator's
// manifests, its Installation and a hand-kept imageList lists the operator
// and the list's images, and nothing else; no warning about the operator's
// images, since the list is given.
func TestSealerAppImages(t *testing.T) {
	out, errOut, code := rehost(t, "", "images", calicoApp)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	want := `docker.io/calico/apiserver:v3.28.0
docker.io/calico/cni:v3.28.0
docker.io/calico/kube-controllers:v3.28.0
docker.io/calico/node:v3.28.0
docker.io/calico/pod2daemon-flexvol:v3.28.0
docker.io/calico/typha:v3.28.0
quay.io/tigera/operator:v1.34.0
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}

	// -o json: the list's images carry origin imageList and their line.
	out, _, code = rehost(t, "", "images", "-o", "json", calicoApp)
	var imgs []struct {
		Source      string
		Occurrences []struct {
			File   string
			Line   int
			Origin string
		}
	}
	if err := decodeImages(out, &imgs); err != nil || code != 0 {
		t.Fatalf("code %d, %v: %s", code, err, out)
	}
	if o := imgs[3].Occurrences[0]; imgs[3].Source != "docker.io/calico/node:v3.28.0" || o.Origin != "imageList" || o.Line != 3 || filepath.Base(o.File) != "imageList" {
		t.Errorf("node: %+v", imgs[3])
	}
}

// TestSealerAppRewrite: rehost rewrite sets the Installation's registry
// and says so; the image list joins --image-list.
func TestSealerAppRewrite(t *testing.T) {
	list := filepath.Join(t.TempDir(), "out.list")
	out, errOut, code := rehost(t, "", "rewrite", calicoApp, "--image-list", list)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	if !strings.Contains(out, "kind: Installation\nmetadata:\n  name: default\nspec:\n  registry: sea.hub:5000/\n  # Configures Calico networking.\n") {
		t.Errorf("no registry in the Installation:\n%s", out)
	}
	if !strings.Contains(out, "image: sea.hub:5000/tigera/operator:v1.34.0") {
		t.Errorf("operator image not rewritten:\n%s", out)
	}
	// The line docs/operators.md quotes, then the flag that leaves it out.
	if !hasFacts(errOut, "custom-resources.yaml:9: Installation default: registry setting spec.registry: sea.hub:5000/ added: ", "--no-add-registry", "noAddRegistry: true") || strings.Contains(errOut, "starts images") {
		t.Errorf("stderr: %s", errOut)
	}
	got, _ := os.ReadFile(list)
	if strings.Count(string(got), "\n") != 7 || !strings.Contains(string(got), "docker.io/calico/typha:v3.28.0\n") {
		t.Errorf("--image-list:\n%s", got)
	}

	// --no-add-registry: reported, not added.
	out, errOut, code = rehost(t, "", "rewrite", "--no-add-registry", filepath.Join(calicoApp, "custom-resources.yaml"))
	if code != 0 || strings.Contains(out, "registry:") || !strings.Contains(errOut, "not set (noAddRegistry)") {
		t.Errorf("--no-add-registry: code %d, stderr %s\n%s", code, errOut, out)
	}
}

// TestOperatorWarning: without an image list, the tigera operator's
// images are named in a warning, once, by images, rewrite and mirror.
func TestOperatorWarning(t *testing.T) {
	cr := filepath.Join(calicoApp, "custom-resources.yaml")
	for _, args := range [][]string{{"images", cr}, {"rewrite", cr}, {"mirror", "--dry-run", "--progress", "none", cr}} {
		_, errOut, code := rehost(t, "", args...)
		if code != 0 || strings.Count(errOut, "the tigera operator starts images no manifest names") != 1 || !strings.Contains(errOut, "): list them in an imageList file beside the manifests (or pass one with --images-from) so that they are mirrored\n") {
			t.Errorf("%v: code %d, stderr:\n%s", args, code, errOut)
		}
	}
	list := filepath.Join(calicoApp, "imageList")
	_, errOut, code := rehost(t, "", "images", "--images-from", list, cr)
	if code != 0 || strings.Contains(errOut, "starts images") {
		t.Errorf("--images-from: code %d, stderr:\n%s", code, errOut)
	}
}

// TestImagesFrom: --images-from reads a list explicitly (stdin too, and
// without a PATH nothing else); invalid lines fail with file:line.
func TestImagesFrom(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"good":          "# list\nnginx:1.25 # the web server\n\nquay.io/a/b:1\n",
		"bad":           "nginx:1.25\nNginx:1\n",
		"app/imageList": "busybox:1.36\nnot a reference\n",
	})
	out, errOut, code := rehost(t, "", "images", "--images-from", filepath.Join(dir, "good"))
	if code != 0 || out != "docker.io/library/nginx:1.25\nquay.io/a/b:1\n" {
		t.Errorf("code %d, stdout %q, stderr %s", code, out, errOut)
	}
	out, _, code = rehost(t, "redis:7\n", "images", "--images-from", "-", "--images-from", filepath.Join(dir, "good"))
	if code != 0 || out != "docker.io/library/nginx:1.25\ndocker.io/library/redis:7\nquay.io/a/b:1\n" {
		t.Errorf("stdin list: code %d, stdout %q", code, out)
	}
	_, errOut, code = rehost(t, "", "images", "--images-from", filepath.Join(dir, "bad"))
	if code != 1 || !strings.Contains(errOut, filepath.Join(dir, "bad")+":2: ") {
		t.Errorf("bad list: code %d, stderr %s", code, errOut)
	}
	_, errOut, code = rehost(t, "", "images", filepath.Join(dir, "app"))
	if code != 1 || !strings.Contains(errOut, filepath.Join(dir, "app", "imageList")+":2: ") {
		t.Errorf("bad imageList in a directory: code %d, stderr %s", code, errOut)
	}
	// mirror: the list's images are copied (here: planned).
	out, errOut, code = rehost(t, "", "mirror", "--dry-run", "--progress", "plain", "--images-from", filepath.Join(dir, "good"))
	if code != 0 || !strings.Contains(out+errOut, "quay.io/a/b:1") || !strings.Contains(out+errOut, "docker.io/library/nginx:1.25") {
		t.Errorf("mirror: code %d, stdout %s, stderr %s", code, out, errOut)
	}
}
