package mirror

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/pkg/rewrite"
)

// shopChartYAML is a Chart.yaml with every field Helm's config carries.
const shopChartYAML = `apiVersion: v2
name: shop
version: 1.2.0+build.7
appVersion: "3.1"
description: A shop.
type: application
home: https://shop.example
sources: [https://github.com/example/shop, https://mirror.example/shop]
keywords: [shop]
kubeVersion: ">=1.25.0"
maintainers:
- {name: Ann, email: ann@example.com}
- {name: Bob}
annotations:
  helm.sh/images: |
    - name: web
      image: ghcr.io/shop/web:1.0
  org.opencontainers.image.title: not the name
dependencies:
- {name: cache, version: 1.0.0, repository: "", alias: redis, import-values: [{child: a, parent: b}]}
`

// chartArchive packages a chart as `helm package` does: every file under
// one top directory, in a gzipped tar, with fixed times so that the bytes
// are the same at each call.
func chartArchive(t testing.TB, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := 0; i+1 < len(files); i += 2 {
		h := &tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func shopArchive(t testing.TB) []byte {
	return chartArchive(t,
		"shop/Chart.yaml", shopChartYAML,
		"shop/values.yaml", "image: ghcr.io/shop/web:1.0\n",
		"shop/templates/web.yaml", "image: {{ .Values.image }}\n",
		"shop/charts/cache/Chart.yaml", "apiVersion: v2\nname: cache\nversion: 1.0.0\n")
}

func newChart(t testing.TB, archive, prov []byte) *Chart {
	t.Helper()
	c, err := NewChart(archive, prov)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestChartArtifact: the artifact is what `helm push` writes — an OCI
// image manifest with Helm's config and layer media types, the config the
// JSON of Helm's chart.Metadata, the layers the archive and the provenance
// file in digest order, Helm's OCI annotations — without the creation
// time.
func TestChartArtifact(t *testing.T) {
	archive := shopArchive(t)
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----\n...\n")
	for _, withProv := range []bool{false, true} {
		var p []byte
		if withProv {
			p = prov
		}
		c := newChart(t, archive, p)
		if c.Name != "shop" || c.Version != "1.2.0+build.7" || c.Tag() != "1.2.0_build.7" {
			t.Errorf("name %q version %q tag %q", c.Name, c.Version, c.Tag())
		}
		img, err := c.Image()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := img.RawManifest()
		if err != nil {
			t.Fatal(err)
		}
		var m v1.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m.SchemaVersion != 2 || m.MediaType != types.OCIManifestSchema1 {
			t.Errorf("manifest schema %d media type %q", m.SchemaVersion, m.MediaType)
		}
		if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
			t.Errorf("image media type %q", mt)
		}
		if m.Config.MediaType != "application/vnd.cncf.helm.config.v1+json" {
			t.Errorf("config media type %q", m.Config.MediaType)
		}
		cfg, err := img.RawConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		// helm push's config for this Chart.yaml (json.Marshal of Helm's
		// chart.Metadata): its field order, Helm's omitempty rules.
		wantCfg := `{"name":"shop","home":"https://shop.example","sources":["https://github.com/example/shop","https://mirror.example/shop"],"version":"1.2.0+build.7","description":"A shop.","keywords":["shop"],"maintainers":[{"name":"Ann","email":"ann@example.com"},{"name":"Bob"}],"apiVersion":"v2","appVersion":"3.1","annotations":{"helm.sh/images":"- name: web\n  image: ghcr.io/shop/web:1.0\n","org.opencontainers.image.title":"not the name"},"kubeVersion":"\u003e=1.25.0","dependencies":[{"name":"cache","version":"1.0.0","repository":"","import-values":[{"child":"a","parent":"b"}],"alias":"redis"}],"type":"application"}`
		if string(cfg) != wantCfg {
			t.Errorf("config:\n%s\nwant:\n%s", cfg, wantCfg)
		}
		if h, n, _ := v1.SHA256(bytes.NewReader(cfg)); m.Config.Digest != h || m.Config.Size != n {
			t.Errorf("config descriptor %v does not match the config (%s, %d)", m.Config, h, n)
		}
		wantLayers := map[types.MediaType][]byte{"application/vnd.cncf.helm.chart.content.v1.tar+gzip": archive}
		if withProv {
			wantLayers["application/vnd.cncf.helm.chart.provenance.v1.prov"] = prov
		}
		if len(m.Layers) != len(wantLayers) {
			t.Fatalf("%d layers, want %d", len(m.Layers), len(wantLayers))
		}
		for i, l := range m.Layers {
			want, ok := wantLayers[l.MediaType]
			if h, n, _ := v1.SHA256(bytes.NewReader(want)); !ok || l.Digest != h || l.Size != n {
				t.Errorf("layer %d %s %s %d does not match", i, l.MediaType, l.Digest, l.Size)
			}
			if i > 0 && m.Layers[i-1].Digest.String() > l.Digest.String() {
				t.Errorf("layers not in digest order")
			}
			layer, err := img.LayerByDigest(l.Digest)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := layer.Compressed()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			got.ReadFrom(rc)
			rc.Close()
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("layer %s content differs", l.MediaType)
			}
		}
		wantAnn := map[string]string{
			"org.opencontainers.image.title":       "shop",
			"org.opencontainers.image.version":     "1.2.0+build.7",
			"org.opencontainers.image.description": "A shop.",
			"org.opencontainers.image.url":         "https://shop.example",
			"org.opencontainers.image.source":      "https://github.com/example/shop",
			"org.opencontainers.image.authors":     "Ann (ann@example.com), Bob",
			"helm.sh/images":                       "- name: web\n  image: ghcr.io/shop/web:1.0\n",
		}
		if len(m.Annotations) != len(wantAnn) {
			t.Errorf("annotations %v, want %v", m.Annotations, wantAnn)
		}
		for k, v := range wantAnn {
			if m.Annotations[k] != v {
				t.Errorf("annotation %s = %q, want %q", k, m.Annotations[k], v)
			}
		}
		if _, ok := m.Annotations["org.opencontainers.image.created"]; ok {
			t.Error("a creation time is recorded: the digest would change at each run")
		}
	}
}

// TestChartDigestStable: the same archive gives the same digest, at every
// call; another archive or provenance file another one.
func TestChartDigestStable(t *testing.T) {
	digest := func(archive, prov []byte) v1.Hash {
		h, err := newChart(t, archive, prov).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a := digest(shopArchive(t), nil)
	if b := digest(shopArchive(t), nil); a != b {
		t.Errorf("two charts from the same bytes: %s and %s", a, b)
	}
	img, _ := newChart(t, shopArchive(t), nil).Image()
	if h, _ := img.Digest(); h != a {
		t.Errorf("Image().Digest() = %s, Digest() = %s", h, a)
	}
	if b := digest(shopArchive(t), []byte("prov")); a == b {
		t.Error("a provenance file does not change the digest")
	}
	other := chartArchive(t, "shop/Chart.yaml", shopChartYAML, "shop/values.yaml", "image: sea.hub:5000/shop/web:1.0\n")
	if b := digest(other, nil); a == b {
		t.Error("other content, same digest")
	}
}

func TestNewChartErrors(t *testing.T) {
	big := strings.Repeat("x", maxChartYAML+1)
	for _, tt := range []struct {
		name    string
		archive []byte
		want    string
	}{
		{"not gzip", []byte("apiVersion: v2\n"), "not a packaged Helm chart"},
		{"no Chart.yaml", chartArchive(t, "shop/values.yaml", "a: 1\n"), "no Chart.yaml in its top directory"},
		{"only a subchart's", chartArchive(t, "shop/charts/sub/Chart.yaml", "name: sub\nversion: 1.0.0\n"), "no Chart.yaml in its top directory"},
		{"no name", chartArchive(t, "shop/Chart.yaml", "version: 1.0.0\n"), "Chart.yaml has no name"},
		{"no version", chartArchive(t, "shop/Chart.yaml", "name: shop\n"), "chart shop: Chart.yaml has no version"},
		{"upper case", chartArchive(t, "Shop/Chart.yaml", "name: Shop\nversion: 1.0.0\n"), "chart Shop: the name cannot be an OCI repository name"},
		{"bad version", chartArchive(t, "shop/Chart.yaml", "name: shop\nversion: 1.0/2\n"), "version 1.0/2 cannot be an OCI tag"},
		{"not YAML", chartArchive(t, "shop/Chart.yaml", "name: [\n"), "Chart.yaml"},
		{"Chart.yaml too large", chartArchive(t, "shop/Chart.yaml", big), "over the size limit"},
		// Helm's loader reads both directories as one chart, the last
		// Chart.yaml's fields winning: helm pull would get evil 6.6.6
		// from what would be pushed as innocent 1.0.0.
		{"two top-level directories", chartArchive(t, "a/Chart.yaml", "name: innocent\nversion: 1.0.0\n", "b/Chart.yaml", "name: evil\nversion: 6.6.6\n"), `not a packaged Helm chart: two top-level directories, "a" and "b": Helm's loader reads every top-level directory as the same chart`},
		{"a second directory after the chart", chartArchive(t, "shop/Chart.yaml", shopChartYAML, "shop/values.yaml", "a: 1\n", "zzz/templates/evil.yaml", "kind: Pod\n"), `two top-level directories, "shop" and "zzz"`},
		{"Chart.yaml twice", chartArchive(t, "shop/Chart.yaml", shopChartYAML, "shop/Chart.yaml", "name: evil\nversion: 6.6.6\n"), `not a packaged Helm chart: "Chart.yaml" twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewChart(tt.archive, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := NewChart(chartArchive(t, "a/Chart.yaml", "name: innocent\nversion: 1.0.0\n", "b/Chart.yaml", "name: evil\nversion: 6.6.6\n"), nil); !errors.Is(err, ErrNotChart) {
		t.Errorf("two top-level directories: %v is not ErrNotChart", err)
	}
	if _, err := NewChart(shopArchive(t), make([]byte, MaxProvenanceSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a large provenance file: %v", err)
	}
}

func TestLoadChart(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "shop-1.2.0.tgz")
	if err := os.WriteFile(p, shopArchive(t), 0o644); err != nil {
		t.Fatal(err)
	}
	without, err := LoadChart(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".prov", []byte("signed"), 0o644); err != nil {
		t.Fatal(err)
	}
	with, err := LoadChart(p)
	if err != nil {
		t.Fatal(err)
	}
	img, _ := with.Image()
	m, _ := img.Manifest()
	if len(m.Layers) != 2 {
		t.Errorf("the provenance file beside the chart is not a layer: %d layers", len(m.Layers))
	}
	a, _ := without.Digest()
	b, _ := with.Digest()
	if a == b {
		t.Error("same digest with and without provenance")
	}
	if _, err := LoadChart(filepath.Join(dir, "missing.tgz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing chart: %v", err)
	}
}

// TestChartCopy: a chart job pushes the artifact to its tag in the charts
// repository, which a registry client reads back with Helm's media types;
// the same run again finds the digest in place and pushes nothing.
func TestChartCopy(t *testing.T) {
	dst := newTestRegistry(t)
	c := newChart(t, shopArchive(t), []byte("prov"))
	job := ChartJob("charts/shop", c, dst.host+"/mirror/charts/")
	if want := dst.host + "/mirror/charts/shop:1.2.0_build.7"; job.Target != want {
		t.Fatalf("target %s, want %s", job.Target, want)
	}
	ev := &events{}
	m := newMirror(t, Options{Reporter: ev})
	s := m.Copy(context.Background(), []Job{job})
	if s.Err() != nil || s.Charts.Copied != 1 || s.Copied != 0 || s.Images() != 0 {
		t.Fatalf("first run: charts %+v, images copied %d: %v", s.Charts, s.Copied, s.Err())
	}
	want, _ := c.Digest()
	if got := head(t, job.Target); got != want.String() || s.Results[0].Digest != want.String() {
		t.Errorf("target digest %s, result %s, want %s", got, s.Results[0].Digest, want)
	}
	r, _ := name.ParseReference(job.Target)
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	mf, _ := img.Manifest()
	if mf.Config.MediaType != ChartConfigMediaType || len(mf.Layers) != 2 {
		t.Errorf("pushed manifest: config %s, %d layers", mf.Config.MediaType, len(mf.Layers))
	}
	if s.Images() != 0 || s.Copied+s.Skipped+s.Failed != 0 || s.Charts != (Counts{Copied: 1}) {
		t.Errorf("summary: %d images (%d copied, %d skipped, %d failed), charts %+v", s.Images(), s.Copied, s.Skipped, s.Failed, s.Charts)
	}
	if r := ev.done[0]; r.Status != Copied || r.Chart == nil || r.Source != "charts/shop" || r.Destination != job.Target {
		t.Errorf("reported %s %s -> %s (chart %v)", r.Status, r.Source, r.Destination, r.Chart != nil)
	}

	dst.resetLog()
	s = m.Copy(context.Background(), []Job{job})
	if s.Err() != nil || s.Charts.Skipped != 1 {
		t.Fatalf("second run: %+v: %v", s.Charts, s.Err())
	}
	if n := dst.count(http.MethodPut, ".") + dst.count(http.MethodPost, "."); n != 0 {
		t.Errorf("the second run wrote %d times: %v", n, dst.reqs)
	}
}

// TestChartCopyRefused: a target that refuses the push fails the chart,
// named, and nothing is reported done; the tag does not resolve.
func TestChartCopyRefused(t *testing.T) {
	dst := newTestRegistry(t)
	dst.setInject(func(r *http.Request) int {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			return http.StatusForbidden
		}
		return 0
	})
	c := newChart(t, shopArchive(t), nil)
	job := ChartJob("oci://ghcr.io/example/shop", c, dst.host+"/charts")
	s := newMirror(t, Options{}).Copy(context.Background(), []Job{job})
	if s.Charts.Failed != 1 || s.Charts.Copied != 0 || s.Results[0].Status != Failed {
		t.Fatalf("charts %+v", s.Charts)
	}
	err := s.Err()
	var ie *ImageError
	if !errors.As(err, &ie) || ie.Job.Chart == nil || !strings.HasPrefix(err.Error(), "chart oci://ghcr.io/example/shop -> "+job.Target+": ") || !strings.Contains(err.Error(), "403") {
		t.Errorf("error %v", err)
	}
	if s.Charts != (Counts{Failed: 1}) || s.Images() != 0 {
		t.Errorf("summary: charts %+v, %d images", s.Charts, s.Images())
	}
	if d := head(t, job.Target); d != "" {
		t.Errorf("the refused chart resolves: %s", d)
	}
}

// TestChartDryRun: a dry run plans the chart with its digest, asks no
// registry, and counts it apart.
func TestChartDryRun(t *testing.T) {
	dst := newTestRegistry(t)
	c := newChart(t, shopArchive(t), nil)
	s := newMirror(t, Options{DryRun: true}).Copy(context.Background(), []Job{ChartJob("charts/shop", c, dst.host+"/charts")})
	want, _ := c.Digest()
	if s.Charts.Planned != 1 || s.Results[0].Digest != want.String() {
		t.Fatalf("charts %+v, digest %s", s.Charts, s.Results[0].Digest)
	}
	if len(dst.reqs) != 0 {
		t.Errorf("a dry run asked the registry: %v", dst.reqs)
	}
	if r := s.Results[0]; len(s.Results) != 1 || r.Chart == nil || r.Source != "charts/shop" || r.Destination != dst.host+"/charts/shop:1.2.0_build.7" {
		t.Errorf("planned %+v", s.Results)
	}
	if !s.DryRun || s.Images() != 0 || s.Planned != 0 || s.Attachments != (Counts{}) || s.Charts != (Counts{Planned: 1}) {
		t.Errorf("summary: dry run %v, %d images, %d planned, attachments %+v, charts %+v", s.DryRun, s.Images(), s.Planned, s.Attachments, s.Charts)
	}
}

// TestChartLayoutRoundTrip: Export stores the chart beside the images,
// annotated; a second Export skips it; Import pushes it to the charts
// repository of the import's mapping with the same digest, then skips it.
func TestChartLayoutRoundTrip(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	mp := mapper(t, rewrite.Config{Registry: "sea.hub:5000/mirror"})
	c := newChart(t, shopArchive(t), []byte("prov"))
	c.Relocated = RelocationFor(mp)
	jobs := append(f.jobs(t, rewrite.Config{Registry: "sea.hub:5000/mirror"}), ChartJob("charts/shop", c, "sea.hub:5000/mirror/charts"))
	m := newMirror(t, Options{})
	s, err := m.Export(context.Background(), jobs, dir)
	if err != nil || s.Err() != nil || s.Copied != 3 || s.Charts.Copied != 1 {
		t.Fatalf("export: %d images, charts %+v: %v %v", s.Copied, s.Charts, err, s.Err())
	}
	var chartDesc *v1.Descriptor
	for _, d := range layoutIndex(t, dir).Manifests {
		if d.Annotations[AnnotationChart] != "" {
			d := d
			chartDesc = &d
		}
	}
	want, _ := c.Digest()
	if chartDesc == nil || chartDesc.Digest != want {
		t.Fatalf("index.json has no chart %s: %v", want, chartDesc)
	}
	for k, v := range map[string]string{
		AnnotationChart: "shop", AnnotationChartVersion: "1.2.0+build.7", AnnotationSource: "charts/shop",
		AnnotationTarget: "sea.hub:5000/mirror/charts/shop:1.2.0_build.7", AnnotationChartRegistry: "sea.hub:5000/mirror", AnnotationChartPathStyle: "strip",
	} {
		if chartDesc.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, chartDesc.Annotations[k], v)
		}
	}
	if _, ok := chartDesc.Annotations[AnnotationContainerdName]; ok {
		t.Error("a chart is named as an image for containerd")
	}
	again, err := m.Export(context.Background(), jobs, dir)
	if err != nil || again.Charts.Skipped != 1 || again.Skipped != 3 {
		t.Fatalf("second export: images skipped %d, charts %+v, %v", again.Skipped, again.Charts, err)
	}

	dst := newTestRegistry(t)
	imp := mapper(t, rewrite.Config{Registry: dst.host + "/mirror"})
	// The chart was relocated for sea.hub:5000/mirror: pushing it
	// elsewhere fails it, and pushes nothing of it.
	s, err = newMirror(t, Options{}).Import(context.Background(), dir, imp)
	if err != nil || s.Copied != 3 || s.Charts.Failed != 1 {
		t.Fatalf("import for another registry: %d images, charts %+v, %v", s.Copied, s.Charts, err)
	}
	if e := s.Err().Error(); !strings.Contains(e, "chart charts/shop -> "+dst.host+"/mirror/charts/shop:1.2.0_build.7: its values were relocated for \"sea.hub:5000/mirror (path style strip)\"") {
		t.Errorf("error %s", e)
	}
	if d := head(t, dst.host+"/mirror/charts/shop:1.2.0_build.7"); d != "" {
		t.Errorf("a chart relocated for another registry was pushed: %s", d)
	}

	// Exported for the registry it is imported into, it goes there, under
	// another charts path too.
	c.Relocated = RelocationFor(imp)
	jobs[len(jobs)-1] = ChartJob("charts/shop", c, dst.host+"/mirror/charts")
	if s, err := m.Export(context.Background(), jobs, dir); err != nil || s.Charts.Copied != 1 {
		t.Fatalf("re-export: %+v %v", s.Charts, err)
	}
	imp = mapper(t, rewrite.Config{Registry: dst.host + "/mirror", ChartsPath: "helm/stable"})
	for _, run := range []string{"first", "second"} {
		s, err = newMirror(t, Options{}).Import(context.Background(), dir, imp)
		if err != nil || s.Err() != nil {
			t.Fatalf("%s import: %v %v", run, err, s.Err())
		}
		if run == "first" && s.Charts.Copied != 1 || run == "second" && s.Charts.Skipped != 1 {
			t.Errorf("%s import: charts %+v", run, s.Charts)
		}
	}
	if got := head(t, dst.host+"/mirror/helm/stable/shop:1.2.0_build.7"); got != want.String() {
		t.Errorf("imported chart digest %s, want %s", got, want)
	}
}

// TestChartLayoutHostile: a layout whose chart is not what index.json says
// fails the chart, naming the file, and pushes nothing of it.
func TestChartLayoutHostile(t *testing.T) {
	c := newChart(t, shopArchive(t), nil)
	export := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "bundle")
		s, err := newMirror(t, Options{}).Export(context.Background(), []Job{ChartJob("charts/shop", c, "sea.hub:5000/charts")}, dir)
		if err != nil || s.Charts.Copied != 1 {
			t.Fatalf("export: %+v %v", s.Charts, err)
		}
		return dir
	}
	editIndex := func(t *testing.T, dir string, edit func(d *v1.Descriptor)) {
		raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		var im v1.IndexManifest
		if err := json.Unmarshal(raw, &im); err != nil {
			t.Fatal(err)
		}
		edit(&im.Manifests[0])
		raw, _ = json.Marshal(im)
		if err := os.WriteFile(filepath.Join(dir, "index.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := c.Digest()
	img, _ := c.Image()
	mf, _ := img.Manifest()
	for _, tt := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   string
	}{
		{"another name in index.json", func(t *testing.T, dir string) {
			editIndex(t, dir, func(d *v1.Descriptor) { d.Annotations[AnnotationChart] = "evil" })
		}, `the config is chart shop 1.2.0+build.7, but index.json says evil 1.2.0+build.7`},
		{"an image marked as a chart", func(t *testing.T, dir string) {
			editIndex(t, dir, func(d *v1.Descriptor) { d.MediaType = types.DockerManifestSchema2 })
		}, "is not a chart's"},
		{"chart layer changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "blobs", "sha256", mf.Layers[0].Digest.Hex)
			b, _ := os.ReadFile(p)
			b[len(b)-1] ^= 1
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "content does not match its digest"},
		{"config changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "blobs", "sha256", mf.Config.Digest.Hex)
			b, _ := os.ReadFile(p)
			b = bytes.Replace(b, []byte(`"shop"`), []byte(`"shoq"`), 1)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "content does not match its digest"},
		{"manifest missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "blobs", "sha256", h.Hex))
		}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := export(t)
			tt.tamper(t, dir)
			dst := newTestRegistry(t)
			s, err := newMirror(t, Options{}).Import(context.Background(), dir, mapper(t, rewrite.Config{Registry: dst.host}))
			if err != nil {
				t.Fatal(err)
			}
			if s.Charts.Failed != 1 || s.Err() == nil || !strings.Contains(s.Err().Error(), tt.want) {
				t.Errorf("charts %+v, error %v; want one containing %q", s.Charts, s.Err(), tt.want)
			}
			if n := dst.count(http.MethodPut, "/manifests/"); n != 0 {
				t.Errorf("%d manifests pushed", n)
			}
		})
	}
}
