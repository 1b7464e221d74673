package helm

import (
	"github.com/rehost/rehost/pkg/rendered"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Metadata returns what [rendered.FromTemplates] needs to know of a loaded
// chart: its name, version and annotations, and its subcharts' (after a
// render, those its values enable). Values are left unset.
func Metadata(ch *chart.Chart) rendered.Metadata {
	m := rendered.Metadata{Name: ch.Name()}
	if ch.Metadata != nil {
		m.Version, m.Annotations = ch.Metadata.Version, ch.Metadata.Annotations
	}
	for _, d := range ch.Dependencies() {
		m.Subcharts = append(m.Subcharts, Metadata(d))
	}
	return m
}

// annotatedImages returns the images the image annotations of ch and of
// its subcharts declare (rendered.Metadata.AnnotatedImages). ch has been
// through Helm's dependency processing, so it holds only the subcharts its
// values enable; vals are the user's values, coalesced with the charts'
// for the entries' conditions, only when an entry has one.
func annotatedImages(ch *chart.Chart, vals map[string]interface{}) ([]rendered.AnnotatedImage, error) {
	m := Metadata(ch)
	imgs, err := m.AnnotatedImages()
	if err != nil {
		return nil, err
	}
	for _, a := range imgs {
		if a.Condition != "" {
			if m.Values, err = chartutil.CoalesceValues(ch, vals); err != nil {
				return nil, err
			}
			return m.AnnotatedImages()
		}
	}
	return imgs, nil
}
