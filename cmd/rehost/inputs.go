package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
)

// stream is one manifest stream to rewrite: a file, stdin, or a rendered
// chart template.
type stream struct {
	name string // for errors and reports
	rel  string // output path under --output-dir
	path string // the file to replace with --in-place; "" when it is not a file
	open func() (io.ReadCloser, error)
	// rewrite, when set, rewrites the stream instead of reading open: the
	// documents of a rendered chart, located in their templates.
	rewrite func(rw *manifest.Rewriter, w io.Writer) error
}

// stdinIsTerminal reports whether r, the standard input, is a terminal.
// Tests replace it.
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// hintStdin prints a one-line hint on stderr when a command given no PATH
// is about to wait for manifests on a terminal, which looks like a hang.
func hintStdin(s streams, args []string, command string) {
	if len(args) == 0 && stdinIsTerminal(s.in) {
		fmt.Fprintf(s.err, "rehost: reading manifests from standard input (a terminal); end with Ctrl-D, or give a file or directory: rehost %s PATH\n", command)
	}
}

// openPaths expands command-line paths into streams; chart references are
// fetched, charts rendered.
// Image lists (files named imageList) are read into rw at once.
func openPaths(args []string, hf *helmFlags, rw *manifest.Rewriter, s streams) ([]stream, error) {
	e, err := hf.src.expand(args, s)
	if err != nil {
		return nil, err
	}
	return openStreams(e.Inputs, hf, rw, s)
}

// warnLinks warns about the symbolic links inside the directories walked.
func warnLinks(links []manifest.Link, s streams) {
	for _, l := range links {
		if l.Dir {
			fmt.Fprintf(s.err, "rehost: warning: %s is a symbolic link to the directory %s: not walked (its files are read where they are)\n", l.Path, l.Target)
		} else {
			fmt.Fprintf(s.err, "rehost: warning: %s is a symbolic link to %s: read as that file\n", l.Path, l.Target)
		}
	}
}

// readImages reads every stream for its images only.
func readImages(rw *manifest.Rewriter, sts []stream) error {
	for _, st := range sts {
		if err := rewriteStream(rw, st, nil); err != nil {
			return err
		}
	}
	return nil
}

// openStreams expands the inputs into streams; charts are rendered.
func openStreams(inputs []manifest.Input, hf *helmFlags, rw *manifest.Rewriter, s streams) ([]stream, error) {
	var out []stream
	charts := false
	for _, in := range inputs {
		charts = charts || in.Chart
		switch {
		case in.ImageList:
			if err := readImageList(rw, in.Path, s.in); err != nil {
				return nil, err
			}
		case in.Path == "-":
			out = append(out, stream{name: in.Name(), rel: in.Rel, open: func() (io.ReadCloser, error) { return io.NopCloser(s.in), nil }})
		case in.Chart:
			charts, err := chartStreams(in, hf, rw, s)
			if err != nil {
				return nil, err
			}
			out = append(out, charts...)
		default:
			out = append(out, stream{name: in.Name(), rel: in.Rel, path: in.Path, open: func() (io.ReadCloser, error) { return os.Open(in.Path) }})
		}
	}
	// A ConfigMap may hold an image that a container of another file
	// receives through $(VAR) (Helm and kustomize write the ConfigMap
	// first): scan the files for such references before the first is
	// rewritten. One stream, standard input and charts scan themselves as
	// they are rewritten.
	for _, st := range out {
		if st.path == "" || len(out) == 1 {
			continue
		}
		if err := scanEnvImages(rw, st); err != nil {
			return nil, err
		}
	}
	if set := hf.changed(); len(set) > 0 && !charts {
		fmt.Fprintf(s.err, "rehost: warning: %s only apply to charts, and no input is a chart\n", strings.Join(set, ", "))
	}
	return out, nil
}

// rewriteStream rewrites one stream into w (nil: only collect images).
func rewriteStream(rw *manifest.Rewriter, st stream, w io.Writer) error {
	if st.rewrite != nil {
		return st.rewrite(rw, w)
	}
	r, err := st.open()
	if err != nil {
		return err
	}
	defer r.Close()
	return rw.Rewrite(w, r, st.name)
}

// scanEnvImages scans a file stream for the ConfigMap keys it passes as
// images (manifest.Rewriter.ScanEnvImages).
func scanEnvImages(rw *manifest.Rewriter, st stream) error {
	// Regular files only: a FIFO or a device read now would be gone; it
	// scans itself when it is rewritten.
	if info, err := os.Stat(st.path); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	r, err := st.open()
	if err != nil {
		return err
	}
	defer r.Close()
	if err := rw.ScanEnvImages(r); err != nil {
		return fmt.Errorf("%s: %w", st.name, err)
	}
	return nil
}
