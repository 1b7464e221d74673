package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/rehost/rehost/internal/redact"
	"github.com/rehost/rehost/internal/stall"
	"github.com/rehost/rehost/pkg/rewrite"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
)

// DependencyOptions say where the dependencies of a chart are fetched
// from, and within which bounds (FetchDependencies).
type DependencyOptions struct {
	// PlainHTTP reaches oci:// registries over plain HTTP.
	PlainHTTP bool
	// Settings is the Helm environment to use (cli.New(): the user's
	// repositories file, whose names "@stable" and "alias:stable" of
	// Chart.yaml resolve, its registry logins and cache). Nil means
	// private, empty ones, removed when FetchDependencies returns: only
	// repositories given as URLs (https://…, oci://…) resolve.
	Settings *cli.EnvSettings
	// SourceMirrors are read instead of the repositories they cover: a
	// dependency whose repository's host and path ("charts.example/x",
	// "ghcr.io/org/charts") a prefix covers is fetched from its mirror,
	// with the same scheme (rewrite.SourceMirrors.Find). There is no
	// fallback to the repository itself.
	SourceMirrors *rewrite.SourceMirrors

	// MaxChartSize bounds each dependency's downloads together: its
	// packaged chart, or its OCI tag list, manifest, config and layers
	// (TooLargeError). Zero means DefaultMaxChartSize.
	MaxChartSize int64
	// MaxIndexSize bounds each download of a repository's index.yaml
	// (TooLargeError). Zero means DefaultMaxIndexSize.
	MaxIndexSize int64
	// StallTimeout abandons a request that moves less than 1 KiB/s over
	// this long (ErrStalled). Zero means DefaultStallTimeout; a negative
	// value turns the check off.
	StallTimeout time.Duration
}

// FetchedDependency is a dependency FetchDependencies fetched.
type FetchedDependency struct {
	// Name, Version and Repository are the dependency's entry in
	// Chart.yaml (Version its constraint), Repository with credentials
	// redacted.
	Name       string `json:"name"`
	Version    string `json:"version"`
	Repository string `json:"repository"`
	// From is where it was fetched: Repository, its URL when Repository
	// is a name of the Helm repositories file, or its source mirror.
	From string `json:"from"`
	// Locked says the version is the one of Chart.lock, which is in step
	// with Chart.yaml; otherwise the constraint chose it.
	Locked bool `json:"locked,omitempty"`
	// Fetched is the version fetched, File the packaged chart in the
	// copy's charts/ directory.
	Fetched string `json:"fetched"`
	File    string `json:"file"`
}

// DependencyError is a dependency that could not be fetched: it names the
// chart, the dependency, its version and its repository.
type DependencyError struct {
	// Chart is the chart as given (its path).
	Chart string
	// Name, Version and Repository are the dependency's entry
	// (Version: the version of Chart.lock when it is in step).
	Name, Version, Repository string
	// From is the source mirror read instead of Repository, or "".
	From string
	Err  error
}

func (e *DependencyError) Error() string {
	what := fmt.Sprintf("chart %s: dependency %s version %s from %s", e.Chart, e.Name, e.Version, e.Repository)
	if e.Version == "" {
		what = fmt.Sprintf("chart %s: dependency %s (no version) from %s", e.Chart, e.Name, e.Repository)
	}
	if e.From != "" && e.From != e.Repository {
		what += " (read from its mirror " + e.From + ")"
	}
	return what + ": " + e.Err.Error()
}

func (e *DependencyError) Unwrap() error { return e.Err }

// MissingDependencies lists the dependencies of the chart at path
// (Chart.yaml, or requirements.yaml of an apiVersion v1 chart) that are
// not in its charts/ directory, by name, as Helm checks before it
// renders.
func MissingDependencies(path string) ([]*chart.Dependency, error) {
	ch, _, err := load(path)
	if err != nil {
		return nil, err
	}
	return missingDependencies(ch), nil
}

func missingDependencies(ch *chart.Chart) []*chart.Dependency {
	present := map[string]bool{}
	for _, d := range ch.Dependencies() {
		present[d.Name()] = true
	}
	var missing []*chart.Dependency
	for _, d := range ch.Metadata.Dependencies {
		if d != nil && !present[d.Name] {
			missing = append(missing, d)
		}
	}
	return missing
}

