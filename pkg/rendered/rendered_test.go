package rendered

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

func sample() *Chart {
	return &Chart{
		Format: Format,
		Name:   "app",
		Manifests: []Manifest{
			{Name: "app/crds/crd.yaml", Content: "kind: CustomResourceDefinition\nmetadata: {name: a.b}\n"},
			{Name: "app/templates/all.yaml", Content: "kind: ConfigMap\nmetadata: {name: c}"},
			{Name: "app/templates/deploy.yaml", Content: "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: nginx}]"},
			{Name: "app/templates/all.yaml", Content: "kind: Pod\nmetadata: {name: q}\nspec:\n  containers: [{name: c, image: \"redis:7\"}]"},
			{Name: "app/templates/job.yaml", Content: "kind: Job\nspec:\n  template:\n    spec:\n      containers: [{name: j, image: busybox}]", Hook: []string{"pre-install"}},
		},
		Images: []AnnotatedImage{{Chart: "app/charts/sub", Index: 1, Name: "op", Image: "quay.io/op/op:1"}},
	}
}

func TestText(t *testing.T) {
	m := Manifest{Name: "c/templates/x.yaml", Content: "kind: A"}
	if got, want := m.Text(), "---\n# Source: c/templates/x.yaml\nkind: A\n"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestDocuments(t *testing.T) {
	tests := []struct {
		name  string
		chart *Chart
		want  string
	}{
		{"empty", &Chart{}, ""},
		{
			// helm template trims the end of the release manifest only: the
			// CRD's trailing newline stays when documents follow it.
			"trailing space of the last ordinary document only",
			&Chart{Manifests: []Manifest{
				{Name: "a/crds/c.yaml", Content: "kind: C\n\n"},
				{Name: "a/templates/t.yaml", Content: "kind: T \n"},
				{Name: "a/templates/h.yaml", Content: "kind: H\n", Hook: []string{"test"}},
			}},
			"---\n# Source: a/crds/c.yaml\nkind: C\n\n\n---\n# Source: a/templates/t.yaml\nkind: T\n---\n# Source: a/templates/h.yaml\nkind: H\n\n",
		},
		{
			"only hooks",
			&Chart{Manifests: []Manifest{{Name: "a/templates/h.yaml", Content: "kind: H ", Hook: []string{"test"}}}},
			"---\n# Source: a/templates/h.yaml\nkind: H \n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(tt.chart.Documents(), "")
			if got != tt.want {
				t.Errorf("Documents():\n%q\nwant:\n%q", got, tt.want)
			}
			var b bytes.Buffer
			n, err := tt.chart.WriteTo(&b)
			if err != nil || b.String() != tt.want || n != int64(len(tt.want)) {
				t.Errorf("WriteTo() = %d, %v, %q; want %q", n, err, b.String(), tt.want)
			}
		})
	}
}

func TestTemplates(t *testing.T) {
	c := sample()
	var names []string
	for _, tp := range c.Templates() {
		names = append(names, tp.Name)
	}
	want := []string{"app/crds/crd.yaml", "app/templates/all.yaml", "app/templates/deploy.yaml", "app/templates/job.yaml"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("template names %q, want %q", names, want)
	}
	all := c.Templates()[1]
	if wantText := c.Manifests[1].Text() + c.Manifests[3].Text(); all.Text != wantText {
		t.Errorf("app/templates/all.yaml text:\n%s\nwant:\n%s", all.Text, wantText)
	}
}

func TestLocation(t *testing.T) {
	got := AnnotatedImage{Chart: "app/charts/sub", Index: 2, Name: "op", Image: "x"}.Location()
	want := rewrite.Location{File: "app/charts/sub/Chart.yaml", Name: "op", Field: "annotations[helm.sh/images][2].image", Origin: "annotation"}
	if got != want {
		t.Errorf("Location() = %+v, want %+v", got, want)
	}
}

func TestRewrite(t *testing.T) {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		t.Fatal(err)
	}
	c := sample()
	var out bytes.Buffer
	if err := c.Rewrite(&out, rw); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(c.Documents(), "")
	for _, r := range [][2]string{
		{"image: nginx}", "image: sea.hub:5000/library/nginx}"},
		{`image: "redis:7"`, `image: "sea.hub:5000/library/redis:7"`},
		{"image: busybox}", "image: sea.hub:5000/library/busybox}"},
	} {
		if !strings.Contains(want, r[0]) {
			t.Fatalf("sample lacks %q", r[0])
		}
		want = strings.Replace(want, r[0], r[1], 1)
	}
	if out.String() != want {
		t.Errorf("Rewrite():\n%s\nwant:\n%s", out.String(), want)
	}
	got := map[string]rewrite.Location{}
	for _, img := range rw.Images() {
		got[img.Source] = img.Occurrences[0]
	}
	wantImages := map[string]string{
		"docker.io/library/nginx:latest":   "app/templates/deploy.yaml",
		"docker.io/library/redis:7":        "app/templates/all.yaml",
		"docker.io/library/busybox:latest": "app/templates/job.yaml",
		"quay.io/op/op:1":                  "app/charts/sub/Chart.yaml",
	}
	if len(got) != len(wantImages) {
		t.Errorf("images %v, want %v", got, wantImages)
	}
	for src, file := range wantImages {
		if got[src].File != file {
			t.Errorf("%s found in %q, want %q", src, got[src].File, file)
		}
	}
	if o := got["quay.io/op/op:1"]; o.Origin != OriginAnnotation || o.Value != "quay.io/op/op:1" {
		t.Errorf("annotation image location %+v, want origin %q", o, OriginAnnotation)
	}
}

