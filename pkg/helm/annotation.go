package helm

import (
	"fmt"
	"strings"

	"github.com/rehost/rehost/pkg/rendered"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// annotationKeys are the Chart.yaml annotations that list a chart's
// images, all with the same entry shape: helm.sh/images (Helm HIP-0015),
// images (the Bitnami and VMware Tanzu catalogues) and artifacthub.io/images
// (Artifact Hub, with whitelisted and platforms besides).
var annotationKeys = []string{rendered.AnnotationKey, "images", "artifacthub.io/images"}

// annotationEntry is one entry of an image annotation, helm.sh/images
// (HIP-0015) here:
//
//	annotations:
//	  helm.sh/images: |
//	    - name: operator
//	      image: ghcr.io/example/operator:v1.2.0
//	    - name: debug
//	      image: busybox:1.36
//	      condition: debug.enabled
//
// Other keys (whitelisted, platforms, ...) are allowed and ignored.
type annotationEntry struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	// Condition is a comma-separated list of values paths, relative to the
	// chart's values, with the meaning of a dependency's condition: the
	// first that holds a boolean decides; the image is listed when none
	// does.
	Condition string `yaml:"condition"`
}

// annotatedImages returns the images the helm.sh/images annotations of ch
// and of its subcharts declare. ch has been through Helm's dependency
// processing, so it holds only the subcharts its values enable; vals are the
// user's values, for the entries' conditions.
func annotatedImages(ch *chart.Chart, vals map[string]interface{}) ([]rendered.AnnotatedImage, error) {
	var (
		out     []rendered.AnnotatedImage
		coalesc chartutil.Values // the values of every chart, computed on first need
	)
	var walk func(c *chart.Chart, path []string) error
	walk = func(c *chart.Chart, path []string) error {
		for _, key := range annotationKeys {
			raw := c.Metadata.Annotations[key]
			if strings.TrimSpace(raw) == "" {
				continue
			}
			var entries []annotationEntry
			if err := yaml.Unmarshal([]byte(raw), &entries); err != nil {
				return fmt.Errorf("%s/Chart.yaml: annotation %s: want a list of {name, image} entries: %w", c.ChartFullPath(), key, err)
			}
			for i, e := range entries {
				if e.Image == "" {
					return fmt.Errorf("%s/Chart.yaml: annotation %s: entry %d has no image", c.ChartFullPath(), key, i)
				}
				if e.Condition != "" {
					if coalesc == nil {
						var err error
						if coalesc, err = chartutil.CoalesceValues(ch, vals); err != nil {
							return err
						}
					}
					if !conditionHolds(scope(coalesc, path), e.Condition) {
						continue
					}
				}
				out = append(out, rendered.AnnotatedImage{Chart: c.ChartFullPath(), Key: key, Index: i, Name: e.Name, Image: e.Image})
			}
		}
		for _, d := range c.Dependencies() {
			if err := walk(d, append(path[:len(path):len(path)], d.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(ch, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// scope returns the values a subchart sees: those under its name in its
// parent's values, down the path.
func scope(v chartutil.Values, path []string) chartutil.Values {
	for _, name := range path {
		sub, ok := v[name].(map[string]interface{})
		if !ok {
			return chartutil.Values{}
		}
		v = sub
	}
	return v
}

// conditionHolds evaluates a condition as Helm evaluates a dependency's
// condition (chartutil processDependencyConditions): the first path that
// holds a boolean decides; when none does, the condition holds.
func conditionHolds(v chartutil.Values, cond string) bool {
	for _, p := range strings.Split(cond, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b, err := v.PathValue(p); err == nil {
			if b, ok := b.(bool); ok {
				return b
			}
		}
	}
	return true
}
