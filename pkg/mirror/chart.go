package mirror

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/internal/chartarchive"
	"github.com/rehost/rehost/internal/refgrammar"
	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// Helm's media types for a chart stored in an OCI registry
// (helm.sh/helm/v3/pkg/registry): `helm pull oci://…`, Flux's
// HelmRepository of type oci and OCIRepository, and Argo CD's OCI Helm
// sources read charts by them.
const (
	// ChartConfigMediaType is the config of a chart manifest: the
	// chart's Chart.yaml metadata as JSON.
	ChartConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	// ChartContentMediaType is the layer holding the packaged chart (.tgz).
	ChartContentMediaType types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// ChartProvenanceMediaType is the layer holding the chart's
	// provenance file (.prov), when it has one.
	ChartProvenanceMediaType types.MediaType = "application/vnd.cncf.helm.chart.provenance.v1.prov"
)

// Limits on the charts rehost pushes, which are read whole into memory.
const (
	// MaxChartSize bounds a packaged chart (.tgz).
	MaxChartSize = 64 << 20
	// MaxProvenanceSize bounds a chart's provenance file.
	MaxProvenanceSize = 1 << 20
	// maxChartUnpacked bounds what is decompressed of a packaged chart to
	// read its Chart.yaml and check that it is one chart (Helm's own
	// limit on a whole chart is 100 MiB).
	maxChartUnpacked = 128 << 20
	// maxChartYAML bounds Chart.yaml.
	maxChartYAML = 1 << 20
)

// Annotations rehost writes on the index.json descriptor of a chart in an
// OCI image layout, besides AnnotationSource (where the chart came from,
// as the user gave it) and AnnotationTarget.
const (
	// AnnotationChart marks a Helm chart; the value is its name.
	AnnotationChart = "dev.rehost.chart"
	// AnnotationChartVersion is the chart's version.
	AnnotationChartVersion = "dev.rehost.chart.version"
	// AnnotationChartRegistry is, for a relocated chart, the registry
	// (with its prefix) its values were relocated for; absent for a chart
	// stored as it was given.
	AnnotationChartRegistry = "dev.rehost.chart.relocated.registry"
	// AnnotationChartPathStyle is, for a relocated chart, the path style
	// its values were relocated with.
	AnnotationChartPathStyle = "dev.rehost.chart.relocated.path-style"
)

// Chart is a packaged Helm chart to push as an OCI artifact, the way
// `helm push` stores it: an OCI image manifest whose config
// (ChartConfigMediaType) is the chart's metadata as JSON and whose layers
// are the packaged chart (ChartContentMediaType) and its provenance file
// when there is one (ChartProvenanceMediaType). The artifact is a function
// of the archive and provenance bytes only: the same chart gives the same
// digest, so a re-run finds it in place and skips it. Unlike `helm push`,
// no creation time is recorded (org.opencontainers.image.created), for
// that reason.
type Chart struct {
	// Name and Version are the chart's, from its Chart.yaml.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Relocated says, for a chart whose values were relocated (rehost
	// relocate), the mapping they were relocated for; nil for a chart
	// pushed as it was given.
	Relocated *Relocation `json:"relocated,omitempty"`

	archive, prov []byte
	img           *chartImage
}

// Relocation is the mapping a chart's values were relocated for.
type Relocation struct {
	// Registry is the target registry with its prefix
	// (rewrite.Mapper.Root).
	Registry string `json:"registry"`
	// PathStyle is the path style of the mapping.
	PathStyle rewrite.PathStyle `json:"pathStyle"`
}

// RelocationFor is the relocation a mapper's mapping gives.
func RelocationFor(m *rewrite.Mapper) *Relocation {
	return &Relocation{Registry: m.Root(), PathStyle: m.Style()}
}

// String is "sea.hub:5000 (path style strip)".
func (r *Relocation) String() string {
	return fmt.Sprintf("%s (path style %s)", r.Registry, r.PathStyle)
}

// ErrNotChart is wrapped by the error of NewChart and LoadChart for an
// archive that is not a packaged Helm chart.
var ErrNotChart = errors.New("not a packaged Helm chart")

