package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

func TestReadImageList(t *testing.T) {
	rw, _ := New(rewrite.Config{})
	err := rw.ReadImageList(strings.NewReader("# sealer imageList\n\nnginx:1.25\n  quay.io/a/b:1  \n# done\n"), "imageList")
	if err != nil {
		t.Fatal(err)
	}
	imgs := rw.Images()
	if len(imgs) != 2 || imgs[0].Source != "docker.io/library/nginx:1.25" || imgs[0].Occurrences[0].Line != 3 || imgs[1].Occurrences[0].Origin != "imageList" || rw.ImageLists() != 1 {
		t.Errorf("images = %+v", imgs)
	}
	err = rw.ReadImageList(strings.NewReader("nginx # the web server\nBad:1\n{{ x }}\n"), "list")
	if err == nil || !strings.Contains(err.Error(), "list:2") || !strings.Contains(err.Error(), "list:3") {
		t.Errorf("err = %v, want both bad lines named", err)
	}
}
