// Package sealer proves that sealer (github.com/sealerio/sealer, go 1.17,
// Kubernetes libraries v0.24 by replace, kyaml v0.13, go-containerregistry
// v0.10) can import rehost's core module as it is: its module graph keeps
// every version it selects, gains no module but the core's YAML parser,
// builds, and starts. The graph comes from ../shared/sealer-go-mod.tsv
// beside the checkout, read from sealer's go.mod.
//
// The tests use only the standard library and the go command, so that the
// core module's requirements stay what TestCoreModuleShape allows.
package sealer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// coreModule is rehost's core module.
	coreModule = "github.com/rehost/rehost"
	// corePseudoVersion is the version a consumer requires until rehost is
	// published; the replace directive supplies the code.
	corePseudoVersion = "v0.0.0-00010101000000-000000000000"
	// maxGoMinor: neither the core nor a consumer that imports it may be
	// made to say more than go 1.22 (with go ≥ 1.24, go vet fails 7 of
	// sealer's printf call sites; facts.md).
	maxGoMinor = 22
	// go122 is the Go 1.22 release TestCoreBuildsWithGo122 compiles with.
	go122 = "go1.22.12"
	// sealerTable is sealer's module graph, relative to the checkout root.
	sealerTable = "../shared/sealer-go-mod.tsv"
)

// coreRequirements are the only modules the core may require, and so the
// only modules importing it may add to a consumer's graph.
var coreRequirements = []string{"go.yaml.in/yaml/v3"}

