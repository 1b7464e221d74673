package sealer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// sealerGraph is sealer's go.mod as sealer-go-mod.tsv gives it.
type sealerGraph struct {
	goLine   string
	requires []requirement // in the table's order
	replaces []replacement
}

// requirement is a require line: `Path Version`, `// indirect` or not.
type requirement struct {
	Path, Version string
	Indirect      bool
}

// replacement is a replace line, `Old => New Version`: it replaces every
// version of Old. The table's version column holds the replacement's
// version, as in sealer's `k8s.io/api => k8s.io/api v0.24.2`.
type replacement struct {
	Old, New, Version string
}

// readSealerTable reads ../shared/sealer-go-mod.tsv beside the checkout.
// CI has it; elsewhere a missing table skips the test.
func readSealerTable(t *testing.T, root string) sealerGraph {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(sealerTable))
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: CI must provide sealer's module graph in ../shared beside the checkout", path)
		}
		t.Skipf("skipping: %s not found (sealer's module graph, in ../shared beside the checkout; CI fails without it)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseSealerTable(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// goLinePattern finds the go line in the table's header: "# Its go line: go 1.17."
var goLinePattern = regexp.MustCompile(`go line: go (\d+\.\d+(?:\.\d+)?)`)

// parseSealerTable parses the table: '#' header lines (one gives the go
// line), then one module a line, tab-separated: module, version, and how
// sealer requires it, "direct", "indirect" or "replaced by <module>".
func parseSealerTable(name string, data []byte) (sealerGraph, error) {
	var g sealerGraph
	required := map[string]bool{}
	replaced := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			if m := goLinePattern.FindStringSubmatch(line); m != nil {
				if g.goLine != "" {
					return g, fmt.Errorf("%s:%d: a second go line, go %s (the first says go %s)", name, i+1, m[1], g.goLine)
				}
				g.goLine = m[1]
			}
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return g, fmt.Errorf("%s:%d: want module<TAB>version<TAB>how, got %q", name, i+1, line)
		}
		mod, version, how := f[0], f[1], f[2]
		switch {
		case how == "direct" || how == "indirect":
			if required[mod] {
				return g, fmt.Errorf("%s:%d: %s is required twice", name, i+1, mod)
			}
			required[mod] = true
			g.requires = append(g.requires, requirement{Path: mod, Version: version, Indirect: how == "indirect"})
		case strings.HasPrefix(how, "replaced by "):
			by := strings.TrimPrefix(how, "replaced by ")
			if by == "" || strings.ContainsAny(by, " \t") {
				return g, fmt.Errorf("%s:%d: want \"replaced by <module>\", got %q", name, i+1, how)
			}
			if replaced[mod] {
				return g, fmt.Errorf("%s:%d: %s is replaced twice", name, i+1, mod)
			}
			replaced[mod] = true
			g.replaces = append(g.replaces, replacement{Old: mod, New: by, Version: version})
		default:
			return g, fmt.Errorf("%s:%d: %s: how %q is not direct, indirect or replaced by <module>", name, i+1, mod, how)
		}
	}
	switch {
	case g.goLine == "":
		return g, fmt.Errorf("%s: no go line in the header (want a line such as \"# Its go line: go 1.17.\")", name)
	case len(g.requires) == 0:
		return g, fmt.Errorf("%s: no requirement", name)
	}
	return g, nil
}

// goMod is the consumer's go.mod: sealer's go line, requirements and
// replacements.
func (g sealerGraph) goMod() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "module example.com/sealer-consumer\n\ngo %s\n", g.goLine)
	for _, indirect := range []bool{false, true} {
		b.WriteString("\nrequire (\n")
		for _, r := range g.requires {
			if r.Indirect == indirect {
				fmt.Fprintf(&b, "\t%s %s", r.Path, r.Version)
				if indirect {
					b.WriteString(" // indirect")
				}
				b.WriteString("\n")
			}
		}
		b.WriteString(")\n")
	}
	if len(g.replaces) > 0 {
		b.WriteString("\nreplace (\n")
		for _, r := range g.replaces {
			fmt.Fprintf(&b, "\t%s => %s %s\n", r.Old, r.New, r.Version)
		}
		b.WriteString(")\n")
	}
	return b.Bytes()
}