// LoadChart reads the packaged chart at path (a .tgz, at most
// MaxChartSize) and its provenance file path+".prov" when there is one.
func LoadChart(path string) (*Chart, error) {
	archive, err := readBounded(path, MaxChartSize)
	if err != nil {
		return nil, err
	}
	var prov []byte
	if st, err := os.Stat(path + ".prov"); err == nil && st.Mode().IsRegular() {
		if prov, err = readBounded(path+".prov", MaxProvenanceSize); err != nil {
			return nil, err
		}
	}
	c, err := NewChart(archive, prov)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w of %s", path, ErrTooLarge, bytesize.Fixed(max))
	}
	return b, nil
}

// NewChart is the chart packaged in archive (a .tgz, as `helm package`
// writes it), with its provenance file prov (nil when none). Its
// Chart.yaml gives the name, the version and the OCI annotations, as
// `helm push` makes them.
func NewChart(archive, prov []byte) (*Chart, error) {
	if len(archive) > MaxChartSize {
		return nil, fmt.Errorf("%w: %s, %w of %s", ErrNotChart, bytesize.Fixed(int64(len(archive))), ErrTooLarge, bytesize.Fixed(MaxChartSize))
	}
	if len(prov) > MaxProvenanceSize {
		return nil, fmt.Errorf("provenance file: %s, %w of %s", bytesize.Fixed(int64(len(prov))), ErrTooLarge, bytesize.Fixed(MaxProvenanceSize))
	}
	raw, err := chartYAML(archive)
	if err != nil {
		return nil, err
	}
	var md chartMetadata
	if err := yaml.Unmarshal(raw, &md); err != nil {
		return nil, fmt.Errorf("%w: Chart.yaml: %v", ErrNotChart, err)
	}
	switch {
	case md.Name == "":
		return nil, fmt.Errorf("%w: Chart.yaml has no name", ErrNotChart)
	case md.Version == "":
		return nil, fmt.Errorf("%w: chart %s: Chart.yaml has no version", ErrNotChart, Quote(md.Name))
	case !refgrammar.Component(md.Name):
		// A chart is pushed as Helm names it: its name must be a
		// repository path component.
		return nil, fmt.Errorf("chart %s: the name cannot be an OCI repository name (lower-case letters and digits, separated by '.', '_', '__' or '-')", Quote(md.Name))
	case !refgrammar.Tag(ChartTag(md.Version)):
		return nil, fmt.Errorf("chart %s: version %s cannot be an OCI tag", md.Name, Quote(md.Version))
	}
	c := &Chart{Name: md.Name, Version: md.Version, archive: archive, prov: prov}
	if c.img, err = newChartImage(&md, archive, prov); err != nil {
		return nil, fmt.Errorf("chart %s %s: %w", md.Name, md.Version, err)
	}
	return c, nil
}

// ChartTag is the tag of a chart version, as Helm writes it: "+" (not
// allowed in tags) becomes "_"; `helm pull --version` turns it back.
func ChartTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// Tag is the chart's tag (ChartTag).
func (c *Chart) Tag() string { return ChartTag(c.Version) }

// Digest is the digest of the chart's manifest.
func (c *Chart) Digest() (v1.Hash, error) {
	if c.img == nil {
		return v1.Hash{}, fmt.Errorf("chart %s %s: no archive", c.Name, c.Version)
	}
	return c.img.Digest()
}

// Image is the chart as an OCI artifact (an image manifest with Helm's
// media types).
func (c *Chart) Image() (v1.Image, error) {
	if c.img == nil {
		return nil, fmt.Errorf("chart %s %s: no archive", c.Name, c.Version)
	}
	return partial.CompressedToImage(c.img)
}

// String is "name version".
func (c *Chart) String() string { return c.Name + " " + c.Version }

// ChartJob is the job that pushes c to repository/<name>:<tag>, where
// repository is the charts repository of the target registry
// ("sea.hub:5000/charts": rewrite.Mapper.ChartsRepository). source names
// the chart in reports: the path or reference it was given as.
func ChartJob(source string, c *Chart, repository string) Job {
	return Job{Source: source, Target: strings.TrimSuffix(repository, "/") + "/" + c.Name + ":" + c.Tag(), Chart: c}
}