// TestCoreModuleShape: the core's go.mod says at most go 1.22 and requires
// exactly coreRequirements, and no package of the core, tests included,
// depends on a package outside the standard library, the core and those
// modules.
func TestCoreModuleShape(t *testing.T) {
	root := checkoutRoot(t)
	touchCore(t, root)
	var mod goMod
	decodeJSON(t, goRun(t, root, coreEnv("local"), "mod", "edit", "-json"), &mod)
	if !goLineAtMost(mod.Go, 1, maxGoMinor) {
		t.Errorf("%s/go.mod: go %s, want at most go 1.%d", root, mod.Go, maxGoMinor)
	}
	var required []string
	for _, r := range mod.Require {
		required = append(required, r.Path)
	}
	sort.Strings(required)
	if !slices.Equal(required, coreRequirements) {
		t.Errorf("%s/go.mod requires %v, want exactly %v", root, required, coreRequirements)
	}

	// -deps -test: every package the core's packages and their tests
	// import, however indirectly.
	out := goRun(t, root, coreEnv("local"), "list", "-deps", "-test", "-json=ImportPath,Standard,Module,Imports", "./...")
	pkgs := decodeAll[listedPackage](t, out)
	allowed := map[string]bool{coreModule: true}
	for _, m := range coreRequirements {
		allowed[m] = true
	}
	outside := func(p listedPackage) bool {
		return !p.Standard && (p.Module == nil || !allowed[p.Module.Path])
	}
	moduleOf := func(p listedPackage) string {
		if p.Module == nil {
			return "no module"
		}
		return strings.TrimSpace("module " + p.Module.Path + " " + p.Module.Version)
	}
	byPath := map[string]listedPackage{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	// Each import that crosses the boundary is an error; the packages
	// beyond it are counted by module.
	reached := map[string]int{}
	checked := 0
	for _, p := range pkgs {
		switch {
		case p.Standard:
			continue
		case outside(p):
			reached[moduleOf(p)]++
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if q, ok := byPath[imp]; ok && outside(q) {
				t.Errorf("%s imports %s (%s), which is neither the standard library, the core nor %v", p.ImportPath, q.ImportPath, moduleOf(q), coreRequirements)
			}
		}
	}
	if len(reached) > 0 {
		var mods []string
		for m, n := range reached {
			mods = append(mods, fmt.Sprintf("%s (%d packages)", m, n))
		}
		sort.Strings(mods)
		t.Errorf("the core's packages and tests depend on packages outside the standard library, the core and %v: %s", coreRequirements, strings.Join(mods, ", "))
	}
	if checked == 0 {
		t.Fatalf("go list -deps -test ./... in %s listed no package of the core", root)
	}
}

// TestSealerConsumer builds a consumer module from sealer's go.mod (its go
// line, every requirement and every replacement), adds the core as sealer
// would, and builds and runs a program that uses every package of the core
// together with k8s.io/client-go. It fails on every module whose selected
// version changes, every module that enters the graph other than the core's
// own requirements, a go line above 1.22, a failed build, and a program
// that does not start (client-go v0.24 panics at init when gnostic-models
// registers the OpenAPI v2 types its gnostic already registered).
func TestSealerConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the sealer consumer, which resolves sealer's module graph from the module proxy and builds client-go")
	}
	root := checkoutRoot(t)
	touchCore(t, root)
	table := readSealerTable(t, root)
	pkgs := corePackages(t, root)
	dir := t.TempDir()
	env := consumerEnv()
	start := time.Now()
	step := func(format string, args ...any) {
		t.Logf("%6.1fs %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	if err := os.WriteFile(filepath.Join(dir, "go.mod"), table.goMod(), 0o644); err != nil {
		t.Fatal(err)
	}
	// sealer's graph as it is, for the modules that enter it. -mod=mod
	// lets the go command write go.sum (sealer's go.sum is not in the
	// table); it leaves go.mod as written.
	before := listModules(t, dir, env)
	step("sealer's graph: %d modules", len(before))

	// Adopting the core: the require and replace lines a consumer writes
	// until rehost is published (docs/modules.md), then `go get`. go get,
	// not go mod tidy, is what models adoption: it resolves the graph from
	// every requirement sealer has, as in sealer's tree, and changes only
	// what the new requirement forces. Tidy would prune every requirement
	// this one-file consumer does not import, most of sealer's table, and
	// so compare nothing. The version is explicit because `go get` of a
	// bare path asks the proxy for versions of a module it does not serve.
	goRun(t, dir, env, "mod", "edit",
		"-require="+coreModule+"@"+corePseudoVersion,
		"-replace="+coreModule+"="+root)
	got, err := goCmd(dir, env, "get", coreModule+"@"+corePseudoVersion).CombinedOutput()
	if err != nil {
		t.Fatalf("go get %s@%s in sealer's module graph: %v\n%s", coreModule, corePseudoVersion, err, got)
	}
	step("go get %s: %s", coreModule, strings.Join(strings.Fields(string(got)), " "))

	if err := os.WriteFile(filepath.Join(dir, "main.go"), consumerMain(pkgs), 0o644); err != nil {
		t.Fatal(err)
	}
	// -mod=mod: go build adds the requirements the new imports need
	// (go.yaml.in/yaml/v3 // indirect), as go mod tidy would in sealer's
	// tree. The graph is checked whether or not the build succeeds.
	bin := filepath.Join(dir, "consumer")
	buildOut, buildErr := goCmd(dir, env, "build", "-o", bin, ".").CombinedOutput()
	step("go build")

	var mod goMod
	decodeJSON(t, goRun(t, dir, env, "mod", "edit", "-json"), &mod)
	if !goLineAtMost(mod.Go, 1, maxGoMinor) {
		t.Errorf("the consumer's go.mod says go %s after adopting the core (sealer's says go %s), want at most go 1.%d",
			mod.Go, table.goLine, maxGoMinor)
	}
	if mod.Toolchain != nil {
		t.Logf("the go command added a toolchain line: toolchain %s", mod.Toolchain.Name)
	}
	after := listModules(t, dir, env)
	requiredBy := moduleRequirers(goRun(t, dir, env, "mod", "graph"))
	for _, d := range compareGraphs(table, before, after, requiredBy) {
		t.Error(d)
	}
	if buildErr != nil {
		t.Fatalf("go build of a program importing %v and k8s.io/client-go in sealer's module graph: %v\n%s", pkgs, buildErr, buildOut)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the consumer program: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	step("ran the consumer")
	if got := stdout.String(); got != consumerWant {
		t.Errorf("the consumer program printed\n%s\nwant\n%s", got, consumerWant)
	}
}

// TestCoreBuildsWithGo122 compiles the core's packages and tests with the
// Go 1.22 toolchain itself (downloaded by the go command as the module
// golang.org/toolchain), so that nothing newer than Go 1.22, in the
// language or the standard library, reaches a consumer that builds with it.
func TestCoreBuildsWithGo122(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Go 1.22 build, which downloads " + go122 + " from the module proxy")
	}
	root := checkoutRoot(t)
	touchCore(t, root)
	start := time.Now()
	env := coreEnv(go122)
	if out := goRun(t, root, env, "version"); !strings.Contains(out, go122+" ") {
		t.Fatalf("GOTOOLCHAIN=%s go version printed %q", go122, out)
	}
	// go vet compiles each package and its tests, and vet's own checks are
	// Go 1.22's.
	goRun(t, root, env, "vet", "./...")
	t.Logf("%s vet ./... in %.1fs", go122, time.Since(start).Seconds())
}

