package manifest

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestFastPathMatchesFullParse: skipping the documents that cannot hold
// an image (no "image" substring, CustomResourceDefinitions) must not change
// the output nor the image set, byte for byte, in rewrite and in images
// mode. It runs on generated streams always, and on the 15 MB benchmark
// corpus when `make bench-data` has written it.
func TestFastPathMatchesFullParse(t *testing.T) {
	for _, c := range []struct {
		size, seed int64
	}{{2e6, 1}, {500e3, 2}, {500e3, 3}} {
		t.Run(fmt.Sprintf("generated-%d-seed%d", c.size, c.seed), func(t *testing.T) {
			t.Parallel()
			compareFastFull(t, smallCorpus(t, c.size, c.seed))
		})
	}
	t.Run("stream-15mb", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short")
		}
		compareFastFull(t, loadBenchCorpus(t))
	})
}

func compareFastFull(t *testing.T, data []byte) {
	t.Helper()
	run := func(fullParse, images bool) ([]byte, []rewrite.Image) {
		rw, err := New(rewrite.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rw.fullParse = fullParse
		var out *bytes.Buffer
		if images {
			err = rw.Rewrite(nil, bytes.NewReader(data), "stream.yaml")
		} else {
			out = &bytes.Buffer{}
			err = rw.Rewrite(out, bytes.NewReader(data), "stream.yaml")
		}
		if err != nil {
			t.Fatalf("fullParse=%v images=%v: %v", fullParse, images, err)
		}
		if out == nil {
			return nil, rw.Images()
		}
		return out.Bytes(), rw.Images()
	}
	fastOut, fastImages := run(false, false)
	fullOut, fullImages := run(true, false)

	// The comparison means something only if images were rewritten and the
	// fast path had documents to skip.
	if len(fastImages) == 0 || bytes.Equal(fullOut, data) {
		t.Fatalf("the corpus holds no image to rewrite (%d images)", len(fastImages))
	}
	if !bytes.Contains(data, []byte("\nkind: CustomResourceDefinition\n")) {
		t.Fatal("the corpus holds no CustomResourceDefinition for the fast path to skip")
	}

	if !bytes.Equal(fastOut, fullOut) {
		t.Errorf("fast path output differs from full parse output: %s", fastpathLineDiff(fastOut, fullOut))
	}
	if !reflect.DeepEqual(fastImages, fullImages) {
		t.Errorf("fast path found %d images, full parse %d; first difference: %s", len(fastImages), len(fullImages), fastpathImageDiff(fastImages, fullImages))
	}
	for _, full := range []bool{false, true} {
		if _, imgs := run(full, true); !reflect.DeepEqual(imgs, fullImages) {
			t.Errorf("images mode (fullParse=%v) found %d images, rewrite mode %d; first difference: %s", full, len(imgs), len(fullImages), fastpathImageDiff(imgs, fullImages))
		}
	}
}

// fastpathLineDiff describes the first line where a and b differ.
func fastpathLineDiff(a, b []byte) string {
	la, lb := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d: %q != %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines != %d lines", len(la), len(lb))
}

func fastpathImageDiff(a, b []rewrite.Image) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("%+v != %+v", a[i], b[i])
		}
	}
	if len(a) > len(b) {
		return fmt.Sprintf("extra %+v", a[len(b)])
	}
	if len(b) > len(a) {
		return fmt.Sprintf("missing %+v", b[len(a)])
	}
	return "none"
}
