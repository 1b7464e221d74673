package rendered

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"go.yaml.in/yaml/v3"
)

// The Chart.yaml annotations that list a chart's images, all with the same
// entry shape:
//
//	annotations:
//	  helm.sh/images: |
//	    - name: operator
//	      image: ghcr.io/example/operator:v1.2.0
//	    - name: debug
//	      image: busybox:1.36
//	      condition: debug.enabled
const (
	// AnnotationKey is Helm's (HIP-0015); its entries may have a condition.
	AnnotationKey = "helm.sh/images"
	// AnnotationKeyImages is the Bitnami and VMware Tanzu catalogues'.
	AnnotationKeyImages = "images"
	// AnnotationKeyArtifactHub is Artifact Hub's; its entries may say
	// whitelisted and platforms.
	AnnotationKeyArtifactHub = "artifacthub.io/images"
)

// ImageAnnotationKeys returns the three image annotation keys, in the order
// their images are listed.
func ImageAnnotationKeys() []string {
	return []string{AnnotationKey, AnnotationKeyImages, AnnotationKeyArtifactHub}
}

// Metadata is what is known of a chart besides its rendered templates: the
// Chart.yaml fields rehost reads, its subcharts and its values.
type Metadata struct {
	// Name is the chart's name, as Helm names it (a subchart's alias, when
	// its parent gives one).
	Name    string
	Version string
	// Annotations are the Chart.yaml annotations.
	Annotations map[string]string
	// Subcharts are the chart's subcharts; for a rendered chart, those its
	// values enable (with Helm, chart.Dependencies() after the render).
	Subcharts []Metadata
	// Values are the values the chart was rendered with (Helm's .Values:
	// its values coalesced with the user's), for the conditions of image
	// annotation entries; a subchart's are those under its name, and its own
	// Values are not read. Nil: conditions are not evaluated, and every
	// entry is listed.
	Values map[string]interface{}
}

// ParseMetadata reads a Chart.yaml: its name, version and annotations.
func ParseMetadata(chartYAML []byte) (Metadata, error) {
	var f struct {
		Name        string               `yaml:"name"`
		Version     string               `yaml:"version"`
		Annotations map[string]yaml.Node `yaml:"annotations"`
	}
	if err := yaml.Unmarshal(chartYAML, &f); err != nil {
		return Metadata{}, err
	}
	m := Metadata{Name: f.Name, Version: f.Version}
	for k, v := range f.Annotations {
		if v.Kind != yaml.ScalarNode {
			return Metadata{}, fmt.Errorf("line %d: annotation %s: want a string, got a %s", v.Line, k, kindName(v.Kind))
		}
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[k] = v.Value
	}
	return m, nil
}