// FetchDependencies returns the path of a chart with every dependency of
// the chart at path (a directory or a packaged chart) in its charts/
// directory: path itself when none is missing; otherwise a copy of the
// chart in a new directory under dir (which must exist; the copy is the
// caller's to remove, and nothing else is left there) into whose charts/
// the missing ones
// are fetched, as `helm dependency build` fetches them — the versions of
// Chart.lock when it is present and in step with Chart.yaml, otherwise
// the best versions the constraints allow — with Helm's downloader, from
// http(s):// chart repositories, oci:// registries, names of the Helm
// repositories file (Settings) and file:// paths (relative to the chart
// directory). The chart at path is only read; dependencies already in
// charts/ are kept as they are.
//
// Every fetched chart must load, be named as its dependency and satisfy
// its version: anything else (a repository that serves HTML, a chart of
// another name or version) is a *DependencyError, and so is any failure to
// fetch, naming the chart, the dependency, its version and its
// repository. The bounds, credentials and redaction are Pull's:
// MaxChartSize per dependency, MaxIndexSize per index, StallTimeout per
// request, credentials only to their origin, never in a message.
func FetchDependencies(ctx context.Context, path, dir string, o DependencyOptions) (string, []FetchedDependency, error) {
	ch, _, err := load(path)
	if err != nil {
		return "", nil, err
	}
	missing := missingDependencies(ch)
	if len(missing) == 0 {
		return path, nil, nil
	}
	if err := fetchLimits(&o.MaxChartSize, &o.MaxIndexSize, &o.StallTimeout); err != nil {
		return "", nil, err
	}
	var secrets redact.Secrets
	f := &depFetcher{ctx: ctx, chart: path, o: o, secrets: &secrets}
	out, fetched, err := f.run(ch, missing, dir)
	if err != nil {
		return "", nil, secrets.Error(err)
	}
	return out, fetched, nil
}

type depFetcher struct {
	ctx      context.Context
	chart    string // as given, for messages
	o        DependencyOptions
	settings *cli.EnvSettings
	repos    *repo.File // the Helm repositories file (empty without Settings)
	base     *originTransports
	secrets  *redact.Secrets
	cache    string          // the repository cache of the run
	indexed  map[string]bool // repositories whose index is in the cache, by name
}

func (f *depFetcher) run(ch *chart.Chart, missing []*chart.Dependency, dir string) (string, []FetchedDependency, error) {
	f.settings = f.o.Settings
	if f.settings == nil {
		home, err := os.MkdirTemp(dir, "helm-home-*")
		if err != nil {
			return "", nil, err
		}
		defer os.RemoveAll(home)
		f.settings = privateSettings(home)
	}
	repositories := ""
	if f.o.Settings != nil {
		repositories = f.settings.RepositoryConfig
	}
	var err error
	if f.base, err = newOriginTransports(repositories); err != nil {
		return "", nil, err
	}
	f.repos = repo.NewFile()
	if repositories != "" {
		if rf, err := repo.LoadFile(repositories); err == nil {
			f.repos = rf
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, err
		}
	}
	for _, e := range f.repos.Repositories {
		f.secrets.AddUser(e.Username, e.Password)
	}
	// The indexes go into a cache of the run's own, never the user's.
	cache, err := os.MkdirTemp(dir, "helm-cache-*")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(cache)
	f.cache = cache
	f.indexed = map[string]bool{}

	// The copy: the chart directory as it is, or the packaged chart
	// expanded; removed when a dependency cannot be fetched.
	copyDir, err := os.MkdirTemp(dir, "chart-*")
	if err != nil {
		return "", nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(copyDir)
		}
	}()
	var copied string
	if st, err := os.Stat(f.chart); err == nil && st.IsDir() {
		abs, err := filepath.Abs(f.chart)
		if err != nil {
			return "", nil, err
		}
		copied = filepath.Join(copyDir, filepath.Base(abs))
		if err := copyTree(abs, copied); err != nil {
			return "", nil, fmt.Errorf("copying chart %s: %w", f.chart, err)
		}
	} else {
		if err := chartutil.ExpandFile(copyDir, f.chart); err != nil {
			return "", nil, fmt.Errorf("expanding chart %s: %w", f.chart, err)
		}
		copied = filepath.Join(copyDir, ch.Name())
	}
	if err := os.MkdirAll(filepath.Join(copied, "charts"), 0o755); err != nil {
		return "", nil, err
	}
	localBase := f.chart
	if st, err := os.Stat(f.chart); err != nil || !st.IsDir() {
		localBase = copied
	}

	locked := map[string]*chart.Dependency{}
	if f.inStep(ch) {
		for _, d := range ch.Lock.Dependencies {
			if d != nil {
				locked[d.Name] = d
			}
		}
	}
	var fetched []FetchedDependency
	for i, d := range missing {
		fd, err := f.fetch(d, locked[d.Name], localBase, filepath.Join(dir, fmt.Sprintf("dependency-%d", i)), filepath.Join(copied, "charts"))
		if err != nil {
			return "", nil, err
		}
		fetched = append(fetched, *fd)
	}
	done = true
	return copied, fetched, nil
}

