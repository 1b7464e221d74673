package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rehost/rehost/cmd/rehost/internal/helmexec"
	"github.com/rehost/rehost/internal/bytesize"
	"github.com/rehost/rehost/internal/redact"
	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rendered"
	"github.com/spf13/cobra"
)

// chartSource holds the chart reference flags of a command and the charts
// it fetched. A chart reference is an argument where a chart path is
// accepted that names a chart to fetch: oci://host/path/name (with
// --version, or a tag), an http(s) URL of a packaged chart, NAME (or
// ALIAS/NAME) with --repo URL, or REPO/NAME of a repository added with
// `helm repo add` (with --helm-user-config). An existing local path is
// always a path, as with Helm. rehost-helm fetches each with Helm's getters
// into a temporary directory, removed when the command ends.
type chartSource struct {
	version       string
	repo          string
	plainHTTP     bool
	userConfig    bool
	maxChartSize  int64
	maxIndexSize  int64
	noFetchDeps   bool     // --no-fetch-dependencies
	sourceMirrors []string // PREFIX=MIRROR, for references and dependencies (mirror's --source-mirror)

	cmd   *cobra.Command
	dir   string            // the fetched and packaged charts, under os.TempDir
	n     int               // directories made in dir
	shown map[string]string // fetched file -> what the user gave, for messages
	found []chartInput      // the chart inputs read, in order

	vendored map[string]string // chart path -> the chart with its dependencies (dependencies.go)
	copies   map[string]string // such a copy -> the chart path

	secrets redact.Secrets // credentials of the references, kept out of messages

	// Signals, while dir exists (helper.go).
	mu        sync.Mutex
	helper    *os.Process // the rehost-helm running
	signalled os.Signal   // the signal that stopped the command
	signals   chan os.Signal
	unwatched chan struct{}
	exitFunc  func(int) // os.Exit, unless a test says otherwise
}

// chartInput is a chart the command read: its local path and what it is
// called in reports (the path, or the URL a reference resolved to).
type chartInput struct {
	path, source string
}

func (c *chartSource) register(cmd *cobra.Command) {
	c.cmd = cmd
	fs := cmd.Flags()
	fs.StringVar(&c.version, "version", "", "chart references: the chart `VERSION` or a SemVer constraint (default: the latest)")
	fs.StringVar(&c.repo, "repo", "", "chart references: a chart repository `URL` (https://user:password@host/… sends the credentials to that origin only, and never shows them); a chart argument that is not a local path is a chart's name in it")
	fs.BoolVar(&c.plainHTTP, "plain-http", false, "chart references and dependencies: reach oci:// registries over plain HTTP")
	fs.BoolVar(&c.userConfig, "helm-user-config", false, "chart references and dependencies: use your Helm configuration and cache (repositories of helm repo add, registry logins) instead of private, empty ones")
	c.maxChartSize, c.maxIndexSize = rendered.DefaultMaxChartSize, rendered.DefaultMaxIndexSize
	fs.Var(bytesize.Value{N: &c.maxChartSize}, "max-chart-size", "chart references and dependencies: refuse a chart whose downloads (the .tgz and its .prov, or an OCI chart's manifest and blobs, together) are larger than this")
	fs.Var(bytesize.Value{N: &c.maxIndexSize}, "max-index-size", "chart references and dependencies: refuse a chart repository whose index.yaml is larger than this (Helm parses an index at about 30 times its size in memory)")
	fs.BoolVar(&c.noFetchDeps, "no-fetch-dependencies", false, "charts: fail on a chart whose dependencies are not all in its charts/ directory, instead of fetching them into a private copy of it (as helm dependency build would, the chart left as it is)")
	// mirror has its own, which bounds its registry requests too.
	if fs.Lookup("stall-timeout") == nil {
		fs.Duration("stall-timeout", rendered.DefaultStallTimeout, "chart references and dependencies: give up on a download that moves less than 1 KiB/s over this long (waiting for an answer included)")
	}
}

// stallTimeout is the value of --stall-timeout.
func (c *chartSource) stallTimeout() time.Duration {
	if c.cmd == nil {
		return rendered.DefaultStallTimeout
	}
	d, err := c.cmd.Flags().GetDuration("stall-timeout")
	if err != nil {
		return rendered.DefaultStallTimeout
	}
	return d
}

