package manifest

import (
	"fmt"
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

// TestReadImageListSkipInvalid: with SkipInvalid an invalid line is a
// warning naming the file and the line, and skipped; without, an error
// naming them. sealer's quotes around a reference are trimmed.
func TestReadImageListSkipInvalid(t *testing.T) {
	const list = "\"nginx:1.25\"\n'redis:7' # cache\nBad:1\nquay.io/a/b:1\n"
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("SkipInvalid=%v", skip), func(t *testing.T) {
			var warns []string
			rw, err := New(rewrite.Config{SkipInvalid: skip}, WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
			if err != nil {
				t.Fatal(err)
			}
			err = rw.ReadImageList(strings.NewReader(list), "app/imageList")
			got := rw.Sources()
			if skip {
				want := []string{"docker.io/library/nginx:1.25", "docker.io/library/redis:7", "quay.io/a/b:1"}
				if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("SkipInvalid: err %v, images %q, want %q", err, got, want)
				}
				if len(warns) != 1 || !strings.HasPrefix(warns[0], `app/imageList:3: invalid image reference "Bad:1"`) {
					t.Errorf("SkipInvalid: warnings %q", warns)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), `app/imageList:3: invalid image reference "Bad:1"`) || len(warns) != 0 {
				t.Errorf("err = %v, warnings %q: want an error naming app/imageList:3", err, warns)
			}
		})
	}
}
