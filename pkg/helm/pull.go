package helm

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
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
	// Settings is the Helm environment to use (cli.New(): the user's
	// repositories file, registry logins, cache and plugins). Nil means
	// private, empty ones, removed when Pull returns: only repository URLs
	// given in full (RepoURL, oci://) resolve, registry logins are the
	// Docker config's (Helm's fallback), and nothing of the user's Helm
	// directories is read or written.
	Settings *cli.EnvSettings
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
func Pull(ref, dest string, o PullOptions) (*Pulled, error) {
	p, err := pull(ref, dest, o)
	if err != nil {
		what := ref
		if o.Version != "" {
			what += " version " + o.Version
		}
		if o.RepoURL != "" {
			what += " in repository " + o.RepoURL
		}
		return nil, fmt.Errorf("chart %s: %w", what, err)
	}
	return p, nil
}

func pull(ref, dest string, o PullOptions) (*Pulled, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, fmt.Errorf("empty chart reference")
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

	ropts := []registry.ClientOption{
		// A client of rehost's: Helm 3's own falls back to plain HTTP for
		// any registry that answers so, which only PlainHTTP may allow.
		registry.ClientOptHTTPClient(&http.Client{Transport: registry.NewTransport(false)}),
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
	getters := getter.All(settings)
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
		if src, err = findInRepo(o.RepoURL, name, o.Version, getters, scratch); err != nil {
			return nil, err
		}
	case registry.IsOCI(ref):
		dl.Options = append(dl.Options, getter.WithRegistryClient(rc))
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
	ch, err := loader.Load(file)
	if err != nil {
		return nil, fmt.Errorf("%s is not a chart: %w", resolved, err)
	}
	p := &Pulled{Ref: ref, URL: resolved, Path: file, Name: ch.Name(), Version: ch.Metadata.Version}
	if st, err := os.Stat(file + ".prov"); err == nil && st.Mode().IsRegular() {
		p.Provenance = file + ".prov"
	}
	return p, nil
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
// the chart repository at repoURL; its index is downloaded into scratch.
func findInRepo(repoURL, name, version string, getters getter.Providers, scratch string) (string, error) {
	r, err := repo.NewChartRepository(&repo.Entry{Name: "rehost", URL: repoURL}, getters)
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