// changed lists the chart reference flags given on the command line.
func (c *chartSource) changed() []string {
	var set []string
	if c.cmd == nil {
		return nil
	}
	for _, name := range []string{"version", "repo", "plain-http", "helm-user-config", "max-chart-size", "max-index-size"} {
		if c.cmd.Flags().Changed(name) {
			set = append(set, "--"+name)
		}
	}
	return set
}

// unused lists the chart reference flags given that apply to none of the
// local charts: those that also bound the fetching of dependencies
// (--plain-http, --helm-user-config, --max-chart-size, --max-index-size)
// apply when one of them declares dependencies.
func (c *chartSource) unused(charts []string) []string {
	set := c.changed()
	if c.noFetchDeps {
		return set
	}
	for _, ch := range charts {
		if mayMissDependencies(ch) {
			var keep []string
			for _, f := range set {
				if f == "--version" || f == "--repo" {
					keep = append(keep, f)
				}
			}
			return keep
		}
	}
	return set
}

// isRef says whether arg names a chart to fetch rather than a local path.
func (c *chartSource) isRef(arg string) bool {
	switch {
	case arg == "-":
		return false
	case strings.HasPrefix(arg, "oci://"), strings.HasPrefix(arg, "https://"), strings.HasPrefix(arg, "http://"):
		return true
	}
	if _, err := os.Stat(arg); err == nil {
		return false // a local path first, as with Helm
	}
	if c.repo != "" {
		return !filepath.IsAbs(arg) && !strings.HasPrefix(arg, ".")
	}
	return c.userConfig && repoName(arg)
}

// repoName says whether arg has the form REPO/NAME.
func repoName(arg string) bool {
	repo, name, ok := strings.Cut(arg, "/")
	return ok && repo != "" && name != "" && !strings.Contains(name, "/") && !strings.HasPrefix(repo, ".") && !strings.ContainsAny(arg, `\:`)
}

// expand turns command-line arguments into inputs: chart references are
// fetched, the rest expanded as manifest.ExpandPaths does (which fails
// only when nothing at all is found).
func (c *chartSource) expand(args []string, s streams) (*manifest.Expanded, error) {
	if len(args) == 0 {
		args = []string{"-"} // no PATH: standard input
	}
	var (
		out   manifest.Expanded
		local []string
		refs  int
	)
	for _, a := range args {
		if !c.isRef(a) {
			e, err := manifest.Expand([]string{a})
			if errors.Is(err, fs.ErrNotExist) && repoName(a) {
				return nil, fmt.Errorf("%w (a chart in a repository: --repo URL, or --helm-user-config for the repositories of helm repo add)", err)
			}
			if err != nil && !errors.Is(err, manifest.ErrNoInputs) {
				return nil, err
			}
			if e != nil {
				out.Inputs = append(out.Inputs, e.Inputs...)
				out.Others = append(out.Others, e.Others...)
				out.Links = append(out.Links, e.Links...)
			}
			local = append(local, a)
			continue
		}
		refs++
		f, err := c.fetch(a)
		if err != nil {
			return nil, err
		}
		out.Inputs = append(out.Inputs, manifest.Input{Path: f.Path, Rel: filepath.Base(f.Path), Chart: true})
	}
	var charts []string
	for _, in := range out.Inputs {
		if in.Chart {
			charts = append(charts, in.Path)
		}
	}
	if set := c.unused(charts); len(set) > 0 && refs == 0 {
		fmt.Fprintf(s.err, "rehost: warning: %s only apply to chart references (oci://…, NAME with --repo), and no input is one\n", strings.Join(set, ", "))
	}
	if len(out.Inputs) == 0 && len(local) > 0 {
		_, err := manifest.Expand(local) // the error naming every path
		return nil, err
	}
	warnLinks(out.Links, s)
	return &out, nil
}

// local returns the local path of a chart argument, fetching it when it is
// a reference.
func (c *chartSource) local(arg string) (string, error) {
	if !c.isRef(arg) {
		if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) && repoName(arg) {
			return "", fmt.Errorf("%w (a chart in a repository: --repo URL, or --helm-user-config for the repositories of helm repo add)", err)
		}
		if set := c.unused([]string{arg}); len(set) > 0 {
			fmt.Fprintf(c.cmd.ErrOrStderr(), "rehost: warning: %s only apply to chart references (oci://…, NAME with --repo), and %s is a local path\n", strings.Join(set, ", "), arg)
		}
		return arg, nil
	}
	f, err := c.fetch(arg)
	if err != nil {
		return "", err
	}
	return f.Path, nil
}

