package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rehost/rehost/internal/safefile"
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
	// Dir is the directory Rel is relative to: the directory given, or the
	// one holding a file (or a chart directory) given; "" for standard
	// input and fetched charts. An output directory that is Dir would
	// write the input's output over it (see ForOutputDir).
	Dir string
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

// Link is a symbolic link found in a directory walked: its target is
// inside the directory given (a link leaving it is an error).
type Link struct {
	// Path is the link, Target the path it resolves to.
	Path, Target string
	// Dir marks a link to a directory, which is not walked (its files are
	// read where they are, inside the tree); a link to a file is read as
	// that file.
	Dir bool
}

// Expanded is what Expand found.
type Expanded struct {
	// Inputs are the streams to read, as ExpandPaths returns them.
	Inputs []Input
	// Others are the other files of the directories walked (not in hidden
	// directories, not in charts): neither manifests, nor charts, nor image
	// lists; Rel is their path under --output-dir. A command that writes a
	// directory's manifests to another directory copies them, with the
	// image lists, so that the result is complete (a sealer Kubefile, a
	// README).
	Others []Input
	// Links are the symbolic links inside the directories walked.
	Links []Link
}

// ExpandPaths turns command-line paths into inputs: "-" is standard input
// (no path gives no input: reading standard input then is the caller's
// choice); a file is itself; a directory is walked recursively in lexical
// order for *.yaml, *.yml and *.json files and sealer's imageList files,
// except that a directory holding a Chart.yaml is a chart (its templates
// are never read as manifests) and a *.tgz file is a packaged chart. A
// file named imageList, found or given, is an image list.
//
// Symbolic links are not followed out of a directory given: a link whose
// target is outside it (or does not exist) is an error naming the link
// and its target, whether it is found walking the directory or inside a
// chart directory; a link inside it is read as its target (see Expand for
// the list). A file given by name is read wherever it is.
func ExpandPaths(paths []string) ([]Input, error) {
	e, err := Expand(paths)
	if err != nil {
		return nil, err
	}
	return e.Inputs, nil
}

// Expand is ExpandPaths that also returns the other files of the
// directories walked and the symbolic links met inside them.
func Expand(paths []string) (*Expanded, error) {
	e := &Expanded{}
	if len(paths) == 0 {
		return e, nil
	}
	for _, p := range paths {
		if p == "-" {
			e.Inputs = append(e.Inputs, Input{Path: "-", Rel: "stdin.yaml"})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			e.Inputs = append(e.Inputs, Input{Path: p, Rel: filepath.Base(p), Dir: filepath.Dir(p), Chart: isPackagedChart(p), ImageList: filepath.Base(p) == ImageListName})
			continue
		}
		if err := e.walk(p); err != nil {
			return nil, err
		}
	}
	if len(e.Inputs) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoInputs, strings.Join(paths, ", "))
	}
	return e, nil
}

// walk adds what the directory p holds.
func (e *Expanded) walk(p string) error {
	if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		// A link given as the directory: walk its target ("link/" is
		// the directory it names, where "link" is the link itself).
		p += string(filepath.Separator)
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p, path)
		if d.Type()&fs.ModeSymlink != 0 && path != p {
			l, err := safefile.Resolve(p, path)
			if err != nil {
				return err
			}
			e.Links = append(e.Links, Link{Path: l.Path, Target: l.Target, Dir: l.Dir})
			if l.Dir {
				return nil // not walked: its files are read where they are
			}
		}
		if d.IsDir() {
			if path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if isChartDir(path) {
				if _, err := safefile.CheckLinks(path); err != nil {
					return fmt.Errorf("chart %s: %w", path, err)
				}
				dir := p
				if rel == "." {
					rel, dir = filepath.Base(filepath.Clean(p)), filepath.Dir(filepath.Clean(p))
				}
				e.Inputs = append(e.Inputs, Input{Path: path, Rel: rel, Dir: dir, Chart: true})
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Name() == ImageListName:
			e.Inputs = append(e.Inputs, Input{Path: path, Rel: rel, Dir: p, ImageList: true})
		case manifestExts[strings.ToLower(filepath.Ext(path))]:
			e.Inputs = append(e.Inputs, Input{Path: path, Rel: rel, Dir: p})
		case isPackagedChart(path):
			e.Inputs = append(e.Inputs, Input{Path: path, Rel: rel, Dir: p, Chart: true})
		default:
			e.Others = append(e.Others, Input{Path: path, Rel: rel, Dir: p})
		}
		return nil
	})
}

func isChartDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "Chart.yaml"))
	return err == nil && !st.IsDir()
}

func isPackagedChart(path string) bool {
	return strings.HasSuffix(path, ".tgz") || strings.HasSuffix(path, ".tar.gz")
}

// OutputDirError reports an output directory that is the directory an
// input was found in: writing the input's output there would replace the
// input (rewriting files where they are is --in-place's job).
type OutputDirError struct {
	// Dir is the output directory, Input the input it would replace.
	Dir, Input string
}

func (e *OutputDirError) Error() string {
	return fmt.Sprintf("output directory %s is the directory of the input %s: its output would replace it", e.Dir, e.Input)
}

// ForOutputDir prepares the inputs for writing their outputs under dir, at
// their Rel paths: an input whose output would replace it (dir is its Dir)
// is an *OutputDirError; the files below dir, when dir is inside a
// directory given (out/ in app/), are left out of the inputs and of the
// other files, so that a run never reads its own earlier output. A dir
// that does not exist yet holds nothing to leave out.
func (e *Expanded) ForOutputDir(dir string) error {
	out, err := realPath(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	real := map[string]string{} // directory -> its real path, "" when unknown
	resolve := func(d string) string {
		r, ok := real[d]
		if !ok {
			r, _ = realPath(d)
			real[d] = r
		}
		return r
	}
	keep := func(in Input) (bool, error) {
		if in.Dir == "" {
			return true, nil
		}
		root := resolve(in.Dir)
		switch {
		case root == "":
			return true, nil
		case root == out:
			return false, &OutputDirError{Dir: dir, Input: in.Path}
		case within(out, root):
			// The output directory is inside the directory given: what
			// is below it is an earlier output.
			if d := resolve(filepath.Dir(in.Path)); d == out || within(d, out) {
				return false, nil
			}
		}
		return true, nil
	}
	filter := func(ins []Input) ([]Input, error) {
		kept := ins[:0]
		for _, in := range ins {
			ok, err := keep(in)
			if err != nil {
				return nil, err
			}
			if ok {
				kept = append(kept, in)
			}
		}
		return kept, nil
	}
	if e.Inputs, err = filter(e.Inputs); err != nil {
		return err
	}
	if e.Others, err = filter(e.Others); err != nil {
		return err
	}
	links := e.Links[:0]
	for _, l := range e.Links {
		if d := resolve(filepath.Dir(l.Path)); d != out && !within(d, out) {
			links = append(links, l)
		}
	}
	e.Links = links
	return nil
}

// realPath is p absolute, with symbolic links resolved.
func realPath(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(a)
}

// within reports whether path p is strictly below directory d (both
// cleaned and absolute).
func within(p, d string) bool {
	return strings.HasPrefix(p, d) && len(p) > len(d) && (p[len(d)] == filepath.Separator || strings.HasSuffix(d, string(filepath.Separator)))
}
