package app

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rehost/rehost/internal/chartarchive"
	"github.com/rehost/rehost/pkg/rendered"
)

// chartFile is the name of a chart's metadata file.
const chartFile = "Chart.yaml"

// maxChartYAML bounds what is read of a Chart.yaml or of a packaged
// subchart inside a packaged chart.
const maxChartYAML = 64 << 20

// readChart reads the metadata of the chart directory or packaged chart at
// p and of all its subcharts (directories and packaged charts in charts/,
// as Helm's loader finds them), without rendering it.
func readChart(p string) (rendered.Metadata, error) {
	st, err := os.Stat(p)
	if err != nil {
		return rendered.Metadata{}, err
	}
	var files map[string][]byte
	if st.IsDir() {
		files, err = dirFiles(p)
	} else {
		var f *os.File
		if f, err = os.Open(p); err == nil {
			files, err = archiveFiles(f)
			f.Close()
		}
	}
	if err != nil {
		return rendered.Metadata{}, fmt.Errorf("%s: %w", p, err)
	}
	return chartMetadata(p, files)
}

// relevant says whether a file of a chart is needed to read its metadata
// and its subcharts': a Chart.yaml, or a packaged chart in charts/.
func relevant(name string) bool {
	return path.Base(name) == chartFile || (strings.HasSuffix(name, ".tgz") && path.Base(path.Dir(name)) == "charts")
}

// dirFiles reads the relevant files of the chart directory dir, by their
// slash-separated path in it.
func dirFiles(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || !relevant(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = data
		return err
	})
	return files, err
}

// archiveFiles reads the relevant files of a packaged chart, by their path
// below the archive's top directory, as Helm's loader names them. An
// archive that Helm's loader would read as another chart than it appears
// to be (a second top-level directory, a file twice) is an error
// (internal/chartarchive).
func archiveFiles(r io.Reader) (map[string][]byte, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer gz.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	var names chartarchive.Names
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name, ok, err := names.Add(h)
		if err != nil {
			return nil, err
		}
		if !ok || h.Typeflag != tar.TypeReg || !relevant(name) {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxChartYAML+1))
		if err != nil {
			return nil, err
		}
		if len(data) > maxChartYAML {
			return nil, fmt.Errorf("%s: larger than %d bytes", h.Name, maxChartYAML)
		}
		files[name] = data
	}
}

// chartMetadata builds the metadata of the chart whose relevant files are
// files, and of its subcharts, sorted by name; where names it in errors.
func chartMetadata(where string, files map[string][]byte) (rendered.Metadata, error) {
	data, ok := files[chartFile]
	if !ok {
		return rendered.Metadata{}, fmt.Errorf("%s: no %s", where, chartFile)
	}
	m, err := rendered.ParseMetadata(data)
	if err != nil {
		return rendered.Metadata{}, fmt.Errorf("%s/%s: %w", where, chartFile, err)
	}
	subs := map[string]map[string][]byte{}
	for name, data := range files {
		rest, ok := strings.CutPrefix(name, "charts/")
		if !ok {
			continue
		}
		sub, file, _ := strings.Cut(rest, "/")
		if strings.HasPrefix(sub, "_") || strings.HasPrefix(sub, ".") {
			continue // Helm's loader skips them
		}
		if subs[sub] == nil {
			subs[sub] = map[string][]byte{}
		}
		subs[sub][file] = data
	}
	names := make([]string, 0, len(subs))
	for n := range subs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sw := where + "/charts/" + n
		sf := subs[n]
		if strings.HasSuffix(n, ".tgz") {
			if sf, err = archiveFiles(bytes.NewReader(sf[""])); err != nil {
				return rendered.Metadata{}, fmt.Errorf("%s: %w", sw, err)
			}
		}
		if _, ok := sf[chartFile]; !ok && !strings.HasSuffix(n, ".tgz") {
			continue // a directory in charts/ that is not a chart
		}
		s, err := chartMetadata(sw, sf)
		if err != nil {
			return rendered.Metadata{}, err
		}
		m.Subcharts = append(m.Subcharts, s)
	}
	return m, nil
}