// inStep says whether the chart's lock file is in step with its
// dependencies, as `helm dependency build` checks it: the lock's digest
// is that of the dependencies (repository names of the repositories file
// resolved to their URLs) with the lock's. (The digest of Helm 2's
// requirements.lock, which Helm 3 also accepts for an apiVersion v1 chart,
// is not recognised: such a chart gets the versions of its constraints.)
func (f *depFetcher) inStep(ch *chart.Chart) bool {
	return ch.Lock != nil && f.digest(ch) == ch.Lock.Digest
}

// digest is the digest of a lock of ch in step, as Helm computes it
// (its internal resolver.HashReq).
func (f *depFetcher) digest(ch *chart.Chart) string {
	req := make([]*chart.Dependency, len(ch.Metadata.Dependencies))
	for i, d := range ch.Metadata.Dependencies {
		if d == nil {
			continue
		}
		c := *d
		if u, ok := f.repoByName(d.Repository); ok {
			c.Repository = u.URL
		}
		req[i] = &c
	}
	var lock []*chart.Dependency
	if ch.Lock != nil {
		lock = ch.Lock.Dependencies
	}
	data, err := json.Marshal([2][]*chart.Dependency{req, lock})
	if err != nil {
		return ""
	}
	sum, err := provenance.Digest(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	return "sha256:" + sum
}

// repoByName returns the entry of the repositories file that a
// repository "@name" or "alias:name" names.
func (f *depFetcher) repoByName(r string) (*repo.Entry, bool) {
	name, ok := strings.CutPrefix(r, "@")
	if !ok {
		if name, ok = strings.CutPrefix(r, "alias:"); !ok {
			return nil, false
		}
	}
	for _, e := range f.repos.Repositories {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// fetch fetches the dependency d (at the version of lock, when not nil)
// into charts with Helm's downloader manager, run on a chart of its own in
// work that declares only it.
func (f *depFetcher) fetch(d, lock *chart.Dependency, localBase, work, charts string) (*FetchedDependency, error) {
	version, repository := d.Version, d.Repository
	if lock != nil {
		version, repository = lock.Version, lock.Repository
	}
	shownRepo := redact.URLs(d.Repository)
	fail := func(from string, err error) error {
		// The limits' and the stall's own errors say it all.
		var tooLarge *TooLargeError
		var stalled *stall.Error
		switch {
		case errors.As(err, &tooLarge):
			err = tooLarge
		case errors.As(err, &stalled):
			err = stalled
		}
		return &DependencyError{Chart: f.chart, Name: d.Name, Version: version, Repository: shownRepo, From: redact.URLs(from), Err: err}
	}
	if repository == "" {
		return nil, fail("", errors.New("it is not in the charts/ directory, and it names no repository to fetch it from"))
	}
	from := repository
	var entry *repo.Entry
	switch {
	case strings.HasPrefix(repository, "@"), strings.HasPrefix(repository, "alias:"):
		e, ok := f.repoByName(repository)
		if !ok {
			if f.o.Settings == nil {
				return nil, fail("", errors.New("the repository is a name of the Helm repositories file, and none is read"))
			}
			return nil, fail("", fmt.Errorf("no repository of that name in the Helm repositories file %s", f.settings.RepositoryConfig))
		}
		entry, from = e, e.URL
	case strings.HasPrefix(repository, "file://"):
		p := strings.TrimPrefix(repository, "file://")
		if !filepath.IsAbs(p) {
			p = filepath.Join(localBase, p)
		}
		from = "file://" + p
	case registry.IsOCI(repository), strings.HasPrefix(repository, "https://"), strings.HasPrefix(repository, "http://"):
	default:
		return nil, fail("", errors.New("the repository is not a URL (https://…, oci://…, file://…) nor a name of the Helm repositories file (@name)"))
	}
	if entry == nil && !strings.HasPrefix(from, "file://") {
		for _, e := range f.repos.Repositories {
			if strings.TrimSuffix(e.URL, "/") == strings.TrimSuffix(from, "/") {
				entry = e
				break
			}
		}
	}
	// Credentials in the repository URL go with Helm's entry, to the
	// repository's origin only.
	clean, user, pass := redact.Strip(from)
	f.secrets.AddUser(user, pass)
	from = clean
	mirrored := from
	if m, ok := mirrorURL(f.o.SourceMirrors, from); ok {
		mirrored = m
	}
	shownFrom := ""
	if mirrored != repository {
		shownFrom = mirrored
	}
	switch {
	case mirrored != from:
		// A mirror's requests carry no credentials of the repository.
		entry = nil
	case entry == nil && pass != "":
		entry = &repo.Entry{Name: managerKeyPrefix + keyOf(from), URL: from, Username: user, Password: pass}
	}

	// Each dependency has its own chart budget, each index download its
	// own index budget.
	chartBudget := &budget{limit: f.o.MaxChartSize}
	guard := func(b *budget, index bool) *fetchTransport {
		return &fetchTransport{
			inner:  stall.Transport{Inner: f.base, Window: f.o.StallTimeout, Sentinel: ErrStalled},
			budget: b, index: index, ctx: f.ctx, secrets: f.secrets,
		}
	}
	rt := &indexSplit{chart: guard(chartBudget, false), index: func() http.RoundTripper { return guard(&budget{limit: f.o.MaxIndexSize}, true) }}
	getters := getter.All(f.settings, getter.WithTransport(shell(rt)), getter.WithTimeout(0))
	ropts := []registry.ClientOption{
		registry.ClientOptHTTPClient(&http.Client{Transport: guard(chartBudget, false)}),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(f.settings.RegistryConfig),
		registry.ClientOptEnableCache(true),
	}
	if f.o.PlainHTTP {
		ropts = append(ropts, registry.ClientOptPlainHTTP())
	}
	rc, err := registry.NewClient(ropts...)
	if err != nil {
		return nil, fail(shownFrom, err)
	}

	// A chart repository's index is read first, so that a repository that
	// does not serve one is told as such (Helm's manager only notes it).
	// The manager then finds the repository in a repositories file of its
	// own, alone, with its index in the cache: the entry of the user's
	// file (or of a URL with credentials), or one named by the URL's hash
	// as the manager names a repository it does not know. (A repository
	// it does not know it would read again into the user's cache.)
	dep := &chart.Dependency{Name: d.Name, Version: version, Repository: mirrored}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	repoConfig := filepath.Join(work, "repositories.yaml")
	if !registry.IsOCI(mirrored) && !strings.HasPrefix(mirrored, "file://") {
		e := &repo.Entry{Name: managerKeyPrefix + keyOf(mirrored), URL: mirrored}
		if entry != nil {
			e = entry
		}
		dep.Repository = e.URL
		rf := repo.NewFile()
		rf.Update(e)
		if err := rf.WriteFile(repoConfig, 0o600); err != nil {
			return nil, err
		}
		if !f.indexed[e.Name] {
			r, err := repo.NewChartRepository(e, getters)
			if err != nil {
				return nil, fail(shownFrom, err)
			}
			r.CachePath = f.cache
			if _, err := r.DownloadIndexFile(); err != nil {
				if strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "no API version") {
					// Helm's words for an index.yaml that is HTML (a
					// login page) or other YAML.
					return nil, fail(shownFrom, fmt.Errorf("%s is not a chart repository: its index.yaml is not a repository index (%w)", redact.URLs(mirrored), err))
				}
				return nil, fail(shownFrom, fmt.Errorf("%s is not a chart repository or cannot be reached: %w", redact.URLs(mirrored), err))
			}
			f.indexed[e.Name] = true
		}
	}
	md := chart.Metadata{APIVersion: chart.APIVersionV2, Name: "rehost-dependency", Version: "0.0.0", Dependencies: []*chart.Dependency{dep}}
	data, err := json.Marshal(md) // JSON is YAML
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, "Chart.yaml"), data, 0o644); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	m := &downloader.Manager{
		Out:              &out,
		ChartPath:        work,
		Verify:           downloader.VerifyNever,
		SkipUpdate:       true, // the index was read above
		Getters:          getters,
		RegistryClient:   rc,
		RepositoryConfig: repoConfig,
		RepositoryCache:  f.cache,
	}
	if err := m.Update(); err != nil {
		return nil, fail(shownFrom, err)
	}
	files, err := filepath.Glob(filepath.Join(work, "charts", "*.tgz"))
	if err != nil || len(files) != 1 {
		// Helm's manager notes a download that is not a chart and
		// skips it: "Could not verify DIR/x.tgz for moving: file
		// 'DIR/x.tgz' does not appear to be …; got 'text/html' (Skipping)".
		note := "Helm's downloader saved nothing"
		if m := skipped.FindStringSubmatch(out.String()); m != nil {
			note = filepath.Base(m[1]) + ": " + strings.Replace(m[2], "file '"+m[1]+"' ", "it ", 1)
		}
		return nil, fail(shownFrom, fmt.Errorf("what it served is not a chart: %s", note))
	}
	got, err := loader.Load(files[0])
	if err != nil {
		return nil, fail(shownFrom, fmt.Errorf("what it served is not a chart: %w", err))
	}
	if got.Name() != d.Name {
		return nil, fail(shownFrom, fmt.Errorf("it served chart %s %s, not %s", got.Name(), got.Metadata.Version, d.Name))
	}
	if c, err := semver.NewConstraint(d.Version); err == nil && d.Version != "" {
		if v, err := semver.NewVersion(got.Metadata.Version); err != nil || !c.Check(v) {
			return nil, fail(shownFrom, fmt.Errorf("it served version %s of %s, which the constraint %s does not allow", got.Metadata.Version, d.Name, d.Version))
		}
	}
	dest := filepath.Join(charts, filepath.Base(files[0]))
	if err := os.Rename(files[0], dest); err != nil {
		return nil, err
	}
	return &FetchedDependency{
		Name: d.Name, Version: d.Version, Repository: shownRepo, From: redact.URLs(mirrored), Locked: lock != nil,
		Fetched: got.Metadata.Version, File: dest,
	}, nil
}