// compareGraphs lists every difference between sealer's graph (the table,
// and before, the graph the go command resolves from it) and after, the
// graph once the core is added: a requirement or a replacement whose
// version changes or that leaves, a module that enters other than the core
// and coreRequirements, and last any other module of before (one only
// go.mod files name) whose version changes or that leaves. requiredBy names the
// modules whose go.mod requires a module (`go mod graph`), for the message.
func compareGraphs(g sealerGraph, before, after map[string]module, requiredBy map[string][]string) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	inTable := map[string]bool{}
	for _, r := range g.requires {
		inTable[r.Path] = true
		how := "directly"
		if r.Indirect {
			how = "indirectly"
		}
		if b, ok := before[r.Path]; ok && b.Version != r.Version {
			add("%s: sealer requires %s %s, but its own graph selects %s: the table is not sealer's graph", r.Path, how, r.Version, b.Version)
		}
		a, ok := after[r.Path]
		switch {
		case !ok:
			add("%s: sealer requires %s %s, the consumer's graph no longer holds it", r.Path, how, r.Version)
		case a.Version != r.Version:
			add("%s: sealer requires %s %s, the consumer selects %s", r.Path, how, r.Version, a.Version)
		}
	}
	for _, r := range g.replaces {
		a, ok := after[r.Old]
		if !ok {
			if _, was := before[r.Old]; was {
				add("%s (sealer replaces it by %s %s) is no longer in the consumer's graph", r.Old, r.New, r.Version)
			}
			continue
		}
		want := r.New + " " + r.Version
		got := "nothing"
		if a.Replace != nil {
			got = strings.TrimSpace(a.Replace.Path + " " + a.Replace.Version)
		}
		if got != want {
			add("%s: sealer replaces it by %s, the consumer by %s", r.Old, want, got)
		}
	}
	allowed := map[string]bool{coreModule: true}
	for _, m := range coreRequirements {
		allowed[m] = true
	}
	var entered []string
	for p := range after {
		if _, ok := before[p]; !ok && !allowed[p] {
			entered = append(entered, p)
		}
	}
	sort.Strings(entered)
	for _, p := range entered {
		by := ""
		if len(requiredBy[p]) > 0 {
			by = " (required by " + strings.Join(requiredBy[p], ", ") + ")"
		}
		add("%s %s enters the consumer's graph%s; only %s and %v may", p, after[p].Version, by, coreModule, coreRequirements)
	}
	var others []string
	for p := range before {
		if !inTable[p] {
			others = append(others, p)
		}
	}
	sort.Strings(others)
	for _, p := range others {
		b := before[p]
		a, ok := after[p]
		switch {
		case !ok:
			add("%s %s (in sealer's graph through its requirements) is no longer in the consumer's graph", p, b.Version)
		case a.Version != b.Version:
			add("%s: sealer's graph selects %s (through its requirements), the consumer selects %s", p, b.Version, a.Version)
		}
	}
	return diffs
}

// moduleRequirers maps each module of `go mod graph` output to the
// modules (path@version) whose go.mod requires it, the consumer left out.
func moduleRequirers(graph string) map[string][]string {
	by := map[string][]string{}
	for _, line := range strings.Split(graph, "\n") {
		from, to, ok := strings.Cut(strings.TrimSpace(line), " ")
		// The consumer itself (no version) requires whatever go build
		// added; the module that brought each in is the one to name.
		if !ok || !strings.Contains(from, "@") {
			continue
		}
		path, _, _ := strings.Cut(to, "@")
		by[path] = append(by[path], from)
	}
	for p := range by {
		sort.Strings(by[p])
	}
	return by
}

