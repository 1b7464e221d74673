package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rehost/rehost/internal/redact"
	"github.com/rehost/rehost/internal/stall"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
)

// PullOptions say where a chart reference is fetched from, with Helm's
// getters.
type PullOptions struct {
	// Version is the chart's version, or a SemVer constraint ("^1.2");
	// empty means the latest stable version (for an oci:// reference
	// without a tag, the highest tag).
	Version string
	// RepoURL is the URL of a chart repository (an index.yaml server):
	// the reference is then the name of a chart in it, as with `helm pull
	// --repo URL NAME`. A reference "ALIAS/NAME" names chart NAME there
	// too.
	RepoURL string
	// PlainHTTP reaches OCI registries over plain HTTP.
	PlainHTTP bool
	// SourceMirrors are read instead of the places they cover: an
	// oci:// reference, a RepoURL or the URL of a packaged chart whose host
	// and path a prefix covers is fetched from its mirror, same scheme,
	// without the credentials of the original and without fallback
	// (rewrite.SourceMirrors.Find). Pulled.URL then names the mirror.
	SourceMirrors *rewrite.SourceMirrors
	// Settings is the Helm environment to use (cli.New(): the user's
	// repositories file, registry logins, cache and plugins). Nil means
	// private, empty ones, removed when Pull returns: only repository URLs
	// given in full (RepoURL, oci://) resolve, registry logins are the
	// Docker config's (Helm's fallback), and nothing of the user's Helm
	// directories is read or written.
	Settings *cli.EnvSettings

	// MaxChartSize bounds what is downloaded for the chart, all together:
	// the packaged chart and its provenance file, or an OCI chart's
	// manifest, tag list, config and layers (TooLargeError). Zero means
	// DefaultMaxChartSize.
	MaxChartSize int64
	// MaxIndexSize bounds the index.yaml of RepoURL (TooLargeError). Zero
	// means DefaultMaxIndexSize.
	MaxIndexSize int64
	// StallTimeout abandons a request that moves less than 1 KiB/s over
	// this long, waiting for the answer included (ErrStalled). Zero means
	// DefaultStallTimeout; a negative value turns the check off.
	StallTimeout time.Duration
}