// checkoutRoot is the root of the rehost checkout: this file is
// test/sealer/consumer_test.go in it.
func checkoutRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller: no file name")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// touchCore reads the core module's go.mod, go.sum and Go files. The
// tests read them through the go command, which go test does not see; reading
// them here lets go test's cache know that a cached result is stale when
// one of them changes.
func touchCore(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			// Another module of the repository.
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") || path == filepath.Join(root, "go.mod") || path == filepath.Join(root, "go.sum") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// environ is the process's environment with the given variables set.
func environ(set ...string) []string {
	drop := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// coreEnv runs the go command in the checkout: the core alone (no go.work),
// its go.mod and go.sum read-only.
func coreEnv(toolchain string) []string {
	return environ("GOWORK=off", "GOTOOLCHAIN="+toolchain, "GOFLAGS=-mod=readonly")
}

// consumerEnv runs the go command in the consumer: no workspace, the
// installed toolchain, go.mod and go.sum written as needed, and the
// environment's GOPROXY (by default proxy.golang.org), so that the test
// works from an empty module cache.
func consumerEnv() []string {
	return environ("GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
}

func goCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

// goRun runs the go command and returns its standard output; it fails the
// test, with the command's standard error, when the command fails.
func goRun(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := goCmd(dir, env, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("in %s: go %s: %v\n%s%s", dir, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func decodeJSON(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("decoding the go command's JSON: %v\n%s", err, data)
	}
}

// decodeAll decodes a stream of JSON values, as `go list -json` prints.
func decodeAll[T any](t *testing.T, data string) []T {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(data))
	var all []T
	for {
		var v T
		switch err := d.Decode(&v); {
		case err == io.EOF:
			return all
		case err != nil:
			t.Fatalf("decoding the go command's JSON: %v\n%s", err, data)
		}
		all = append(all, v)
	}
}

// goMod is the part of `go mod edit -json` the tests read.
type goMod struct {
	Go        string
	Toolchain *struct{ Name string }
	Require   []struct{ Path string }
}

// module is a module of `go list -m -json`.
type module struct {
	Path, Version string
	Main          bool
	Replace       *module
}

// listedPackage is a package of `go list -json`.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Module     *module
	Imports    []string
}

// listModules is the consumer's module graph, by path.
func listModules(t *testing.T, dir string, env []string) map[string]module {
	t.Helper()
	out := goRun(t, dir, env, "list", "-m", "-json", "all")
	mods := map[string]module{}
	for _, m := range decodeAll[module](t, out) {
		if !m.Main {
			mods[m.Path] = m
		}
	}
	if len(mods) == 0 {
		t.Fatalf("in %s: go list -m all listed no module", dir)
	}
	return mods
}

// goVersion is a go line's version: major.minor or major.minor.patch.
var goVersion = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?$`)

// goLineAtMost reports whether a go line ("1.22", "1.21.3") is at most
// major.minor(.0); "1.22.1" is above 1.22, since it asks for that patch
// release of the toolchain. A line it cannot read ("1.22rc1") is not.
func goLineAtMost(v string, major, minor int) bool {
	m := goVersion.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	maj, _ := strconv.Atoi(m[1])
	mnr, _ := strconv.Atoi(m[2])
	patch := 0
	if m[3] != "" {
		patch, _ = strconv.Atoi(m[3])
	}
	switch {
	case maj != major:
		return maj < major
	case mnr != minor:
		return mnr < minor
	}
	return patch == 0
}