// chartYAML returns the Chart.yaml of the chart packaged in archive: the
// one in the archive's top directory ("mychart/Chart.yaml"), found as
// Helm's loader finds it. The whole archive is read: one with a second
// top-level directory or a file twice is refused (ErrNotChart wrapping a
// chartarchive.AmbiguousError), as `helm pull` would load it as another
// chart than its first Chart.yaml says.
func chartYAML(archive []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotChart, err)
	}
	defer zr.Close()
	lr := &io.LimitedReader{R: zr, N: maxChartUnpacked}
	tr := tar.NewReader(lr)
	var (
		names chartarchive.Names
		found []byte
	)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("%w: more than %s unpacked: %w", ErrNotChart, bytesize.Fixed(maxChartUnpacked), ErrTooLarge)
			}
			return nil, fmt.Errorf("%w: %v", ErrNotChart, err)
		}
		name, ok, err := names.Add(h)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotChart, err)
		}
		if !ok || name != "Chart.yaml" {
			continue
		}
		if h.Size > maxChartYAML {
			return nil, fmt.Errorf("%w: %s: %s, %w of %s", ErrNotChart, Quote(h.Name), bytesize.Fixed(h.Size), ErrTooLarge, bytesize.Fixed(maxChartYAML))
		}
		if found, err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNotChart, Quote(h.Name), err)
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no Chart.yaml in its top directory", ErrNotChart)
	}
	return found, nil
}

// chartMetadata is Helm's chart.Metadata (helm.sh/helm/v3/pkg/chart), field
// for field and in its order, so that the config is the JSON `helm push`
// writes for the same Chart.yaml.
type chartMetadata struct {
	Name         string             `yaml:"name" json:"name,omitempty"`
	Home         string             `yaml:"home" json:"home,omitempty"`
	Sources      []string           `yaml:"sources" json:"sources,omitempty"`
	Version      string             `yaml:"version" json:"version,omitempty"`
	Description  string             `yaml:"description" json:"description,omitempty"`
	Keywords     []string           `yaml:"keywords" json:"keywords,omitempty"`
	Maintainers  []*chartMaintainer `yaml:"maintainers" json:"maintainers,omitempty"`
	Icon         string             `yaml:"icon" json:"icon,omitempty"`
	APIVersion   string             `yaml:"apiVersion" json:"apiVersion,omitempty"`
	Condition    string             `yaml:"condition" json:"condition,omitempty"`
	Tags         string             `yaml:"tags" json:"tags,omitempty"`
	AppVersion   string             `yaml:"appVersion" json:"appVersion,omitempty"`
	Deprecated   bool               `yaml:"deprecated" json:"deprecated,omitempty"`
	Annotations  map[string]string  `yaml:"annotations" json:"annotations,omitempty"`
	KubeVersion  string             `yaml:"kubeVersion" json:"kubeVersion,omitempty"`
	Dependencies []*chartDependency `yaml:"dependencies" json:"dependencies,omitempty"`
	Type         string             `yaml:"type" json:"type,omitempty"`
}

type chartMaintainer struct {
	Name  string `yaml:"name" json:"name,omitempty"`
	Email string `yaml:"email" json:"email,omitempty"`
	URL   string `yaml:"url" json:"url,omitempty"`
}

type chartDependency struct {
	Name         string        `yaml:"name" json:"name"`
	Version      string        `yaml:"version" json:"version,omitempty"`
	Repository   string        `yaml:"repository" json:"repository"`
	Condition    string        `yaml:"condition" json:"condition,omitempty"`
	Tags         []string      `yaml:"tags" json:"tags,omitempty"`
	Enabled      bool          `yaml:"enabled" json:"enabled,omitempty"`
	ImportValues []interface{} `yaml:"import-values" json:"import-values,omitempty"`
	Alias        string        `yaml:"alias" json:"alias,omitempty"`
}

