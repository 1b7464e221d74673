package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The memory check of --to-archive and --from-archive: REHOST_ARCHIVE_MEMORY
// set to a size in MiB (make bench-archive-memory sets 2048) runs it;
// otherwise it is skipped, since it needs several times that on disk.
const memoryEnv = "REHOST_ARCHIVE_MEMORY"

// streamLayer is a layer of pseudo-random bytes generated as it is read,
// never held in memory: an uncompressed layer, its digest its diff ID.
type streamLayer struct {
	seed   uint64
	size   int64
	digest v1.Hash
}

func newStreamLayer(t *testing.T, seed uint64, size int64) *streamLayer {
	t.Helper()
	l := &streamLayer{seed: seed, size: size}
	rc, _ := l.Compressed()
	h, n, err := v1.SHA256(rc)
	if err != nil || n != size {
		t.Fatalf("layer %d: %d bytes, %v", seed, n, err)
	}
	l.digest = h
	return l
}

func (l *streamLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *streamLayer) DiffID() (v1.Hash, error) { return l.digest, nil }
func (l *streamLayer) Size() (int64, error)     { return l.size, nil }
func (l *streamLayer) MediaType() (types.MediaType, error) {
	return types.OCIUncompressedLayer, nil
}
func (l *streamLayer) Uncompressed() (io.ReadCloser, error) { return l.Compressed() }
func (l *streamLayer) Compressed() (io.ReadCloser, error) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], l.seed)
	return io.NopCloser(io.LimitReader(rand.NewChaCha8(key), l.size)), nil
}

// peakRSS runs the rehost binary and returns its peak resident set size
// (the kernel's maxrss), how long it ran, and the CPU time it used (user
// and system).
func peakRSS(t *testing.T, stdin []byte, args ...string) (int64, time.Duration, time.Duration) {
	t.Helper()
	cmd := exec.Command(rehostBin(), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("rehost %v: %v\n%s", args, err, errOut.Bytes())
	}
	d := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	return ru.Maxrss << 10, d, time.Duration(ru.Utime.Nano() + ru.Stime.Nano()) // Maxrss is in KiB on Linux
}

// TestArchiveMemory writes REHOST_ARCHIVE_MEMORY MiB of images (four images
// of four layers) from the real registry with --to-oci and --to-archive
// --part-size 100MB, and pushes each into a fresh registry with
// --from-oci and --from-archive, reporting the peak RSS and the time of
// each run of the real binary. The goal: under 100 MB of RSS for the
// archive runs, whatever the bundle's size.
func TestArchiveMemory(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv(memoryEnv))
	if mib <= 0 {
		t.Skipf("%s is not set to a size in MiB: make bench-archive-memory runs this check (it needs about 5 times that on disk)", memoryEnv)
	}
	const images, layers = 4, 4
	layerSize := int64(mib) << 20 / (images * layers)
	src := startRegistry(t)
	var list bytes.Buffer
	for i := 0; i < images; i++ {
		var ls []v1.Layer
		for j := 0; j < layers; j++ {
			ls = append(ls, newStreamLayer(t, uint64(i*layers+j+1), layerSize))
		}
		img, err := mutate.AppendLayers(empty.Image, ls...)
		if err != nil {
			t.Fatal(err)
		}
		ref := fmt.Sprintf("%s/big/image%d:1", src, i)
		seed(t, ref, img)
		fmt.Fprintln(&list, ref)
	}
	dir := t.TempDir()
	layoutDir, archive := filepath.Join(dir, "layout"), filepath.Join(dir, "bundle.tar")
	type figure struct {
		name   string
		rss    int64
		d, cpu time.Duration
	}
	var figs []figure
	measure := func(name string, stdin []byte, args ...string) {
		rss, d, cpu := peakRSS(t, stdin, args...)
		figs = append(figs, figure{name, rss, d, cpu})
	}
	common := []string{"--attachments", "none", "--progress", "none"}
	measure("--to-oci", list.Bytes(), append([]string{"mirror", "--image-list", "-", "--to-oci", layoutDir}, common...)...)
	measure("--to-archive --part-size 100MB", list.Bytes(), append([]string{"mirror", "--image-list", "-", "--to-archive", archive, "--part-size", "100MB"}, common...)...)
	parts, _ := filepath.Glob(archive + ".part*")
	var archived int64
	for _, p := range parts {
		st, _ := os.Stat(p)
		archived += st.Size()
	}
	measure("--from-oci", nil, append([]string{"mirror", "--from-oci", layoutDir, "--registry", startRegistry(t)}, common...)...)
	os.RemoveAll(layoutDir)
	measure("--from-archive", nil, append([]string{"mirror", "--from-archive", archive, "--registry", startRegistry(t)}, common...)...)

	var b bytes.Buffer
	fmt.Fprintf(&b, "%d MiB of images (%d images of %d layers of %d MiB); archive %d bytes in %d parts\n", mib, images, layers, layerSize>>20, archived, len(parts))
	for _, f := range figs {
		fmt.Fprintf(&b, "  %-32s peak RSS %6.1f MB  %6.1fs  (CPU %5.1fs)\n", f.name, float64(f.rss)/1e6, f.d.Seconds(), f.cpu.Seconds())
	}
	fmt.Fprintf(&b, "  time ratios: --to-archive/--to-oci %.2f, --from-archive/--from-oci %.2f\n", figs[1].d.Seconds()/figs[0].d.Seconds(), figs[3].d.Seconds()/figs[2].d.Seconds())
	t.Log("\n" + b.String())
	for _, f := range figs[1:2] {
		if f.rss >= 100e6 {
			t.Errorf("%s: peak RSS %.1f MB, the goal is under 100 MB", f.name, float64(f.rss)/1e6)
		}
	}
	if figs[3].rss >= 100e6 {
		t.Errorf("--from-archive: peak RSS %.1f MB, the goal is under 100 MB", float64(figs[3].rss)/1e6)
	}
	if len(parts) < int(int64(mib)<<20/100e6) {
		t.Errorf("%d parts of 100 MB for %d MiB", len(parts), mib)
	}
}
