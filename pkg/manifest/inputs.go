package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Stdin is the name of standard input in errors and reports.
const Stdin = "<stdin>"

// Input is one stream to read: a manifest file, standard input, or a Helm
// chart (directory or packaged .tgz) to render.
type Input struct {
	// Path is the file or chart path; "-" for standard input.
	Path string
	// Rel is Path relative to the argument it was found under (the base name
	// for a file argument): the path of its output under --output-dir.
	Rel string
	// Chart marks a Helm chart directory or packaged chart.
	Chart bool
	// ImageList marks a hand-kept image list (a file named imageList):
	// one image reference a line, see Rewriter.ReadImageList.
	ImageList bool
}

// Name is the input's name in errors and reports.
func (in Input) Name() string {
	if in.Path == "-" {
		return Stdin
	}
	return in.Path
}

// ErrNoInputs is wrapped by the error of ExpandPaths when the paths hold
// no manifest, chart or image list.
var ErrNoInputs = errors.New("no manifests (*.yaml, *.yml, *.json), charts or imageList files found")

// manifestExts are the file extensions read when walking a directory.
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// ExpandPaths turns command-line paths into inputs: "-" is standard input
// (no path gives no input: reading standard input then is the caller's
// choice); a file is itself; a directory is walked recursively in lexical
// order for *.yaml, *.yml and *.json files and sealer's imageList files,
// except that a directory holding a Chart.yaml is a chart (its templates
// are never read as manifests) and a *.tgz file is a packaged chart. A
// file named imageList, found or given, is an image list.
func ExpandPaths(paths []string) ([]Input, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var out []Input
	for _, p := range paths {
		if p == "-" {
			out = append(out, Input{Path: "-", Rel: "stdin.yaml"})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, Input{Path: p, Rel: filepath.Base(p), Chart: isPackagedChart(p), ImageList: filepath.Base(p) == ImageListName})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(p, path)
			if d.IsDir() {
				if path != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				if isChartDir(path) {
					if rel == "." {
						rel = filepath.Base(filepath.Clean(p))
					}
					out = append(out, Input{Path: path, Rel: rel, Chart: true})
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case d.Name() == ImageListName:
				out = append(out, Input{Path: path, Rel: rel, ImageList: true})
			case manifestExts[strings.ToLower(filepath.Ext(path))]:
				out = append(out, Input{Path: path, Rel: rel})
			case isPackagedChart(path):
				out = append(out, Input{Path: path, Rel: rel, Chart: true})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoInputs, strings.Join(paths, ", "))
	}
	return out, nil
}

func isChartDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "Chart.yaml"))
	return err == nil && !st.IsDir()
}

func isPackagedChart(path string) bool {
	return strings.HasSuffix(path, ".tgz") || strings.HasSuffix(path, ".tar.gz")
}