// ociAnnotations are the manifest annotations `helm push` writes
// (helm.sh/helm/v3/pkg/registry generateOCIAnnotations), without the
// creation time: description, title, version, url, source, authors, then
// the chart's own annotations, which do not override title and version.
func (md *chartMetadata) ociAnnotations() map[string]string {
	a := map[string]string{}
	add := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			a[k] = v
		}
	}
	add("org.opencontainers.image.description", md.Description)
	add("org.opencontainers.image.title", md.Name)
	add("org.opencontainers.image.version", md.Version)
	add("org.opencontainers.image.url", md.Home)
	if len(md.Sources) > 0 {
		add("org.opencontainers.image.source", md.Sources[0])
	}
	if len(md.Maintainers) > 0 {
		var b strings.Builder
		for i, m := range md.Maintainers {
			if m == nil {
				continue
			}
			b.WriteString(m.Name)
			if m.Email != "" {
				b.WriteString(" (" + m.Email + ")")
			}
			if i < len(md.Maintainers)-1 {
				b.WriteString(", ")
			}
		}
		add("org.opencontainers.image.authors", b.String())
	}
	for k, v := range md.Annotations {
		if k != "org.opencontainers.image.title" && k != "org.opencontainers.image.version" {
			a[k] = v
		}
	}
	return a
}

// chartImage is a chart's OCI manifest with its config and layers, in
// memory (partial.CompressedImageCore).
type chartImage struct {
	manifest []byte
	config   []byte
	blobs    map[v1.Hash]chartBlob
}

type chartBlob struct {
	mediaType types.MediaType
	data      []byte
}

func newChartImage(md *chartMetadata, archive, prov []byte) (*chartImage, error) {
	config, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	img := &chartImage{config: config, blobs: map[v1.Hash]chartBlob{}}
	desc := func(mt types.MediaType, b []byte) (v1.Descriptor, error) {
		h, n, err := v1.SHA256(bytes.NewReader(b))
		if err != nil {
			return v1.Descriptor{}, err
		}
		img.blobs[h] = chartBlob{mediaType: mt, data: b}
		return v1.Descriptor{MediaType: mt, Size: n, Digest: h}, nil
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Annotations: md.ociAnnotations()}
	if m.Config, err = desc(ChartConfigMediaType, config); err != nil {
		return nil, err
	}
	delete(img.blobs, m.Config.Digest) // the config is served as such
	l, err := desc(ChartContentMediaType, archive)
	if err != nil {
		return nil, err
	}
	m.Layers = append(m.Layers, l)
	if prov != nil {
		if l, err = desc(ChartProvenanceMediaType, prov); err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, l)
	}
	// In digest order, as `helm push` sorts them.
	sort.Slice(m.Layers, func(i, j int) bool { return m.Layers[i].Digest.String() < m.Layers[j].Digest.String() })
	if img.manifest, err = json.Marshal(m); err != nil {
		return nil, err
	}
	return img, nil
}

func (c *chartImage) RawManifest() ([]byte, error)        { return c.manifest, nil }
func (c *chartImage) RawConfigFile() ([]byte, error)      { return c.config, nil }
func (c *chartImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func (c *chartImage) Digest() (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(c.manifest))
	return h, err
}

func (c *chartImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	b, ok := c.blobs[h]
	if !ok {
		return nil, fmt.Errorf("the chart has no layer %s", h)
	}
	return chartLayer{h: h, b: b}, nil
}

type chartLayer struct {
	h v1.Hash
	b chartBlob
}

func (l chartLayer) Digest() (v1.Hash, error)            { return l.h, nil }
func (l chartLayer) Size() (int64, error)                { return int64(len(l.b.data)), nil }
func (l chartLayer) MediaType() (types.MediaType, error) { return l.b.mediaType, nil }
func (l chartLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.b.data)), nil
}

// chartOrigin reads a chart from memory.
type chartOrigin struct{ c *Chart }

func (o chartOrigin) digest(context.Context) (v1.Hash, error) { return o.c.Digest() }

