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
// setting that was not added. It states the fact and names no setting of
// a front end: Config.NoAddRegistry (noAddRegistry in a config file)
// leaves the setting out, and each front end adds that hint in its own
// terms (the CLI --no-add-registry, the KRM function's noAddRegistry).
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
	return fmt.Sprintf("%s: registry setting %s: %s %s: its operator pulls the images it starts from the target registry", loc, s.Location.Field, s.Target, what)
}

// ChartsSummary is the one-line report of the GitOps chart sources
// rewritten (Rewriter.Charts) to repo, the target's charts
// (rewrite.Mapper.ChartsRepository); "" when none was. It names no
// setting of a front end: Config.NoChartSources (noChartSources in a
// config file) leaves the sources as written, and each front end adds that
// hint in its own terms (the CLI --no-chart-sources).
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
	return fmt.Sprintf("%d GitOps chart source(s) rewritten: the controllers pull chart NAME at VERSION from %s/NAME:VERSION, where rehost mirror pushes the charts", n, repo)
}

// Summary is what a run found besides its images, as one value that every
// front end (cmd/rehost, pkg/app, pkg/krmfn) words in its own form, so that
// each reports the same facts about the same input.
type Summary struct {
	// Settings are the registry settings of operators met, in input
	// order: rewritten, added, or left as they are (Setting.Message).
	Settings []Setting
	// Operators are the operators that start images no manifest names
	// (OperatorNote.Message), sorted by operator; admission placeholders
	// resolved to the images they stand for. Empty when an image list was
	// read: the user listed those images there.
	Operators []OperatorNote
	// Charts are the GitOps chart sources met (ChartsSummary).
	Charts []ChartSource
	// Guessed sums up the images found by the name of their key in custom
	// resources of unknown kinds; nil when there were none.
	Guessed *GuessedImages
	// EmbeddedLeftOut are the embedded references neither listed nor
	// rewritten (EmbeddedSummary).
	EmbeddedLeftOut []rewrite.Image
}

// Summary returns the findings of the run so far. Unlike WarnGuessed it
// changes nothing: call it at the end of a run.
func (rw *Rewriter) Summary() Summary {
	s := Summary{Settings: rw.Settings(), Charts: rw.Charts(), EmbeddedLeftOut: rw.EmbeddedLeftOut()}
	if rw.ImageLists() == 0 {
		s.Operators = rw.Operators()
	}
	rw.mu.Lock()
	s.Guessed = rw.guessed.warning()
	rw.mu.Unlock()
	return s
}
