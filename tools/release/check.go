package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// goEnv is the environment of the go commands that resolve the release
// state of the modules: no workspace, the rehost modules from the module
// proxy directory proxyDir (made from this tree), every other module from
// the module cache's download directory and then the configured GOPROXY,
// and a private module cache (modcache), so that a rehost version made
// from this tree never enters the user's module cache, where it would
// stand for the real release. The rehost modules are not in the checksum
// database until they are published (GONOSUMDB); go.sum holds their hashes.
type goEnv struct {
	proxyDir, modcache string
	sharedCache        string // the user's GOMODCACHE
	upstream           string // the user's GOPROXY
}

func newGoEnv(tmp string) (*goEnv, error) {
	e := &goEnv{proxyDir: filepath.Join(tmp, "proxy"), modcache: filepath.Join(tmp, "modcache")}
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("go env GOMODCACHE GOPROXY: unexpected output %q", out)
	}
	e.sharedCache, e.upstream = lines[0], lines[1]
	return e, os.MkdirAll(e.proxyDir, 0o755)
}

func fileURL(dir string) string { return "file://" + filepath.ToSlash(dir) }

func (e *goEnv) environ(extraFlags ...string) []string {
	proxy := fileURL(e.proxyDir)
	if e.sharedCache != "" {
		proxy += "," + fileURL(filepath.Join(e.sharedCache, "cache", "download"))
	}
	if e.upstream != "" && e.upstream != "off" {
		proxy += "," + e.upstream
	}
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -modcacherw " + strings.Join(extraFlags, " "))
	nosum := corePath
	if v := os.Getenv("GONOSUMDB"); v != "" {
		nosum = v + "," + corePath
	}
	return append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS="+flags,
		"GOPROXY="+proxy,
		"GOMODCACHE="+e.modcache,
		"GONOSUMDB="+nosum,
	)
}

// run runs go with args in dir and returns its combined output.
func (e *goEnv) run(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, indent(out))
	}
	return out, nil
}

func indent(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return ""
	}
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// commitTime is the time of the last commit, the time the proxy's .info
// files give the versions.
func (r *repo) commitTime() time.Time {
	out, err := git(r.root, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Unix(0, 0)
	}
	s, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Unix(0, 0)
	}
	return time.Unix(s, 0)
}

// prep writes the release state at version: pin, then go mod tidy in each
// released module, the core first, each against a proxy directory that
// holds the rehost modules it requires as this tree makes them, so that
// go.sum records the hashes the real module proxy will serve once the tags
// are pushed; then go mod tidy in the test modules whose go.mod changed.
func prep(r *repo, version, tmp string, log io.Writer) error {
	if err := checkVersion(version); err != nil {
		return err
	}
	changed, err := r.pin(version)
	if err != nil {
		return err
	}
	all, err := r.modules()
	if err != nil {
		return err
	}
	rel, err := r.releasedModules(all)
	if err != nil {
		return err
	}
	order, err := ordered(rel)
	if err != nil {
		return err
	}
	e, err := newGoEnv(tmp)
	if err != nil {
		return err
	}
	t := r.commitTime()
	isReleased := map[string]bool{}
	for _, m := range order {
		isReleased[m.dir] = true
		start := time.Now()
		if _, err := e.run(filepath.Join(r.root, m.dir), e.environ(), "mod", "tidy"); err != nil {
			return fmt.Errorf("%s: %w", gomod(m.dir), err)
		}
		if err := r.writeProxy(e.proxyDir, m, version, t); err != nil {
			return err
		}
		fmt.Fprintf(log, "release-prep: %-16s tidy (%.1fs)\n", m.dir, time.Since(start).Seconds())
	}
	// The test modules replace the rehost modules they use with
	// directories, so they resolve without the proxy; tidy them as make
	// modules does.
	for _, m := range all {
		if isReleased[m.dir] {
			continue
		}
		touched := false
		for _, c := range changed {
			touched = touched || c == gomod(m.dir)
		}
		if !touched {
			continue
		}
		start := time.Now()
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir = filepath.Join(r.root, m.dir)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: go mod tidy: %w\n%s", gomod(m.dir), err, indent(out))
		}
		fmt.Fprintf(log, "release-prep: %-16s tidy (%.1fs)\n", m.dir, time.Since(start).Seconds())
	}
	return nil
}

// errNotReleaseState is the error of check when go.mod files are not in the
// release state.
var errNotReleaseState = errors.New("not in the release state")

