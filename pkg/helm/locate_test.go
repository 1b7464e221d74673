package helm

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"math/rand"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// TestTemplateLines: errors and occurrences name the template file and the
// line of the value in that template's output, for every document of a
// multi-document template, however Helm sorts them.
func TestTemplateLines(t *testing.T) {
	c := mustRender(t, "multidoc", Options{Values: values.Options{Values: []string{"image=nginx:1.25"}}})
	rw, err := manifest.New(defaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(nil, rw); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, img := range rw.Images() {
		for _, o := range img.Occurrences {
			if o.File != "multidoc/templates/app.yaml" {
				t.Errorf("%s: file %q", img.Source, o.File)
			}
			got[img.Source] = o.Line
		}
	}
	// The template's output: its "{{- if }}" line joins the comment above.
	want := map[string]int{"registry.k8s.io/pause:3.9": 12, "docker.io/library/nginx:1.25": 27}
	for src, line := range want {
		if got[src] != line {
			t.Errorf("%s at line %d, want %d (all: %v)", src, got[src], line, got)
		}
	}

	// The invalid image of the chart's default values, in the third
	// document: the error names its line.
	c = mustRender(t, "multidoc", Options{})
	rw, _ = manifest.New(defaultConfig)
	err = c.Rewrite(nil, rw)
	var e *manifest.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *manifest.Error", err)
	}
	if e.Location.File != "multidoc/templates/app.yaml" || e.Location.Line != 27 || e.Location.Field != "spec.containers[0].image" {
		t.Errorf("error at %s, want multidoc/templates/app.yaml:27: ...: spec.containers[0].image", e.Location)
	}
	var inv *rewrite.InvalidReferenceError
	if !errors.As(err, &inv) || inv.Value != "Nginx:1.25" {
		t.Errorf("error %v does not wrap the invalid reference", err)
	}
}