// skipped is the manager's note of a download that is not a chart.
var skipped = regexp.MustCompile(`Could not verify (\S+) for moving: (.*?)\s*\(Skipping\)`)

// managerKeyPrefix and keyOf name a repository that is not in the Helm
// repositories file as Helm's downloader manager does, so that it finds
// the index read before it runs.
const managerKeyPrefix = "helm-manager-"

func keyOf(u string) string {
	s := sha256.Sum256([]byte(u))
	return hex.EncodeToString(s[:])
}

// indexSplit sends the requests of a repository's index.yaml (and their
// redirects) through a transport of their own, with a fresh budget each
// (Helm's manager may read an index twice), and the others through the
// dependency's.
type indexSplit struct {
	chart http.RoundTripper
	index func() http.RoundTripper
}

func (s *indexSplit) RoundTrip(req *http.Request) (*http.Response, error) {
	if path.Base(first(req).URL.Path) == "index.yaml" {
		return s.index().RoundTrip(req)
	}
	return s.chart.RoundTrip(req)
}

// copyTree copies the chart directory src to dst, following the symbolic
// links Load accepted (inside the chart).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		st, err := os.Stat(p) // follows links
		if err != nil {
			return err
		}
		switch {
		case st.IsDir() && e.Type()&fs.ModeSymlink != 0:
			return copyTree(p, target)
		case st.IsDir():
			return os.MkdirAll(target, 0o755)
		case !st.Mode().IsRegular():
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, st.Mode().Perm()|0o600)
	})
}
