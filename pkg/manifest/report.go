package manifest

import (
	"fmt"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
)

// The one-line reports below are shared by the CLI, the KRM function and
// rehost mirror, so that each says the same thing about the same input.

// EmbeddedSummary is the one-line summary of the embedded references found
// and left out (Rewriter.EmbeddedLeftOut): what was not done to them
// ("listed", "rewritten", "copied") and hint, how to do it. It is "" when
// none was left out.
func EmbeddedSummary(left []rewrite.Image, what, hint string) string {
	if len(left) == 0 {
		return ""
	}
	n := 0
	for _, img := range left {
		n += img.Count
	}
	return fmt.Sprintf("%d image reference(s) embedded in args, env values, ConfigMap data or annotations (%d image(s)) found and not %s; %s", n, len(left), what, hint)
}

// Message is the one-line report of an added registry setting; "" for a
// setting that was not added.
func (s Setting) Message() string {
	if !s.Added {
		return ""
	}
	what := "added"
	if s.Location.Value != "" {
		what = fmt.Sprintf("set (was %s)", bounded.Quote(s.Location.Value))
	}
	loc := s.Location
	loc.Field = ""
	return fmt.Sprintf("%s: registry setting %s: %s %s: its operator pulls the images it starts from the target registry (--no-add-registry, noAddRegistry: true, leaves it out)", loc, s.Location.Field, s.Target, what)
}

// ChartsSummary is the one-line report of the GitOps chart sources
// rewritten (Rewriter.Charts) to repo, the target's charts
// (rewrite.Mapper.ChartsRepository); "" when none was.
func ChartsSummary(charts []ChartSource, repo string) string {
	n := 0
	for _, c := range charts {
		if c.Action == rewrite.Rewritten {
			n += c.Count
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d GitOps chart source(s) rewritten: the controllers pull chart NAME at VERSION from %s/NAME:VERSION, where rehost mirror pushes the charts (noChartSources: true, --no-chart-sources, leaves the sources as written)", n, repo)
}
