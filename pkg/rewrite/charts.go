package rewrite

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
)

// DefaultChartsPath is the repository path, below the target registry and
// its prefix, where rehost mirror pushes charts and where rewritten GitOps
// chart sources point: chart NAME at VERSION is
// <registry>/charts/NAME:VERSION.
const DefaultChartsPath = "charts"

// ChartForm says how a GitOps kind writes the source of a Helm chart, and
// so how its target is written.
type ChartForm string

const (
	// ChartRepoOCI is a repository of charts written as an oci:// URL (a
	// Flux HelmRepository's spec.url): the controller pulls chart NAME at
	// VERSION from URL/NAME:VERSION. Target: oci://<registry>/<charts-path>.
	ChartRepoOCI ChartForm = "oci-repository"
	// ChartOCI is one chart written as an oci:// URL that ends in its name
	// (a Flux OCIRepository's spec.url): the tag is the version. Target:
	// oci://<registry>/<charts-path>/<name>.
	ChartOCI ChartForm = "oci-chart"
	// ChartRepoHost is a repository of charts written as Argo CD reads an
	// OCI Helm repository, host/path without a scheme (an Application
	// source's repoURL beside its chart): Argo CD pulls
	// oci://host/path/NAME:VERSION. Target: <registry>/<charts-path>.
	ChartRepoHost ChartForm = "oci-host"
)

// ChartMapping is the result of mapping a chart source.
type ChartMapping struct {
	// Source is the source as written; Target the value that makes the
	// controller pull the chart from the target registry (Source itself
	// when Action is not Rewritten).
	Source, Target string
	Action         Action
	// Name is the chart's name when the source names one chart (ChartOCI).
	Name string
}

// InvalidChartSourceError reports a value that is not a chart source rehost
// can map: not an http(s):// or oci:// URL (or, for Argo CD, host/path),
// without a host, or, for a source that names one chart, without its name.
type InvalidChartSourceError struct {
	Value  string
	Reason string
}

func (e *InvalidChartSourceError) Error() string {
	return fmt.Sprintf("invalid chart source %s: %s", bounded.Quote(e.Value), e.Reason)
}

// ChartsRepository is the repository of charts in the target registry,
// "sea.hub:5000/charts" (the registry with its prefix, then the charts
// path), without a scheme.
func (m *Mapper) ChartsRepository() string {
	return m.Root() + "/" + m.chartsPath
}

// MapChart maps the source of a Helm chart that a GitOps controller pulls
// (see ChartForm): a chart repository served over HTTP(S) or an OCI
// registry, or one chart in an OCI registry. Whatever the source, chart
// NAME at VERSION lands at <registry>/<charts-path>/NAME:VERSION in the
// target, where rehost mirror pushes it, so the target depends only on the
// form (and, for ChartOCI, on the chart's name), not on the source's host
// or path or on the path style.
//
// A source on the target registry's host is left as written (InTarget), as
// are sources that an exclusion matches (Excluded): a host exclusion
// matches the URL's host, a repository exclusion the URL's host and path
// ("ghcr.io/stefanprodan" matches oci://ghcr.io/stefanprodan/charts);
// Docker Hub's registry-1.docker.io and index.docker.io count as docker.io.
func (m *Mapper) MapChart(value string, form ChartForm) (ChartMapping, error) {
	bad := func(reason string) (ChartMapping, error) {
		return ChartMapping{}, &InvalidChartSourceError{Value: value, Reason: reason}
	}
	host, path, err := parseChartURL(value, form)
	if err != nil {
		return bad(err.Error())
	}
	out := ChartMapping{Source: value, Target: value}
	if form == ChartOCI {
		out.Name = path[strings.LastIndexByte(path, '/')+1:]
		if out.Name == "" {
			return bad("it names no chart: want oci://host/path/NAME")
		}
	}
	h := chartHost(host)
	if h == chartHost(m.host) {
		out.Action = InTarget
		return out, nil
	}
	for _, ex := range m.excludes {
		if ex.matchesPath(h, path) {
			out.Action = Excluded
			return out, nil
		}
	}
	out.Action = Rewritten
	switch form {
	case ChartRepoOCI:
		out.Target = "oci://" + m.ChartsRepository()
	case ChartOCI:
		if err := checkPath(out.Name); err != nil {
			return bad(fmt.Sprintf("the chart's name %s cannot be a repository of the target: %v", bounded.Quote(out.Name), err))
		}
		out.Target = "oci://" + m.ChartsRepository() + "/" + out.Name
	default:
		out.Target = m.ChartsRepository()
	}
	return out, nil
}

// parseChartURL returns the host (with its port) and the path (without
// leading or trailing slashes) of a chart source. Flux's forms must be
// oci:// URLs (ChartOCI) or http(s):// or oci:// URLs (ChartRepoOCI);
// Argo CD's (ChartRepoHost) may also be host/path.
func parseChartURL(value string, form ChartForm) (host, path string, err error) {
	if value == "" {
		return "", "", fmt.Errorf("empty")
	}
	if strings.ContainsAny(value, " \t\n{}$") {
		return "", "", fmt.Errorf("not a URL (a template or a placeholder?)")
	}
	scheme, _, hasScheme := strings.Cut(value, "://")
	switch {
	case !hasScheme && form == ChartRepoHost:
		host, path, _ = strings.Cut(value, "/")
		if i := strings.LastIndexByte(host, '@'); i >= 0 { // user@host
			host = host[i+1:]
		}
	case !hasScheme:
		return "", "", fmt.Errorf("want an oci:// or https:// URL")
	default:
		want := []string{"oci"}
		if form != ChartOCI {
			want = append(want, "https", "http")
		}
		ok := false
		for _, w := range want {
			ok = ok || strings.EqualFold(scheme, w)
		}
		if !ok {
			return "", "", fmt.Errorf("scheme %s: want %s://", bounded.Word(scheme), strings.Join(want, ":// or "))
		}
		u, perr := url.Parse(value)
		if perr != nil {
			return "", "", errors.New(bounded.Cut(strings.TrimPrefix(perr.Error(), fmt.Sprintf("parse %q: ", value)), bounded.MaxQuoted))
		}
		host, path = u.Host, u.Path
	}
	path = strings.Trim(path, "/")
	if host == "" {
		return "", "", fmt.Errorf("no host")
	}
	if err := checkHost(host); err != nil {
		return "", "", err
	}
	return host, path, nil
}

// chartHost normalises the host of a chart source for comparisons: lower
// case, and Docker Hub's registry hosts as docker.io.
func chartHost(h string) string {
	h = normalizeHost(h)
	if h == "registry-1.docker.io" {
		return dockerHub
	}
	return h
}

// matchesPath reports whether the exclusion matches a chart source at
// host (normalised) and path: its host, or a repository prefix of
// host/path, component-wise.
func (e exclusion) matchesPath(host, path string) bool {
	if e.host != "" {
		return host == chartHost(e.host)
	}
	n := host
	if path != "" {
		n += "/" + path
	}
	for _, p := range e.repos {
		if n == p || strings.HasPrefix(n, p+"/") {
			return true
		}
	}
	return false
}