// tempDir returns a new directory under the command's temporary
// directory, which SIGINT and SIGTERM remove too (watch).
func (c *chartSource) tempDir() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "rehost-charts-*")
		if err != nil {
			return "", err
		}
		c.dir = dir
		c.watch()
	}
	c.n++
	d := filepath.Join(c.dir, strconv.Itoa(c.n))
	return d, os.Mkdir(d, 0o700)
}

// fetch runs rehost-helm pull on a reference.
func (c *chartSource) fetch(ref string) (*rendered.ChartFile, error) {
	if d := c.stallTimeout(); d <= 0 {
		return nil, fmt.Errorf("--stall-timeout %s: want a positive duration, like 2m", d)
	}
	dest, err := c.tempDir()
	if err != nil {
		return nil, err
	}
	// The helper's own temporary directories (a private Helm home, the
	// repository index) go into the command's: removed with it, even if
	// the helper is killed.
	tmp, err := c.tempDir()
	if err != nil {
		return nil, err
	}
	var own []string
	if c.version != "" {
		own = append(own, "--version="+c.version)
	}
	if c.repo != "" {
		own = append(own, "--repo="+c.repo)
	}
	args := c.fetchArgs("pull", dest, own...)
	// Credentials in the references are the helper's to send, to their
	// origin only; no message or output of rehost shows them.
	for _, u := range []string{c.repo, ref} {
		_, user, password := redact.Strip(u)
		c.secrets.AddUser(user, password)
	}
	what := redact.URLs(ref)
	if c.version != "" {
		what += " --version " + c.version
	}
	if c.repo != "" {
		what += " --repo " + redact.URLs(c.repo)
	}
	hc, err := c.helmClient()
	if err != nil {
		return nil, err
	}
	f, err := hc.ChartFile(append(args, "--", ref), tmp)
	var failed *helmexec.FailedError
	var output *helmexec.OutputError
	var format *helmexec.FormatError
	switch {
	case err == nil:
	case errors.As(err, &failed) && failed.Failure.PlainHTTP && !c.plainHTTP:
		return nil, fmt.Errorf("fetching %w (a registry over plain HTTP: --plain-http)", err)
	case errors.As(err, &output):
		output.Helper = helmHelper
		return nil, helperError("fetching chart "+what+": ", output)
	case errors.As(err, &format):
		format.Helper = helmHelper
		return nil, helperError("fetching chart "+what+": ", format)
	default:
		return nil, helperError("fetching ", err)
	}
	if c.shown == nil {
		c.shown = map[string]string{}
	}
	c.shown[f.Path] = c.secrets.String(f.URL)
	if f.URL == "" {
		c.shown[f.Path] = redact.URLs(ref)
	}
	return f, nil
}

// show is what a chart path is called in messages: the reference it was
// fetched from, or the path itself.
func (c *chartSource) show(path string) string {
	if orig, ok := c.copies[path]; ok {
		path = orig
	}
	if s, ok := c.shown[path]; ok {
		return s
	}
	return path
}

// cleanup removes the fetched charts, and gives SIGINT and SIGTERM back.
func (c *chartSource) cleanup() {
	c.unwatch()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir != "" {
		os.RemoveAll(c.dir)
		c.dir = ""
	}
}

// valuesStdin is standard input when a values file is "-", else nil.
func (hf *helmFlags) valuesStdin(s streams) io.Reader {
	for _, v := range hf.valueFiles {
		if strings.TrimSpace(v) == "-" {
			return s.in
		}
	}
	return nil
}

// fetchArgs are the arguments of the helper's command that downloads
// charts into dest (pull, dependencies): the limits, the command's own
// arguments (extra), plain HTTP, the user's Helm configuration and the
// source mirrors.
func (c *chartSource) fetchArgs(command, dest string, extra ...string) []string {
	args := []string{command, "--dest=" + dest, fmt.Sprintf("--max-chart-size=%d", c.maxChartSize), fmt.Sprintf("--max-index-size=%d", c.maxIndexSize), "--stall-timeout=" + c.stallTimeout().String()}
	args = append(args, extra...)
	if c.plainHTTP {
		args = append(args, "--plain-http")
	}
	if c.userConfig {
		args = append(args, "--helm-user-config")
	}
	for _, m := range c.sourceMirrors {
		args = append(args, "--source-mirror="+m)
	}
	return args
}
