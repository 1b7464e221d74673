package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// corePath is the module path of the core; every rehost module's path is
// it or starts with it and a slash.
const corePath = "github.com/rehost/rehost"

// isRehost reports whether a module path is one of this repository's.
func isRehost(p string) bool { return p == corePath || strings.HasPrefix(p, corePath+"/") }

// repo is a checkout: its root and the directories of its released modules.
type repo struct {
	root     string
	released []string // module directories relative to root, "." for the core
}

// mod is one module of the checkout.
type mod struct {
	dir  string // relative to the root, "." for the core
	path string // module path
	file *modfile.File
	data []byte
}

// gomod returns the go.mod path of a module directory, relative to the
// root, for messages.
func gomod(dir string) string {
	if dir == "." {
		return "go.mod"
	}
	return dir + "/go.mod"
}

// tag is the git tag of a module directory at a version: path-prefixed
// for every module but the core, as kustomize tags kyaml/v0.21.2.
func tag(dir, version string) string {
	if dir == "." {
		return version
	}
	return dir + "/" + version
}

// checkVersion reports whether v can be the version of every rehost module:
// a canonical semantic version, v0 or v1 (the module paths have no /vN
// suffix).
func checkVersion(v string) error {
	switch {
	case v == "":
		return errors.New("no version: give VERSION=vX.Y.Z")
	case !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "":
		return fmt.Errorf("version %q is not a semantic version of the form vX.Y.Z (or vX.Y.Z-pre)", v)
	case semver.Major(v) != "v0" && semver.Major(v) != "v1":
		return fmt.Errorf("version %s: a major version above v1 needs module paths ending in /%s (go.dev/ref/mod#major-version-suffixes)", v, semver.Major(v))
	}
	return nil
}

// modules reads the go.mod of every module the checkout tracks (every
// tracked file named go.mod), in directory order.
func (r *repo) modules() ([]*mod, error) {
	out, err := git(r.root, "ls-files", "-z", "--cached")
	if err != nil {
		return nil, err
	}
	var mods []*mod
	for _, f := range strings.Split(string(out), "\x00") {
		if path.Base(f) != "go.mod" {
			continue
		}
		dir := path.Dir(f)
		m, err := readMod(r.root, dir)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].dir < mods[j].dir })
	return mods, nil
}

func readMod(root, dir string) (*mod, error) {
	name := gomod(dir)
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	if f.Module == nil {
		return nil, fmt.Errorf("%s: no module line", name)
	}
	return &mod{dir: dir, path: f.Module.Mod.Path, file: f, data: data}, nil
}

// releasedModules returns the released modules, and an error naming each
// released directory that is not a module of this repository and each
// module outside test/ and tools/ that is not listed as released (a new
// module must be released or moved).
func (r *repo) releasedModules(all []*mod) ([]*mod, error) {
	byDir := map[string]*mod{}
	for _, m := range all {
		byDir[m.dir] = m
	}
	var errs []error
	var rel []*mod
	for _, d := range r.released {
		m, ok := byDir[d]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: no such module (released modules are listed in the Makefile's RELEASED)", gomod(d)))
		case !isRehost(m.path):
			errs = append(errs, fmt.Errorf("%s: module %s is not under %s", gomod(d), m.path, corePath))
		default:
			rel = append(rel, m)
		}
	}
	for _, m := range all {
		if slices.Contains(r.released, m.dir) || strings.HasPrefix(m.dir, "test/") || strings.HasPrefix(m.dir, "tools/") {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: module %s is neither released (the Makefile's RELEASED) nor a test or tool module (under test/ or tools/)", gomod(m.dir), m.path))
	}
	return rel, errors.Join(errs...)
}

// pin writes the release state of every go.mod: each requirement of a
// rehost module at version, and no replace directive of a rehost module in
// a released module. Test and tool modules keep their replace directives
// (they are not released) but require the same version, as the go command
// would select it anyway. It returns the go.mod files it changed.
func (r *repo) pin(version string) ([]string, error) {
	all, err := r.modules()
	if err != nil {
		return nil, err
	}
	rel, err := r.releasedModules(all)
	if err != nil {
		return nil, err
	}
	released := map[string]bool{}
	for _, m := range rel {
		released[m.path] = true
	}
	var changed []string
	for _, m := range all {
		for _, req := range m.file.Require {
			if isRehost(req.Mod.Path) && req.Mod.Version != version {
				if err := m.file.AddRequire(req.Mod.Path, version); err != nil {
					return nil, fmt.Errorf("%s: %w", gomod(m.dir), err)
				}
			}
		}
		if released[m.path] {
			for _, rep := range slices.Clone(m.file.Replace) {
				if isRehost(rep.Old.Path) {
					if err := m.file.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
						return nil, fmt.Errorf("%s: %w", gomod(m.dir), err)
					}
				}
			}
		}
		m.file.Cleanup()
		data, err := m.file.Format()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gomod(m.dir), err)
		}
		if bytes.Equal(data, m.data) {
			continue
		}
		if err := os.WriteFile(filepath.Join(r.root, filepath.FromSlash(gomod(m.dir))), data, 0o644); err != nil {
			return nil, err
		}
		changed = append(changed, gomod(m.dir))
	}
	return changed, nil
}

