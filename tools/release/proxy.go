package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// writeProxy writes module m at version into dir, laid out as a module
// proxy (go.dev/ref/mod#goproxy-protocol) that GOPROXY=file://DIR serves:
// @v/list, @v/VERSION.info, .mod and .zip. The zip holds the files git
// tracks in the module's directory, as they are in the working tree, minus
// nested modules, as the module proxy would make it from a commit of this
// tree (golang.org/x/mod/zip, the go command's own code); like the go
// command, it adds the repository's LICENSE to a module that has none.
func (r *repo) writeProxy(dir string, m *mod, version string, t time.Time) error {
	mv := m.at(version)
	escPath, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	escVer, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	files, err := r.moduleFiles(m.dir)
	if err != nil {
		return err
	}
	var zipBuf bytes.Buffer
	if err := modzip.Create(&zipBuf, mv, files); err != nil {
		return fmt.Errorf("%s: %w", gomod(m.dir), err)
	}
	gomodData, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(gomod(m.dir))))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t.UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		escVer + ".zip":  zipBuf.Bytes(),
		escVer + ".mod":  gomodData,
		escVer + ".info": info,
		"list":           []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// moduleFiles lists the files git tracks under a module directory, read
// from the working tree (a tracked file deleted from it is left out).
// modzip.Create leaves out the files of nested modules itself.
func (r *repo) moduleFiles(dir string) ([]modzip.File, error) {
	args := []string{"ls-files", "-z", "--cached"}
	if dir != "." {
		args = append(args, "--", dir)
	}
	out, err := git(r.root, args...)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	var files []modzip.File
	haveLicense := false
	for _, name := range strings.Split(string(out), "\x00") {
		rel, ok := strings.CutPrefix(name, prefix)
		if name == "" || !ok {
			continue
		}
		p := filepath.Join(r.root, filepath.FromSlash(name))
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		files = append(files, treeFile{rel: rel, path: p, info: fi})
		if rel == "LICENSE" {
			haveLicense = true
		}
	}
	if !haveLicense && dir != "." {
		p := filepath.Join(r.root, "LICENSE")
		if fi, err := os.Lstat(p); err == nil {
			if _, err := git(r.root, "ls-files", "--error-unmatch", "LICENSE"); err == nil {
				files = append(files, treeFile{rel: "LICENSE", path: p, info: fi})
			}
		}
	}
	return files, nil
}

// treeFile is a file of the working tree, named by its path in the module.
type treeFile struct {
	rel  string
	path string
	info fs.FileInfo
}

func (f treeFile) Path() string                 { return path.Clean(f.rel) }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }
