package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// archiveTime is the modification time of every file of the packaged
// charts rehost writes, so that the same chart packages to the same bytes
// (Helm's writer records the time of packaging) and its OCI artifact keeps
// its digest from one run to the next.
var archiveTime = time.Unix(0, 0).UTC()

// Package writes the chart at path (a directory, or a packaged chart) as a
// packaged chart to output (a .tgz file, replaced if it exists, written
// into if it is a link or a device: publishChart), the way
// `helm package` does — Helm's loader and writer, .helmignore applied —
// except that the archive records no time: packaging the same chart twice
// gives the same bytes. It returns the chart as loaded.
func Package(path, output string) (*chart.Chart, error) {
	if !strings.HasSuffix(output, ".tgz") {
		return nil, fmt.Errorf("packaging chart %s: output %s: want a FILE.tgz", path, output)
	}
	ch, err := Load(path)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(filepath.Clean(output))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".rehost-package-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	file, err := saveArchive(ch, tmp)
	if err != nil {
		return nil, fmt.Errorf("packaging chart %s: %w", path, err)
	}
	if err := publishChart(file, output); err != nil {
		return nil, err
	}
	return ch, nil
}

// saveArchive packages c into dir with Helm's writer (chartutil.Save) and
// then sets the time of every entry to archiveTime. It returns the file
// written, dir/<name>-<version>.tgz.
func saveArchive(c *chart.Chart, dir string) (string, error) {
	sortDependencies(c)
	file, err := chartutil.Save(c, dir)
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	out, err := reproducible(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return file, os.WriteFile(file, out, 0o644)
}

// sortDependencies orders the subcharts of c and of its subcharts by name
// and version: Helm's loader adds them in map order, and its writer writes
// them in that order.
func sortDependencies(c *chart.Chart) {
	deps := append([]*chart.Chart(nil), c.Dependencies()...)
	sort.SliceStable(deps, func(i, j int) bool {
		a, b := deps[i].Metadata, deps[j].Metadata
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Version < b.Version
	})
	for _, d := range deps {
		sortDependencies(d)
	}
	c.SetDependencies(deps...)
}

// reproducible rewrites a gzipped tar with every entry's times set to
// archiveTime, keeping the entries, their order and content, and the
// gzip header's extra field and comment (Helm marks its archives).
func reproducible(raw []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Header.Extra = zr.Header.Extra
	zw.Header.Comment = zr.Header.Comment
	zw.Header.Name = zr.Header.Name
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		h.ModTime, h.AccessTime, h.ChangeTime = archiveTime, time.Time{}, time.Time{}
		h.Format = tar.FormatUnknown
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