// problems lists, for each released module, what keeps it from being
// released at version: a replace or exclude directive (go install
// module@version refuses a module that has one, and an importer ignores
// them), and a requirement of a rehost module at another version or of a
// rehost module that is not released. Each problem names the go.mod file
// and line.
func (r *repo) problems(version string) ([]string, error) {
	all, err := r.modules()
	if err != nil {
		return nil, err
	}
	rel, err := r.releasedModules(all)
	if err != nil {
		return nil, err
	}
	released := map[string]bool{}
	for _, m := range rel {
		released[m.path] = true
	}
	var out []string
	at := func(m *mod, line *modfile.Line) string {
		if line == nil {
			return gomod(m.dir)
		}
		return fmt.Sprintf("%s:%d", gomod(m.dir), line.Start.Line)
	}
	for _, m := range rel {
		start := len(out)
		for _, req := range m.file.Require {
			switch {
			case !isRehost(req.Mod.Path):
			case !released[req.Mod.Path]:
				out = append(out, fmt.Sprintf("%s: requires %s, which is not a released module", at(m, req.Syntax), req.Mod.Path))
			case req.Mod.Version != version:
				out = append(out, fmt.Sprintf("%s: requires %s %s, want %s", at(m, req.Syntax), req.Mod.Path, req.Mod.Version, version))
			}
		}
		for _, rep := range m.file.Replace {
			old := rep.Old.Path
			if rep.Old.Version != "" {
				old += " " + rep.Old.Version
			}
			repl := rep.New.Path
			if rep.New.Version != "" {
				repl += " " + rep.New.Version
			}
			out = append(out, fmt.Sprintf("%s: replace %s => %s: a released module has no replace directive (importers ignore it; go install of a module with one fails)", at(m, rep.Syntax), old, repl))
		}
		for _, ex := range m.file.Exclude {
			out = append(out, fmt.Sprintf("%s: exclude %s %s: a released module has no exclude directive (go install of a module with one fails)", at(m, ex.Syntax), ex.Mod.Path, ex.Mod.Version))
		}
		// In line order within each go.mod.
		lineOf := func(s string) int {
			_, rest, _ := strings.Cut(s, ":")
			n, _ := strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
			return n
		}
		sort.SliceStable(out[start:], func(i, j int) bool { return lineOf(out[start+i]) < lineOf(out[start+j]) })
	}
	return out, nil
}

// pinnedVersion is the one version at which the released modules require
// each other.
func pinnedVersion(rel []*mod) (string, error) {
	released := map[string]bool{}
	for _, m := range rel {
		released[m.path] = true
	}
	seen := map[string]string{} // version -> first go.mod requiring it
	for _, m := range rel {
		for _, req := range m.file.Require {
			if released[req.Mod.Path] {
				if _, ok := seen[req.Mod.Version]; !ok {
					seen[req.Mod.Version] = gomod(m.dir)
				}
			}
		}
	}
	if len(seen) != 1 {
		var vs []string
		for v, f := range seen {
			vs = append(vs, v+" ("+f+")")
		}
		sort.Strings(vs)
		return "", fmt.Errorf("the released modules do not require each other at one version: %v", vs)
	}
	for v := range seen {
		return v, nil
	}
	panic("unreachable")
}

// ordered returns the released modules so that each comes after the
// rehost modules it requires (the core first, the commands last).
func ordered(rel []*mod) ([]*mod, error) {
	byPath := map[string]*mod{}
	for _, m := range rel {
		byPath[m.path] = m
	}
	var out []*mod
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(m *mod) error
	visit = func(m *mod) error {
		switch state[m.path] {
		case 1:
			return fmt.Errorf("%s: the rehost modules require each other in a cycle", gomod(m.dir))
		case 2:
			return nil
		}
		state[m.path] = 1
		for _, req := range m.file.Require {
			if dep, ok := byPath[req.Mod.Path]; ok {
				if err := visit(dep); err != nil {
					return err
				}
			}
		}
		state[m.path] = 2
		out = append(out, m)
		return nil
	}
	for _, m := range rel {
		if err := visit(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// moduleVersion is the module.Version of a module at version.
func (m *mod) at(version string) module.Version {
	return module.Version{Path: m.path, Version: version}
}

// git runs git in dir and returns its standard output.
func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