// Pulled is a chart fetched by Pull.
type Pulled struct {
	// Ref is the reference as given.
	Ref string `json:"ref"`
	// URL is what it resolved to: "oci://ghcr.io/x/shop:1.2.0",
	// "https://charts.example/shop-1.2.0.tgz".
	URL string `json:"url"`
	// Path is the packaged chart (.tgz), Provenance its provenance file
	// ("" when the source has none).
	Path       string `json:"path"`
	Provenance string `json:"provenance,omitempty"`
	// Name and Version are the chart's, from its Chart.yaml.
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Pull fetches the chart ref into the directory dest (created when
// missing), with its provenance file when the source has one:
//
//   - "oci://host/path/name" (with a tag, or Version): a chart in an OCI
//     registry;
//   - NAME (or ALIAS/NAME) with RepoURL: a chart in that chart repository;
//   - REPO/NAME without RepoURL: a chart in a repository of the Helm
//     repositories file, which only the user's Settings have;
//   - an http(s) URL of a packaged chart.
//
// The chart is checked to load with Helm's loader. Errors name the
// reference, the version and the repository.
//
// Every download is bounded (MaxChartSize, MaxIndexSize) and abandoned
// when it stalls (StallTimeout). Credentials go only to the origin
// (scheme, host and port) they were configured for: the user information
// of RepoURL ("https://user:password@host/charts") to the repository's
// origin, those of a repository of the user's Helm configuration as Helm's
// getter sends them (its pass_credentials_all included), and a redirect
// to another origin drops them. No message, and neither Ref nor URL of
// the result, holds credentials: user information in URLs reads
// "[redacted]", and so does every credential sent, wherever it appears.
func Pull(ref, dest string, o PullOptions) (*Pulled, error) {
	return PullContext(context.Background(), ref, dest, o)
}

// PullContext is Pull, whose requests end when ctx ends (the error then
// wraps context.Cause(ctx)).
func PullContext(ctx context.Context, ref, dest string, o PullOptions) (*Pulled, error) {
	var secrets redact.Secrets
	p, err := pull(ctx, ref, dest, o, &secrets)
	if err != nil {
		what := ref
		if o.Version != "" {
			what += " version " + o.Version
		}
		if o.RepoURL != "" {
			what += " in repository " + o.RepoURL
		}
		// The limits' and the stall's own errors say it all; Helm's
		// wrapping around them would say the repository is unreachable.
		var tooLarge *TooLargeError
		var stalled *stall.Error
		switch {
		case errors.As(err, &tooLarge):
			err = tooLarge
		case errors.As(err, &stalled):
			err = stalled
		}
		return nil, secrets.Error(fmt.Errorf("chart %s: %w", what, err))
	}
	p.Ref, p.URL = secrets.String(p.Ref), secrets.String(p.URL)
	return p, nil
}

// fetchLimits sets the download limits of a pull or a dependency fetch
// left at zero to their defaults, and refuses negative sizes.
func fetchLimits(chart, index *int64, stall *time.Duration) error {
	if *chart == 0 {
		*chart = DefaultMaxChartSize
	}
	if *index == 0 {
		*index = DefaultMaxIndexSize
	}
	if *stall == 0 {
		*stall = DefaultStallTimeout
	}
	if *chart < 0 || *index < 0 {
		return fmt.Errorf("negative size limit")
	}
	return nil
}

func pull(ctx context.Context, ref, dest string, o PullOptions, secrets *redact.Secrets) (*Pulled, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("empty chart reference")
	}
	if err := fetchLimits(&o.MaxChartSize, &o.MaxIndexSize, &o.StallTimeout); err != nil {
		return nil, err
	}
	// Credentials in a URL are sent with Helm's getter options, to their
	// origin only, and kept out of every URL Helm handles (and prints).
	repoURL, repoUser, repoPass := redact.Strip(o.RepoURL)
	secrets.AddUser(repoUser, repoPass)
	var refUser, refPass string
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		ref, refUser, refPass = redact.Strip(ref)
		secrets.AddUser(refUser, refPass)
	}
	// Source mirrors: the request goes to the mirror, the credentials
	// of the original stay behind.
	if m, ok := mirrorURL(o.SourceMirrors, repoURL); ok {
		repoURL, repoUser, repoPass = m, "", ""
	}
	if m, ok := mirrorURL(o.SourceMirrors, ref); ok {
		ref, refUser, refPass = m, "", ""
	}
	settings := o.Settings
	if settings == nil {
		home, err := os.MkdirTemp("", "rehost-helm-home-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(home)
		settings = privateSettings(home)
	}
	scratch, err := os.MkdirTemp("", "rehost-helm-index-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)

	// The chart's downloads (HTTP or OCI) share one budget, the index has
	// its own.
	chartBudget, indexBudget := &budget{limit: o.MaxChartSize}, &budget{limit: o.MaxIndexSize}
	guard := func(inner http.RoundTripper, b *budget) *fetchTransport {
		return &fetchTransport{
			inner:  stall.Transport{Inner: inner, Window: o.StallTimeout, Sentinel: ErrStalled},
			budget: b, index: b == indexBudget, ctx: ctx, secrets: secrets,
		}
	}
	repositories := ""
	if o.Settings != nil {
		repositories = settings.RepositoryConfig
	}
	base, err := newOriginTransports(repositories)
	if err != nil {
		return nil, err
	}
	ropts := []registry.ClientOption{
		// A client of rehost's: Helm 3's own falls back to plain HTTP for
		// any registry that answers so, which only PlainHTTP may allow.
		registry.ClientOptHTTPClient(&http.Client{Transport: guard(registry.NewTransport(false), chartBudget)}),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(settings.RegistryConfig),
		registry.ClientOptEnableCache(true),
	}
	if o.PlainHTTP {
		ropts = append(ropts, registry.ClientOptPlainHTTP())
	}
	rc, err := registry.NewClient(ropts...)
	if err != nil {
		return nil, err
	}
	// Helm's getters, whose HTTP requests go through the guard: it takes
	// the place of the transport Helm's getter would make, and the stall
	// timeout that of Helm's 120-second limit on a whole request (which
	// would fail a large chart on a slow link, and wraps the body so that
	// the guard cannot fill the getter's buffer in one allocation).
	httpGetters := func(b *budget) getter.Providers {
		return getter.All(settings, getter.WithTransport(shell(guard(base, b))), getter.WithTimeout(0))
	}
	getters := httpGetters(chartBudget)
	var out bytes.Buffer // Helm's notes ("Verification not found"), not wanted
	dl := downloader.ChartDownloader{
		Out:              &out,
		Verify:           downloader.VerifyLater, // fetch the .prov when there is one; rehost does not verify it
		Getters:          getters,
		Options:          []getter.Option{getter.WithPlainHTTP(o.PlainHTTP)},
		RegistryClient:   rc,
		RepositoryConfig: settings.RepositoryConfig,
		RepositoryCache:  settings.RepositoryCache,
	}
	src := ref
	switch {
	case o.RepoURL != "":
		if registry.IsOCI(ref) {
			return nil, fmt.Errorf("an oci:// reference takes no repository URL")
		}
		name := ref[strings.LastIndex(ref, "/")+1:]
		indexGetters := httpGetters(indexBudget)
		entry := &repo.Entry{Name: "rehost", URL: repoURL, Username: repoUser, Password: repoPass}
		if src, err = findInRepo(entry, name, o.Version, indexGetters, scratch); err != nil {
			return nil, err
		}
		// The index may send the chart elsewhere: the repository's
		// credentials go to its own origin only. (Helm's downloader gives
		// its getter the chart's URL as the configured one, so its
		// same-origin check cannot tell.)
		if repoPass != "" && sameOrigin(src, repoURL) {
			dl.Options = append(dl.Options, getter.WithBasicAuth(repoUser, repoPass))
		}
	case registry.IsOCI(ref):
		dl.Options = append(dl.Options, getter.WithRegistryClient(rc))
	case refPass != "":
		dl.Options = append(dl.Options, getter.WithBasicAuth(refUser, refPass))
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(settings.RepositoryCache, 0o755); err != nil {
		return nil, err
	}
	u, err := dl.ResolveChartVersion(src, o.Version)
	if err != nil {
		return nil, err
	}
	resolved := u.String()
	file, _, err := dl.DownloadTo(src, o.Version, dest)
	if err != nil {
		return nil, err
	}
	ch, _, err := load(file)
	if err != nil {
		return nil, fmt.Errorf("%s is not a chart: %w", resolved, errors.Unwrap(err))
	}
	p := &Pulled{Ref: ref, URL: resolved, Path: file, Name: ch.Name(), Version: ch.Metadata.Version}
	if st, err := os.Stat(file + ".prov"); err == nil && st.Mode().IsRegular() {
		p.Provenance = file + ".prov"
	}
	return p, nil
}

// mirrorURL maps an http(s):// or oci:// URL whose host and path a source
// mirror covers to the mirror, same scheme; an oci:// reference's tag is
// kept.
func mirrorURL(ms *rewrite.SourceMirrors, u string) (string, bool) {
	if ms.Len() == 0 {
		return "", false
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || scheme != "http" && scheme != "https" && scheme != "oci" {
		return "", false
	}
	tail := ""
	if scheme == "oci" {
		// oci://host[:port]/path/name[:tag]
		if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") && strings.Contains(rest, "/") {
			rest, tail = rest[:i], rest[i:]
		}
	} else if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest, tail = rest[:i], rest[i:]
	}
	m, _, ok := ms.Find(strings.TrimSuffix(rest, "/"))
	if !ok {
		return "", false
	}
	if strings.HasSuffix(rest, "/") {
		m += "/"
	}
	return scheme + "://" + m + tail, true
}

// privateSettings is a Helm environment whose configuration, cache and
// plugins are the empty directory home.
func privateSettings(home string) *cli.EnvSettings {
	s := cli.New()
	s.RepositoryConfig = filepath.Join(home, "config", "repositories.yaml")
	s.RepositoryCache = filepath.Join(home, "cache", "repository")
	s.RegistryConfig = filepath.Join(home, "config", "registry", "config.json")
	s.PluginsDirectory = filepath.Join(home, "data", "plugins")
	return s
}

// findInRepo returns the URL of chart name at version (or constraint) in
// the chart repository of entry; its index is downloaded into scratch.
func findInRepo(entry *repo.Entry, name, version string, getters getter.Providers, scratch string) (string, error) {
	repoURL := entry.URL
	r, err := repo.NewChartRepository(entry, getters)
	if err != nil {
		return "", err
	}
	r.CachePath = scratch
	file, err := r.DownloadIndexFile()
	if err != nil {
		return "", fmt.Errorf("%s is not a chart repository or cannot be reached: %w", repoURL, err)
	}
	idx, err := repo.LoadIndexFile(file)
	if err != nil {
		return "", err
	}
	cv, err := idx.Get(name, version)
	if err != nil {
		versions := idx.Entries[name]
		if len(versions) == 0 {
			return "", fmt.Errorf("no chart %s in %s", name, repoURL)
		}
		var have []string
		for _, v := range versions {
			have = append(have, v.Version)
		}
		sort.Strings(have)
		if len(have) > 10 {
			have = append(have[len(have)-10:], "…")
		}
		want := "no stable version"
		if version != "" {
			want = "no version " + version
		}
		return "", fmt.Errorf("%s of chart %s in %s (it has %s)", want, name, repoURL, strings.Join(have, ", "))
	}
	if len(cv.URLs) == 0 {
		return "", fmt.Errorf("chart %s %s in %s has no download URL", name, cv.Version, repoURL)
	}
	return repo.ResolveReferenceURL(repoURL, cv.URLs[0])
}
