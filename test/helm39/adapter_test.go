package helm39

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/app"
)

// containerImage is sealer's v1.ContainerImage (pkg/define/image/v1): an
// image and the application it belongs to, "" for none.
type containerImage struct {
	Image   string
	AppName string
}

// sealerDirs are where sealer's image finder (build/buildimage/differ.go)
// looks in a build's root: plain manifests and the imageList in
// manifests/, charts in charts/, one application per directory of
// application/apps/ (a chart or manifests).
var sealerDirs = []string{"manifests", "charts", filepath.Join("application", "apps")}

// parseContainerImageList is differ.go's ParseContainerImageList as a thin
// adapter over the core: one app.List call over the directories sealer
// reads, charts rendered by sealer's own Helm (render39), each image
// fully qualified and tagged with the applications it occurs in.
func parseContainerImageList(root string, warn func(error)) ([]containerImage, error) {
	var paths []string
	for _, d := range sealerDirs {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			paths = append(paths, filepath.Join(root, d))
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	listing, err := app.List(paths, app.Options{Renderer: app.RenderFunc(render39), Warn: warn})
	if err != nil {
		return nil, err
	}
	apps := filepath.Join(root, "application", "apps") + string(filepath.Separator)
	var out []containerImage
	for _, img := range listing.Images {
		seen := map[string]bool{}
		for _, o := range img.Occurrences {
			name := ""
			if rest, ok := strings.CutPrefix(o.File, apps); ok {
				name, _, _ = strings.Cut(rest, string(filepath.Separator))
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, containerImage{Image: img.Image, AppName: name})
			}
		}
	}
	return out, nil
}

// copyTree copies the directory from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSealerBuildRoot runs the adapter on a build root laid out as
// sealer's: the example application's manifests and imageList in
// manifests/, its chart in charts/, and the same chart and manifest again
// as two applications of application/apps/.
func TestSealerBuildRoot(t *testing.T) {
	requireHelm39(t)
	root := t.TempDir()
	copyTree(t, filepath.Join(sealerApp, "manifests"), filepath.Join(root, "manifests"))
	copyTree(t, filepath.Join(sealerApp, "charts"), filepath.Join(root, "charts"))
	copyTree(t, webChart, filepath.Join(root, "application", "apps", "web"))
	copyTree(t, filepath.Join(sealerApp, "manifests"), filepath.Join(root, "application", "apps", "operator"))
	list, err := os.ReadFile(filepath.Join(sealerApp, "imageList"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "manifests", "imageList"), list, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kubeadm.yaml"), []byte("image: not/an-application:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var warns []error
	got, err := parseContainerImageList(root, func(err error) { warns = append(warns, err) })
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool {
		if got[i].Image != got[j].Image {
			return got[i].Image < got[j].Image
		}
		return got[i].AppName < got[j].AppName
	})
	want := []containerImage{
		{"docker.io/library/busybox:1.36", ""},
		{"docker.io/library/busybox:1.36", "web"},
		{"docker.io/library/nginx:1.25", ""},
		{"docker.io/library/nginx:1.25", "web"},
		{"quay.io/example/operand:2.1", ""},
		{"quay.io/example/operator:2.1", ""},
		{"quay.io/example/operator:2.1", "operator"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n%v\nwant:\n%v", got, want)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %v", warns)
	}
	if none, err := parseContainerImageList(t.TempDir(), nil); err != nil || none != nil {
		t.Errorf("an empty root: %v, %v", none, err)
	}
}