func TestParseSealerTable(t *testing.T) {
	const header = "# sealer's graph\n# Its go line: go 1.17. Columns: ...\n"
	g, err := parseSealerTable("t.tsv", []byte(header+
		"k8s.io/api\tv0.24.2\tdirect\n"+
		"github.com/google/gnostic\tv0.5.7-v3refs\tindirect\n"+
		"k8s.io/api\tv0.24.2\treplaced by k8s.io/api\n"+
		"github.com/labring/lvscare\tv1.1.3-beta.2\treplaced by github.com/fanux/lvscare\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "module example.com/sealer-consumer\n\ngo 1.17\n" +
		"\nrequire (\n\tk8s.io/api v0.24.2\n)\n" +
		"\nrequire (\n\tgithub.com/google/gnostic v0.5.7-v3refs // indirect\n)\n" +
		"\nreplace (\n\tk8s.io/api => k8s.io/api v0.24.2\n\tgithub.com/labring/lvscare => github.com/fanux/lvscare v1.1.3-beta.2\n)\n"
	if got := string(g.goMod()); got != want {
		t.Errorf("go.mod:\n%s\nwant:\n%s", got, want)
	}

	for _, tc := range []struct{ name, table, want string }{
		{"no go line", "# header\nk8s.io/api\tv0.24.2\tdirect\n", "t.tsv: no go line"},
		{"two fields", header + "k8s.io/api\tv0.24.2\n", "t.tsv:3: want module<TAB>version<TAB>how"},
		{"unknown how", header + "k8s.io/api\tv0.24.2\tpinned\n", `t.tsv:3: k8s.io/api: how "pinned"`},
		{"required twice", header + "k8s.io/api\tv0.24.2\tdirect\nk8s.io/api\tv0.24.3\tindirect\n", "t.tsv:4: k8s.io/api is required twice"},
		{"replaced twice", header + "a.io/x\tv1.0.0\tdirect\na.io/x\tv1.0.0\treplaced by b.io/x\na.io/x\tv1.0.1\treplaced by b.io/x\n", "t.tsv:5: a.io/x is replaced twice"},
		{"replaced by nothing", header + "a.io/x\tv1.0.0\treplaced by \n", `t.tsv:3: want "replaced by <module>"`},
		{"no requirement", header, "t.tsv: no requirement"},
	} {
		if _, err := parseSealerTable("t.tsv", []byte(tc.table)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestCompareGraphs(t *testing.T) {
	g := sealerGraph{
		goLine: "1.17",
		requires: []requirement{
			{Path: "k8s.io/client-go", Version: "v0.24.2"},
			{Path: "sigs.k8s.io/kustomize/kyaml", Version: "v0.13.6", Indirect: true},
			{Path: "gopkg.in/yaml.v3", Version: "v3.0.1", Indirect: true},
		},
		replaces: []replacement{
			{Old: "k8s.io/client-go", New: "k8s.io/client-go", Version: "v0.24.2"},
			{Old: "k8s.io/sample-controller", New: "k8s.io/sample-controller", Version: "v0.21.0"},
		},
	}
	mod := func(path, version string, replace ...string) module {
		m := module{Path: path, Version: version}
		if len(replace) == 2 {
			m.Replace = &module{Path: replace[0], Version: replace[1]}
		}
		return m
	}
	graph := func(mods ...module) map[string]module {
		byPath := map[string]module{}
		for _, m := range mods {
			byPath[m.Path] = m
		}
		return byPath
	}
	before := graph(
		mod("k8s.io/client-go", "v0.24.2", "k8s.io/client-go", "v0.24.2"),
		mod("sigs.k8s.io/kustomize/kyaml", "v0.13.6"),
		mod("gopkg.in/yaml.v3", "v3.0.1"),
		mod("github.com/google/gnostic", "v0.5.7-v3refs"),
	)
	core := mod(coreModule, corePseudoVersion, "/src/rehost", "")
	unchanged := graph(
		mod("k8s.io/client-go", "v0.24.2", "k8s.io/client-go", "v0.24.2"),
		mod("sigs.k8s.io/kustomize/kyaml", "v0.13.6"),
		mod("gopkg.in/yaml.v3", "v3.0.1"),
		mod("github.com/google/gnostic", "v0.5.7-v3refs"),
		core,
		mod("go.yaml.in/yaml/v3", "v3.0.6"),
	)
	if d := compareGraphs(g, before, unchanged, nil); len(d) != 0 {
		t.Errorf("the core and its YAML parser added: differences %q, want none", d)
	}

	forced := graph(
		mod("k8s.io/client-go", "v0.24.2", "k8s.io/client-go", "v0.33.0"),
		mod("sigs.k8s.io/kustomize/kyaml", "v0.21.2"),
		mod("github.com/google/gnostic", "v0.5.7-v3refs"),
		core,
		mod("go.yaml.in/yaml/v3", "v3.0.6"),
		mod("github.com/google/gnostic-models", "v0.7.1"),
		mod("github.com/google/go-containerregistry", "v0.22.1"),
	)
	got := compareGraphs(g, before, forced, map[string][]string{
		"github.com/google/gnostic-models": {"k8s.io/kube-openapi@v0.0.0-2025"},
	})
	want := []string{
		"sigs.k8s.io/kustomize/kyaml: sealer requires indirectly v0.13.6, the consumer selects v0.21.2",
		"gopkg.in/yaml.v3: sealer requires indirectly v3.0.1, the consumer's graph no longer holds it",
		"k8s.io/client-go: sealer replaces it by k8s.io/client-go v0.24.2, the consumer by k8s.io/client-go v0.33.0",
		"github.com/google/go-containerregistry v0.22.1 enters the consumer's graph; only github.com/rehost/rehost and [go.yaml.in/yaml/v3] may",
		"github.com/google/gnostic-models v0.7.1 enters the consumer's graph (required by k8s.io/kube-openapi@v0.0.0-2025); only github.com/rehost/rehost and [go.yaml.in/yaml/v3] may",
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A graph that does not select the table's version: the table is
	// out of date, which is not the core's doing; said as such.
	stale := graph(mod("k8s.io/client-go", "v0.24.3", "k8s.io/client-go", "v0.24.2"), mod("sigs.k8s.io/kustomize/kyaml", "v0.13.6"), mod("gopkg.in/yaml.v3", "v3.0.1"))
	got = compareGraphs(g, stale, stale, nil)
	if len(got) != 2 || !strings.Contains(got[0], "the table is not sealer's graph") {
		t.Errorf("a stale table: differences %q, want the table named stale and the version differing", got)
	}
}

func TestModuleRequirers(t *testing.T) {
	by := moduleRequirers("example.com/c k8s.io/api@v0.24.2\nk8s.io/client-go@v0.24.2 k8s.io/api@v0.24.2\nk8s.io/apiserver@v0.24.2 k8s.io/api@v0.24.2\nexample.com/c k8s.io/client-go@v0.24.2\n")
	if got := strings.Join(by["k8s.io/api"], " "); got != "k8s.io/apiserver@v0.24.2 k8s.io/client-go@v0.24.2" {
		t.Errorf("k8s.io/api required by %q", got)
	}
}

func TestGoLineAtMost(t *testing.T) {
	for v, want := range map[string]bool{
		"1.17": true, "1.22": true, "1.22.0": true, "1.21.13": true,
		"1.22.1": false, "1.23": false, "1.26.0": false, "2.0": false, "1.22rc1": false, "": false,
	} {
		if got := goLineAtMost(v, 1, 22); got != want {
			t.Errorf("goLineAtMost(%q, 1, 22) = %v, want %v", v, got, want)
		}
	}
}