// TestHelmWarnings: Helm's warnings, which it prints with the global
// logger (three times for one chart), reach the Rewriter's warning
// function once each, prefixed with the chart; nothing reaches the logger's
// output, and the logger is as it was after the render.
func TestHelmWarnings(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	log.SetFlags(log.Lshortfile)
	log.SetPrefix("app: ")
	defer func() {
		log.SetOutput(os.Stderr)
		log.SetFlags(log.LstdFlags)
		log.SetPrefix("")
	}()

	var warns []string
	rw, err := manifest.New(defaultConfig, manifest.WithWarnings(func(err error) { warns = append(warns, err.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	err = Images(rw, chartPath("warnings"), Options{Values: values.Options{Values: []string{"resources.limits=big"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "warnings: ") || !strings.Contains(warns[0], "resources") {
		t.Errorf("warnings = %q, want one about resources, prefixed with the chart", warns)
	}
	if logged.Len() > 0 {
		t.Errorf("Helm wrote to the global logger: %q", logged.String())
	}
	if log.Writer() != &logged || log.Flags() != log.Lshortfile || log.Prefix() != "app: " {
		t.Errorf("the global logger was left changed")
	}
	log.Print("after")
	if logged.String() == "" {
		t.Errorf("the global logger no longer writes to its output")
	}
}

// searchLines is how locate found documents before it split the outputs:
// the first occurrence of each document's content in its template's output
// that no document before it took, its line counted from the start. It
// took time quadratic in the number of documents of a template.
func searchLines(ms []rendered.Manifest, files map[string]string) {
	used := map[string][]int{}
	for i := range ms {
		m := &ms[i]
		out, ok := files[m.Name]
		if !ok || m.Content == "" {
			continue
		}
		for from := 0; from <= len(out); {
			j := strings.Index(out[from:], m.Content)
			if j < 0 {
				break
			}
			off, taken := from+j, false
			for _, u := range used[m.Name] {
				taken = taken || u == off
			}
			if !taken {
				used[m.Name] = append(used[m.Name], off)
				m.Line = 1 + strings.Count(out[:off], "\n")
				break
			}
			from = off + 1
		}
	}
}

// TestLinesAsSearch: the lines found by splitting each template's output
// are those the search found, on outputs shaped as templates render them
// (separators with and without blank lines and trailing spaces, leading
// comments, a document rendered twice, empty documents, documents that
// differ only in their last line), whatever order Helm sorts them in; and
// a document that is the start of another is found at its own place, where
// the search could take the other's.
func TestLinesAsSearch(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	seps := []string{"\n---\n", "\n---\n\n", "\n\n---\n", "\n--- \n", "\n---\n# a comment\n", "\n---\n---\n"}
	for round := 0; round < 300; round++ {
		files := map[string]string{}
		for f := 0; f < 3; f++ {
			name := fmt.Sprintf("app/templates/t%d.yaml", f)
			var b strings.Builder
			if rng.Intn(3) == 0 {
				b.WriteString("\n# leading comment\n---\n")
			}
			n := 1 + rng.Intn(12)
			for i := 0; i < n; i++ {
				sep := ""
				if i > 0 {
					sep = seps[rng.Intn(len(seps))]
					b.WriteString(sep)
				}
				// Few names: the same document twice is common. A
				// document after a comment, or after "---" twice (Helm
				// cuts at the first only), starts with the comment or the
				// second "---": it is named apart, lest the search find
				// the others inside it.
				name := fmt.Sprintf("cm-%d", rng.Intn(4))
				if strings.Contains(sep, "#") || strings.Count(sep, "---") > 1 {
					name = fmt.Sprintf("commented-%d-%d", f, i)
				}
				fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: \"%d\"", name, rng.Intn(2))
			}
			if rng.Intn(2) == 0 {
				b.WriteString("\n---\n")
			}
			files[name] = b.String()
		}
		// The manifests as Helm's release holds them: split, trimmed,
		// then in some other order.
		var ms []rendered.Manifest
		for name, out := range files {
			split := releaseutil.SplitManifests(out)
			for i := 0; i < len(split); i++ {
				ms = append(ms, rendered.Manifest{Name: name, Content: split[fmt.Sprintf("manifest-%d", i)]})
			}
		}
		rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		got := append([]rendered.Manifest(nil), ms...)
		want := append([]rendered.Manifest(nil), ms...)
		setLines(got, files, nil)
		searchLines(want, files)
		for i := range got {
			if got[i].Line != want[i].Line || got[i].Line == 0 {
				t.Fatalf("round %d: %s document %q at line %d, the search says %d:\n%s", round, got[i].Name, got[i].Content, got[i].Line, want[i].Line, files[got[i].Name])
			}
		}
	}

	// Where the search went wrong: a document that is the start of
	// another before it, or the end of one that starts with a comment.
	for _, tt := range []struct {
		out  string
		ms   []rendered.Manifest
		want []int
	}{
		{
			"kind: Pod\nmetadata: {name: a}\nspec: {}\n---\nkind: Pod\nmetadata: {name: a}\n",
			[]rendered.Manifest{{Name: "t", Content: "kind: Pod\nmetadata: {name: a}"}, {Name: "t", Content: "kind: Pod\nmetadata: {name: a}\nspec: {}"}},
			[]int{5, 1},
		},
		{
			"# the web server\nkind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: a}\n",
			[]rendered.Manifest{{Name: "t", Content: "kind: Pod\nmetadata: {name: a}"}, {Name: "t", Content: "# the web server\nkind: Pod\nmetadata: {name: a}"}},
			[]int{5, 1},
		},
	} {
		setLines(tt.ms, map[string]string{"t": tt.out}, nil)
		if tt.ms[0].Line != tt.want[0] || tt.ms[1].Line != tt.want[1] {
			t.Errorf("lines %d and %d, want %d and %d:\n%s", tt.ms[0].Line, tt.ms[1].Line, tt.want[0], tt.want[1], tt.out)
		}
	}
}

// TestSeparatorsAsHelm: separators finds what Helm's regular expression
// finds (releaseutil.SplitManifests), on random strings of dashes, white
// space of every kind and letters.
func TestSeparatorsAsHelm(t *testing.T) {
	helmSep := regexp.MustCompile("(?:^|\\s*\n)---\\s*")
	rng := rand.New(rand.NewSource(6))
	alphabet := []string{"-", "-", "-", "---", "\n", "\n", " ", "\t", "\r", "\f", "\v", "a", "\u00a0"}
	for i := 0; i < 100000; i++ {
		var b strings.Builder
		for n := rng.Intn(24); n > 0; n-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := b.String()
		for _, in := range []string{s, strings.TrimSpace(s)} {
			var got [][]int
			for _, m := range separators(in) {
				got = append(got, []int{m[0], m[1]})
			}
			if want := helmSep.FindAllStringIndex(in, -1); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: separators %v, Helm's expression %v", in, got, want)
			}
		}
	}
}

// TestDraft: Options.Draft receives, before the chart is sorted, the
// documents of its templates and its CRD files, each with its name and
// line as the chart gives them (but for a document of a random function),
// and changes nothing of the chart rendered: documents, lines, hooks,
// images, warnings, errors. Without CRDs, the draft has none.
func TestDraft(t *testing.T) {
	for _, chart := range []string{"parent", "hooks", "multidoc", "withcrd", "annotations", "warnings", "airgap-random", "airgap-kube-prometheus", "tplerror"} {
		t.Run(chart, func(t *testing.T) {
			want, wantErr := Render(chartPath(chart), Options{})
			var d *rendered.Draft
			got, err := Render(chartPath(chart), Options{Draft: func(x *rendered.Draft) {
				if d != nil {
					t.Error("Draft called twice")
				}
				d = x
			}})
			// A random function renders differently each time.
			random := chart == "airgap-random"
			if (!random && !reflect.DeepEqual(got, want)) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("with Draft: %+v, %v\nwant %+v, %v", got, err, want, wantErr)
			}
			if err != nil {
				if d != nil && chart == "tplerror" {
					t.Errorf("a draft of a chart that does not render: %+v", d)
				}
				return
			}
			if d == nil || d.Format != rendered.Format {
				t.Fatalf("draft %+v", d)
			}
			type key struct {
				name, content string
				line          int
			}
			drafted := map[key]bool{}
			for _, m := range d.Manifests {
				if m.Line < 1 || m.IsHook() || strings.HasSuffix(m.Name, "NOTES.txt") {
					t.Errorf("draft manifest %+v", m)
				}
				drafted[key{m.Name, m.Content, m.Line}] = true
			}
			found := 0
			for _, m := range got.Manifests {
				if m.Line == 0 {
					continue
				}
				if !drafted[key{m.Name, m.Content, m.Line}] {
					t.Errorf("%s line %d not in the draft:\n%s", m.Name, m.Line, m.Content)
				}
				found++
			}
			if found == 0 && !random {
				t.Errorf("no document of the chart in its draft")
			}
		})
	}
}

// TestDraftCRDs: the CRD files of a chart that includes them come first
// in its draft, as the chart holds them; without them, none.
func TestDraftCRDs(t *testing.T) {
	for _, skip := range []bool{false, true} {
		var d *rendered.Draft
		got, err := Render(chartPath("withcrd"), Options{SkipCRDs: skip, Draft: func(x *rendered.Draft) { d = x }})
		if err != nil || d == nil {
			t.Fatalf("SkipCRDs %t: %v, draft %v", skip, err, d)
		}
		var crds []rendered.Manifest
		for _, m := range got.Manifests {
			if strings.Contains(m.Name, "/crds/") {
				crds = append(crds, m)
			}
		}
		if skip != (len(crds) == 0) || len(d.Manifests) < len(crds) {
			t.Fatalf("SkipCRDs %t: %d CRDs in the chart, %d documents drafted", skip, len(crds), len(d.Manifests))
		}
		for i, m := range crds {
			if dm := d.Manifests[i]; dm.Name != m.Name || dm.Content != m.Content || dm.Line != 1 || m.Line != 1 {
				t.Errorf("SkipCRDs %t: CRD %d drafted as %+v, the chart has %+v", skip, i, dm, m)
			}
		}
		for _, m := range d.Manifests[len(crds):] {
			if strings.Contains(m.Name, "/crds/") {
				t.Errorf("SkipCRDs %t: %s drafted", skip, m.Name)
			}
		}
	}
}

// TestDraftWaitedFor: a chart whose templates render but whose documents
// Helm cannot sort fails after its draft: Render returns once the draft's
// callback has returned, so that nothing is written after the failure. A
// panic of the callback is Render's.
func TestDraftWaitedFor(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"templates/bad.yaml": "kind: ConfigMap\ndata: [\n",
	})
	var returned atomic.Bool
	_, err := Render(dir, Options{Draft: func(*rendered.Draft) {
		time.Sleep(50 * time.Millisecond)
		returned.Store(true)
	}})
	if err == nil || !returned.Load() {
		t.Errorf("Render: %v, the draft's callback returned before: %t", err, returned.Load())
	}

	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the callback's panic", r)
		}
	}()
	Render(chartPath("multidoc"), Options{Draft: func(*rendered.Draft) { panic("boom") }})
	t.Error("Render returned after its callback panicked")
}