func (o chartOrigin) describe(context.Context) (v1.Descriptor, error) {
	h, err := o.c.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: int64(len(o.c.img.manifest)), Digest: h}, nil
}

func (o chartOrigin) get(context.Context) (artifact, error) {
	img, err := o.c.Image()
	return artifact{img: img}, err
}

func (o chartOrigin) indexOf(context.Context, v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("chart %s is not an index", o.c)
}

func (o chartOrigin) attachments(context.Context, *runState, v1.Hash) ([]found, string, error) {
	return nil, "", nil
}

// importChart is the task that pushes the chart of the descriptor d of a
// layout's index.json.
func (m *Mirror) importChart(lr *layoutReader, ii *ociIndex, d v1.Descriptor, mapper *rewrite.Mapper) task {
	a := d.Annotations
	c := &Chart{Name: a[AnnotationChart], Version: a[AnnotationChartVersion]}
	if reg := a[AnnotationChartRegistry]; reg != "" {
		c.Relocated = &Relocation{Registry: reg, PathStyle: rewrite.PathStyle(a[AnnotationChartPathStyle])}
	}
	src := a[AnnotationSource]
	if src == "" {
		src = c.String()
	}
	t := task{Job: Job{Source: src, Chart: c}, origin: layoutOrigin{r: lr, index: ii, desc: d}}
	if err := lr.checkChart(d, c); err != nil {
		t.err = err
		return t
	}
	t.Job = ChartJob(src, c, mapper.ChartsRepository())
	t.dest = t.Job.Target
	if r := c.Relocated; r != nil && (r.Registry != mapper.Root() || r.PathStyle != mapper.Style()) {
		t.err = fmt.Errorf("its values were relocated for %s when the layout was written, and this mapping is %s: it would pull its images from elsewhere; write the layout again for this mapping, or with the chart as it was given", Quote(r.String()), RelocationFor(mapper))
		return t
	}
	dst, via, err := m.parseTarget(t.Job.Target)
	if err != nil {
		t.err = err
		return t
	}
	t.target, t.via = registryTarget{m: m, ref: dst}, via
	return t
}

// checkChart checks that the layout's descriptor d is the chart c: an OCI
// manifest with Helm's config and layers (one chart, at most one
// provenance file), whose config (bounded and verified) names c.
func (r *layoutReader) checkChart(d v1.Descriptor, c *Chart) error {
	at := r.d.show(blobPath(d.Digest))
	if d.MediaType != types.OCIManifestSchema1 {
		return fmt.Errorf("%s: media type %s is not a chart's (%s)", at, Quote(string(d.MediaType)), types.OCIManifestSchema1)
	}
	img, err := r.image(d)
	if err != nil {
		return err
	}
	mf, err := img.Manifest()
	if err != nil {
		return err
	}
	if mf.Config.MediaType != ChartConfigMediaType {
		return fmt.Errorf("%s: config media type %s is not a chart's (%s)", at, Quote(string(mf.Config.MediaType)), ChartConfigMediaType)
	}
	content, prov := 0, 0
	for _, l := range mf.Layers {
		switch l.MediaType {
		case ChartContentMediaType:
			content++
		case ChartProvenanceMediaType:
			prov++
		default:
			return fmt.Errorf("%s: layer %s has media type %s, not a chart's", at, l.Digest, Quote(string(l.MediaType)))
		}
	}
	if content != 1 || prov > 1 {
		return fmt.Errorf("%s: %d chart layers and %d provenance layers, want 1 and at most 1", at, content, prov)
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	var md struct{ Name, Version string }
	if err := json.Unmarshal(raw, &md); err != nil {
		return fmt.Errorf("%s: not a chart config: %v", r.d.show(blobPath(mf.Config.Digest)), err)
	}
	if md.Name != c.Name || md.Version != c.Version {
		return fmt.Errorf("%s: the config is chart %s %s, but index.json says %s %s", at, Quote(md.Name), Quote(md.Version), Quote(c.Name), Quote(c.Version))
	}
	return nil
}

func (o chartOrigin) pinned(v1.Hash) origin { return o }
