package rendered

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseImageAnnotations: the three keys, in their order, each entry
// located at its key and index, Artifact Hub's extra keys read.
func TestParseImageAnnotations(t *testing.T) {
	got, err := ParseImageAnnotations("web/charts/db", map[string]string{
		AnnotationKeyArtifactHub: "- name: exporter\n  image: redis-exporter:1\n  whitelisted: true\n  platforms: [linux/amd64, linux/arm64]\n" +
			"- name: sentinel\n  image: redis-sentinel:1\n  whitelisted: \"false\"\n  platforms: linux/amd64\n",
		AnnotationKeyImages: "- name: kubectl\n  image: kubectl:1\n  extra: ignored\n",
		AnnotationKey:       "- name: op\n  image: quay.io/op:1\n  condition: op.enabled,global.op\n",
		"other":             "- name: x\n  image: not-read:1\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []AnnotatedImage{
		{Chart: "web/charts/db", Key: AnnotationKey, Index: 0, Name: "op", Image: "quay.io/op:1", Condition: "op.enabled,global.op"},
		{Chart: "web/charts/db", Key: AnnotationKeyImages, Index: 0, Name: "kubectl", Image: "kubectl:1"},
		{Chart: "web/charts/db", Key: AnnotationKeyArtifactHub, Index: 0, Name: "exporter", Image: "redis-exporter:1", Whitelisted: true, Platforms: []string{"linux/amd64", "linux/arm64"}},
		{Chart: "web/charts/db", Key: AnnotationKeyArtifactHub, Index: 1, Name: "sentinel", Image: "redis-sentinel:1", Platforms: []string{"linux/amd64"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if f := got[2].Location(); f.File != "web/charts/db/Chart.yaml" || f.Field != "annotations[artifacthub.io/images][0].image" || f.Origin != OriginAnnotation {
		t.Errorf("location %+v", f)
	}
	if none, err := ParseImageAnnotations("web", map[string]string{AnnotationKey: "  \n"}); err != nil || none != nil {
		t.Errorf("a blank annotation: %v, %v", none, err)
	}
}

// TestMalformedImageAnnotations: a malformed annotation, of any of the
// three keys, is an error naming the chart's Chart.yaml and the key.
func TestMalformedImageAnnotations(t *testing.T) {
	for _, key := range ImageAnnotationKeys() {
		for name, value := range map[string]string{
			"not a list":          "{image: x}",
			"not YAML":            "- image: [",
			"no image":            "- name: x",
			"image not a string":  "- image: {a: b}",
			"entry not a map":     "- nginx:1.25",
			"whitelisted invalid": "- image: x\n  whitelisted: maybe",
			"platforms invalid":   "- image: x\n  platforms: {os: linux}",
		} {
			t.Run(key+" "+name, func(t *testing.T) {
				_, err := ParseImageAnnotations("web/charts/db", map[string]string{key: value})
				if err == nil || !strings.HasPrefix(err.Error(), "web/charts/db/Chart.yaml: annotation "+key+": ") {
					t.Errorf("err = %v, want an error naming web/charts/db/Chart.yaml and the annotation %s", err, key)
				}
			})
		}
	}
}

type values map[string]interface{} // as Helm's chartutil.Values

func TestConditionHolds(t *testing.T) {
	vals := map[string]interface{}{
		"debug":  map[string]interface{}{"enabled": true, "off": false, "text": "yes"},
		"nested": values{"a": values{"on": false}},
		"flag":   false,
	}
	for cond, want := range map[string]bool{
		"":                         true,
		"debug.enabled":            true,
		"debug.off":                false,
		"flag":                     false,
		"missing":                  true,
		"debug.text":               true, // not a boolean: undecided
		"debug":                    true, // a table: undecided
		"missing, debug.off":       false,
		"debug.enabled,debug.off":  true,
		" , nested.a.on":           false,
		"nested.a.on.deeper":       true,
		"debug.enabled.x, flag":    false,
		"nested.missing.x,flag":    false,
		"nested.a,nested.a.on,foo": false,
	} {
		if got := ConditionHolds(vals, cond); got != want {
			t.Errorf("ConditionHolds(%q) = %v, want %v", cond, got, want)
		}
	}
	if !ConditionHolds(nil, "a.b") {
		t.Error("no values: the condition holds")
	}
}

// TestAnnotatedImagesConditions: with Values, an entry whose condition
// does not hold is left out, a subchart's conditions read the values under
// its name; without, every entry is listed.
func TestAnnotatedImagesConditions(t *testing.T) {
	m := Metadata{
		Name:        "web",
		Annotations: map[string]string{AnnotationKey: "- image: a:1\n  condition: a.on\n- image: b:1\n  condition: b.on\n"},
		Subcharts: []Metadata{{
			Name:        "db",
			Annotations: map[string]string{AnnotationKey: "- image: c:1\n  condition: c.on\n- image: d:1\n  condition: d.on\n"},
			Subcharts:   []Metadata{{Name: "x", Annotations: map[string]string{AnnotationKeyImages: "- image: e:1\n  condition: e.on\n"}}},
		}},
	}
	images := func(m Metadata) []string {
		imgs, err := m.AnnotatedImages()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range imgs {
			out = append(out, a.Chart+" "+a.Image)
		}
		return out
	}
	all := []string{"web a:1", "web b:1", "web/charts/db c:1", "web/charts/db d:1", "web/charts/db/charts/x e:1"}
	if got := images(m); !reflect.DeepEqual(got, all) {
		t.Errorf("without values: %q, want %q", got, all)
	}
	m.Values = values{
		"a":  values{"on": false},
		"b":  values{"on": true},
		"c":  values{"on": false}, // the parent's c: not the subchart's
		"db": values{"d": values{"on": false}, "x": map[string]interface{}{"e": map[string]interface{}{"on": false}}},
	}
	want := []string{"web b:1", "web/charts/db c:1"}
	if got := images(m); !reflect.DeepEqual(got, want) {
		t.Errorf("with values: %q, want %q", got, want)
	}
}

func TestParseMetadata(t *testing.T) {
	m, err := ParseMetadata([]byte("apiVersion: v2\nname: web\nversion: 1.0\nannotations:\n  helm.sh/images: |\n    - image: nginx\n  category: web\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Metadata{Name: "web", Version: "1.0", Annotations: map[string]string{AnnotationKey: "- image: nginx\n", "category": "web"}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v, want %+v", m, want)
	}
	if _, err := ParseMetadata([]byte("name: web\nannotations:\n  images:\n    - image: nginx\n")); err == nil || !strings.Contains(err.Error(), "line 4: annotation images: want a string, got a list") {
		t.Errorf("an annotation that is not a string: err = %v", err)
	}
	if _, err := ParseMetadata([]byte("name: [")); err == nil {
		t.Error("malformed YAML: no error")
	}
}