// check verifies the release state at version (see main's usage).
func check(r *repo, version, tmp string, log io.Writer) error {
	if err := checkVersion(version); err != nil {
		return err
	}
	probs, err := r.problems(version)
	if err != nil {
		return err
	}
	if len(probs) > 0 {
		return fmt.Errorf("the released modules are %w of %s:\n\t%s\nrun `make release-prep VERSION=%s` to write it (then review and commit)",
			errNotReleaseState, version, strings.Join(probs, "\n\t"), version)
	}
	fmt.Fprintf(log, "release-check: every released module requires the others at %s, with no replace or exclude directive\n", version)
	all, err := r.modules()
	if err != nil {
		return err
	}
	rel, err := r.releasedModules(all)
	if err != nil {
		return err
	}
	order, err := ordered(rel)
	if err != nil {
		return err
	}
	e, err := newGoEnv(tmp)
	if err != nil {
		return err
	}
	t := r.commitTime()
	for _, m := range order {
		if err := r.writeProxy(e.proxyDir, m, version, t); err != nil {
			return err
		}
	}
	fmt.Fprintf(log, "release-check: module proxy directory with %d modules at %s: %s\n", len(order), version, e.proxyDir)

	// Each released module, on its own, resolves every requirement from
	// the proxy and its go.mod and go.sum are tidy: go.sum holds the hash
	// of each rehost module as this tree makes it.
	for _, m := range order {
		start := time.Now()
		if _, err := e.run(filepath.Join(r.root, m.dir), e.environ(), "mod", "tidy", "-diff"); err != nil {
			return fmt.Errorf("%s is not tidy in the release state (a checksum mismatch means a module changed after release-prep): run `make release-prep VERSION=%s`: %w", gomod(m.dir), version, err)
		}
		fmt.Fprintf(log, "release-check: %-16s tidy with GOWORK=off and no replace (%.1fs)\n", m.dir, time.Since(start).Seconds())
	}

	if err := consumer(e, version, filepath.Join(tmp, "consumer"), log); err != nil {
		return err
	}

	// go install module@version: what the README tells users.
	start := time.Now()
	gobin := filepath.Join(tmp, "bin")
	env := append(e.environ("-trimpath"), "GOBIN="+gobin, "CGO_ENABLED=0")
	pkg := corePath + "/cmd/rehost@" + version
	if _, err := e.run(tmp, env, "install", pkg); err != nil {
		return err
	}
	out, err := exec.Command(filepath.Join(gobin, "rehost"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), " "+version) {
		return fmt.Errorf("rehost installed with go install %s: rehost version printed %q (%v), want the version %s", pkg, out, err, version)
	}
	fmt.Fprintf(log, "release-check: go install %s: rehost version: %s (%.1fs)\n", pkg, strings.TrimSpace(string(out)), time.Since(start).Seconds())
	return nil
}

// consumerMain uses the core and links pkg/mirror, the heaviest module a
// library user is likely to combine with it.
const consumerMain = `package main

import (
	"fmt"
	"log"
	"os"

	"github.com/rehost/rehost/pkg/manifest"
	_ "github.com/rehost/rehost/pkg/mirror"
	"github.com/rehost/rehost/pkg/rewrite"
)

const pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx:1.25\n"

func main() {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		log.Fatal(err)
	}
	out, err := rw.RewriteBytes([]byte(pod), "pod.yaml")
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(out)
	for _, img := range rw.ToCache() {
		fmt.Println("cache:", img)
	}
}
`

// consumer builds and runs a module that requires the core and pkg/mirror
// at version with require lines only: no replace, no go.work.
func consumer(e *goEnv, version, dir string, log io.Writer) error {
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomodText := fmt.Sprintf("module example.com/consumer\n\ngo 1.22\n\nrequire (\n\t%s %s\n\t%s/pkg/mirror %s\n)\n", corePath, version, corePath, version)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomodText), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(consumerMain), 0o644); err != nil {
		return err
	}
	env := e.environ("-trimpath")
	env = append(env, "CGO_ENABLED=0")
	if _, err := e.run(dir, env, "mod", "tidy"); err != nil {
		return fmt.Errorf("a consumer that requires %s and %s/pkg/mirror at %s (require lines only): %w", corePath, corePath, version, err)
	}
	if _, err := e.run(dir, env, "build", "-o", "consumer", "."); err != nil {
		return fmt.Errorf("a consumer that requires %s and %s/pkg/mirror at %s (require lines only): %w", corePath, corePath, version, err)
	}
	listed, err := e.run(dir, env, "list", "-m", corePath, corePath+"/pkg/mirror")
	if err != nil {
		return err
	}
	want := fmt.Sprintf("%s %s\n%s/pkg/mirror %s\n", corePath, version, corePath, version)
	if string(listed) != want {
		return fmt.Errorf("the consumer selected\n%s\nwant\n%s", indent(listed), indent([]byte(want)))
	}
	out, err := exec.Command(filepath.Join(dir, "consumer")).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("image: sea.hub:5000/library/nginx:1.25")) || !bytes.Contains(out, []byte("cache: docker.io/library/nginx:1.25")) {
		return fmt.Errorf("the consumer program: %v\n%s", err, indent(out))
	}
	gm, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if bytes.Contains(gm, []byte("replace")) {
		return fmt.Errorf("the consumer's go.mod has a replace directive:\n%s", indent(gm))
	}
	fmt.Fprintf(log, "release-check: a consumer module requiring %s and %s/pkg/mirror at %s (no replace, no go.work) builds and runs (%.1fs)\n", corePath, corePath, version, time.Since(start).Seconds())
	return nil
}
