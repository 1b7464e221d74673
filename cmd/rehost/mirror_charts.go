package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/mirror"
	"github.com/spf13/cobra"
)

// The values of rehost mirror --charts.
const (
	chartsRelocated = "relocated"
	chartsAsIs      = "as-is"
	chartsNone      = "none"
)

// chartJobs makes the jobs that push the charts given as input (read
// already, in hf.src.found) to <registry>/<charts-path>/<name>:<version>:
// each relocated by rehost-helm into the command's temporary directory
// (--charts relocated), or as given (a packaged chart's own bytes, a
// directory packaged by rehost-helm), then read by package mirror, which
// makes it an OCI artifact. A chart that cannot be prepared stops the
// command before anything is copied.
func chartJobs(cmd *cobra.Command, f mirrorFlags, mf *mappingFlags, hf *helmFlags, rw *manifest.Rewriter, s streams) ([]mirror.Job, error) {
	if f.charts == chartsNone || len(hf.src.found) == 0 {
		return nil, nil
	}
	if f.charts == chartsRelocated {
		if hf.valuesStdin(s) != nil {
			return nil, errors.New("-f -: the values read from standard input for rendering cannot be read again to relocate the charts: give them in a file (or --charts as-is)")
		}
	}
	repo := rw.Mapper().ChartsRepository()
	var jobs []mirror.Job
	seen := map[string]mirror.Job{} // name and version -> its job
	for _, in := range hf.src.found {
		c, err := prepareChart(cmd, f, in, mf, hf, s)
		if err != nil {
			return nil, err
		}
		if f.charts == chartsRelocated {
			c.Relocated = mirror.RelocationFor(rw.Mapper())
		}
		key := c.Name + " " + c.Version
		if prev, ok := seen[key]; ok {
			a, _ := prev.Chart.Digest()
			b, _ := c.Digest()
			if a == b {
				continue // the same chart given twice
			}
			return nil, fmt.Errorf("charts %s and %s are both %s %s, but differ: they would go to the same tag %s", prev.Source, in.source, c.Name, c.Version, prev.Target)
		}
		j := mirror.ChartJob(in.source, c, repo)
		seen[key] = j
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// prepareChart writes the chart to push, relocated or as given, and
// reads it.
func prepareChart(cmd *cobra.Command, f mirrorFlags, in chartInput, mf *mappingFlags, hf *helmFlags, s streams) (*mirror.Chart, error) {
	// A chart whose dependencies were fetched is pushed with them, as
	// helm package --dependency-update would package it.
	local, err := hf.src.withDependencies(in.path)
	if err != nil {
		return nil, err
	}
	packaged := strings.HasSuffix(in.path, ".tgz") || strings.HasSuffix(in.path, ".tar.gz")
	if f.charts == chartsAsIs && packaged && local == in.path {
		c, err := mirror.LoadChart(in.path)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", in.source, err)
		}
		return c, nil
	}
	dir, err := hf.src.tempDir()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "chart.tgz")
	if f.charts == chartsAsIs {
		if _, _, err := hf.src.runHelper("", []string{"package", "--output=" + out, "--", local}, nil, ""); err != nil {
			return nil, err
		}
	} else {
		r, err := runAirgap(cmd, "relocate", in.path, mf, hf, s, []string{"--output=" + out})
		if err != nil {
			return nil, err
		}
		if len(r.Unmoved) > 0 {
			var b strings.Builder
			for _, u := range r.Unmoved {
				fmt.Fprintf(&b, "\n  %s", u.Message)
			}
			if !f.allowPartial {
				return nil, fmt.Errorf("chart %s: %d image field(s) no value moves, so the relocated chart would pull them from where they are:%s\n--allow-partial pushes it anyway, --charts as-is pushes the chart as given (rewrite it at install with the post-renderer, rehost rewrite)", in.source, len(r.Unmoved), b.String())
			}
			fmt.Fprintf(s.err, "rehost: warning: chart %s: %d image field(s) no value moves; the relocated chart pulls them from where they are (--allow-partial):%s\n", in.source, len(r.Unmoved), b.String())
		}
		if st, err := os.Stat(in.path + ".prov"); err == nil && st.Mode().IsRegular() {
			fmt.Fprintf(s.err, "rehost: warning: chart %s: its provenance file is not pushed: it signs the chart as given, not the relocated one\n", in.source)
		}
	}
	c, err := mirror.LoadChart(out)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", in.source, err)
	}
	return c, nil
}