func TestRewriteErrorsNameTheTemplate(t *testing.T) {
	rw, err := manifest.New(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		t.Fatal(err)
	}
	c := &Chart{Manifests: []Manifest{{Name: "app/templates/bad.yaml", Content: "kind: Pod\nspec:\n  containers: [{name: c, image: NGINX}]"}}}
	err = c.Rewrite(nil, rw)
	var me *manifest.Error
	// Line 3 of the template's output: Helm's "---" and "# Source:" lines
	// are not the template's.
	if !errors.As(err, &me) || me.Location.File != "app/templates/bad.yaml" || me.Location.Line != 3 {
		t.Errorf("error %v, want a *manifest.Error at app/templates/bad.yaml:3", err)
	}
	c = &Chart{Manifests: []Manifest{{Name: "app/templates/bad.yaml", Line: 12, Content: "kind: Pod\nspec:\n  containers: [{name: c, image: NGINX}]"}}}
	err = c.Rewrite(nil, rw)
	if !errors.As(err, &me) || me.Location.Line != 14 {
		t.Errorf("error %v, want a *manifest.Error at app/templates/bad.yaml:14 (the document starts at line 12)", err)
	}

	c = &Chart{Images: []AnnotatedImage{{Chart: "app", Image: "Bad Image"}}}
	err = c.Rewrite(nil, rw)
	if !errors.As(err, &me) || me.Location.File != "app/Chart.yaml" || me.Location.Origin != OriginAnnotation {
		t.Errorf("error %v, want a *manifest.Error at app/Chart.yaml", err)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	c := sample()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Chart
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, c) {
		t.Errorf("JSON round trip:\n%+v\nwant:\n%+v", back, *c)
	}
}

// TestLeaveOutDrafted: a chart written after its draft leaves out the
// contents the draft holds (same name, line and content), and Undraft
// puts them back: the round trip through JSON gives the chart whole. A
// document the draft does not hold as it is (a CRD, one of a random
// function, one of unknown line) keeps its content.
func TestLeaveOutDrafted(t *testing.T) {
	c := sample()
	c.Manifests[1].Line = 1
	c.Manifests[2].Line = 1
	c.Manifests[3].Line = 4
	c.Manifests[4].Line = 1
	d := &Draft{Format: Format, Manifests: []Manifest{
		{Name: "app/templates/all.yaml", Content: c.Manifests[1].Content, Line: 1},
		{Name: "app/templates/all.yaml", Content: c.Manifests[3].Content, Line: 4},
		{Name: "app/templates/deploy.yaml", Content: "kind: Pod # rendered again, differently", Line: 1},
		{Name: "app/templates/job.yaml", Content: c.Manifests[4].Content, Line: 1},
	}}
	want := sample()
	for i, l := range []int{0, 1, 1, 4, 1} {
		want.Manifests[i].Line = l
	}
	c.LeaveOutDrafted(d)
	for i, drafted := range []int{0, 1, 0, 2, 4} {
		m := c.Manifests[i]
		if m.Drafted != drafted || (drafted > 0) != (m.Content == "" && m.Name == "") {
			t.Errorf("manifest %d: drafted %d with %q, want drafted %d", i, m.Drafted, m.Content, drafted)
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("redis:7")) || bytes.Count(data, []byte("app/templates/all.yaml")) != 0 {
		t.Errorf("a drafted content written again: %s", data)
	}
	var back Chart
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Undraft(d); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, want) {
		t.Errorf("after Undraft:\n%+v\nwant:\n%+v", back, *want)
	}
	// Nothing to put back: no draft needed.
	if err := want.Undraft(nil); err != nil {
		t.Errorf("a chart without drafted contents: %v", err)
	}
}

// TestUndraftRefusesWhatTheDraftDoesNotHold: a reference to a draft that
// was not read, beyond it, to another document, or with a content of its
// own is an error.
func TestUndraftRefusesWhatTheDraftDoesNotHold(t *testing.T) {
	d := &Draft{Format: Format, Manifests: []Manifest{{Name: "app/templates/a.yaml", Content: "kind: Pod", Line: 3}}}
	for _, tt := range []struct {
		name string
		d    *Draft
		m    Manifest
	}{
		{"no draft", nil, Manifest{Name: "app/templates/a.yaml", Line: 3, Drafted: 1}},
		{"beyond it", d, Manifest{Name: "app/templates/a.yaml", Line: 3, Drafted: 2}},
		{"negative", d, Manifest{Name: "app/templates/a.yaml", Line: 3, Drafted: -1}},
		{"another name", d, Manifest{Name: "app/templates/b.yaml", Line: 3, Drafted: 1}},
		{"another line", d, Manifest{Name: "app/templates/a.yaml", Line: 4, Drafted: 1}},
		{"a content too", d, Manifest{Name: "app/templates/a.yaml", Line: 3, Content: "kind: Job", Drafted: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Chart{Format: Format, Name: "app", Manifests: []Manifest{tt.m}}
			if err := c.Undraft(tt.d); err == nil || !strings.Contains(err.Error(), "draft") {
				t.Errorf("got %v", err)
			}
		})
	}
}