// AnnotatedImages returns the images that the image annotations of the
// chart and of its subcharts declare: per chart, those of helm.sh/images,
// images and artifacthub.io/images in that order, then the subcharts'.
// With Values, an entry whose condition does not hold is left out. A
// malformed annotation is an error naming the chart's Chart.yaml and the
// key.
func (m Metadata) AnnotatedImages() ([]AnnotatedImage, error) {
	var out []AnnotatedImage
	var walk func(c Metadata, path string, vals map[string]interface{}) error
	walk = func(c Metadata, path string, vals map[string]interface{}) error {
		imgs, err := ParseImageAnnotations(path, c.Annotations)
		if err != nil {
			return err
		}
		for _, a := range imgs {
			if m.Values == nil || ConditionHolds(vals, a.Condition) {
				out = append(out, a)
			}
		}
		for _, s := range c.Subcharts {
			sub, _ := asTable(vals[s.Name])
			if err := walk(s, path+"/charts/"+s.Name, sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m, m.Name, m.Values); err != nil {
		return nil, err
	}
	return out, nil
}

// annotationEntry is one entry of an image annotation. Other keys are
// allowed and ignored.
type annotationEntry struct {
	Name      string    `yaml:"name"`
	Image     string    `yaml:"image"`
	Condition string    `yaml:"condition"`
	Whitelist yaml.Node `yaml:"whitelisted"`
	Platforms yaml.Node `yaml:"platforms"`
}

// ParseImageAnnotations returns the images that the image annotations of
// one chart declare, given its Chart.yaml annotations; chart is its full
// path as Helm names it ("web", "web/charts/db"), for errors and
// locations. Conditions are not evaluated. A malformed annotation (not a
// YAML list of maps, an entry without an image) is an error naming the
// chart's Chart.yaml and the key.
func ParseImageAnnotations(chart string, annotations map[string]string) ([]AnnotatedImage, error) {
	var out []AnnotatedImage
	for _, key := range ImageAnnotationKeys() {
		raw := annotations[key]
		if strings.TrimSpace(raw) == "" {
			continue
		}
		fail := func(format string, args ...interface{}) error {
			return fmt.Errorf("%s/Chart.yaml: annotation %s: %s", chart, key, fmt.Sprintf(format, args...))
		}
		var entries []annotationEntry
		if err := yaml.Unmarshal([]byte(raw), &entries); err != nil {
			return nil, fail("want a list of {name, image} entries: %v", err)
		}
		for i, e := range entries {
			if e.Image == "" {
				return nil, fail("entry %d has no image", i)
			}
			a := AnnotatedImage{Chart: chart, Key: key, Index: i, Name: e.Name, Image: e.Image, Condition: e.Condition}
			var err error
			if a.Whitelisted, err = boolValue(&e.Whitelist); err != nil {
				return nil, fail("entry %d: whitelisted: %v", i, err)
			}
			if a.Platforms, err = stringList(&e.Platforms); err != nil {
				return nil, fail("entry %d: platforms: %v", i, err)
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// boolValue reads a YAML boolean, also quoted ("true"); absent is false.
func boolValue(n *yaml.Node) (bool, error) {
	switch {
	case n.Kind == 0:
		return false, nil
	case n.Kind == yaml.ScalarNode && (n.Value == "true" || n.Value == "false"):
		return n.Value == "true", nil
	}
	return false, fmt.Errorf("want true or false, got %s", describeNode(n))
}

// stringList reads a list of strings, or one string.
func stringList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("want a list of strings, got %s in it", describeNode(c))
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of strings, got %s", describeNode(n))
}

func describeNode(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return bounded.Quote(n.Value)
	}
	return "a " + kindName(n.Kind)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "scalar"
}

// ConditionHolds evaluates the condition of an image annotation entry
// against the values of its chart, as Helm evaluates a dependency's
// condition (chartutil's processDependencyConditions): the condition is a
// comma-separated list of values paths ("debug.enabled"); the first path
// that holds a boolean decides; when none does, or the condition is empty,
// it holds.
func ConditionHolds(values map[string]interface{}, cond string) bool {
	for _, p := range strings.Split(cond, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b, ok := pathValue(values, strings.Split(p, ".")).(bool); ok {
			return b
		}
	}
	return true
}

// pathValue is Helm's Values.PathValue: the value at path, unless it is a
// table; nil when there is none.
func pathValue(v map[string]interface{}, path []string) interface{} {
	for _, k := range path[:len(path)-1] {
		t, ok := asTable(v[k])
		if !ok {
			return nil
		}
		v = t
	}
	last := v[path[len(path)-1]]
	if _, ok := asTable(last); ok {
		return nil
	}
	return last
}

var tableType = reflect.TypeOf(map[string]interface{}(nil))

// asTable returns v as a table of values: a map[string]interface{}, or a
// type defined on it (Helm's chartutil.Values of any version).
func asTable(v interface{}) (map[string]interface{}, bool) {
	if t, ok := v.(map[string]interface{}); ok {
		return t, true
	}
	if v == nil {
		return nil, false
	}
	if rv := reflect.ValueOf(v); rv.Type().ConvertibleTo(tableType) && rv.Kind() == reflect.Map {
		return rv.Convert(tableType).Interface().(map[string]interface{}), true
	}
	return nil, false
}
