package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Chart dependencies: a chart whose dependencies are not all in its
// charts/ directory has them fetched by rehost-helm dependencies into a
// copy of the chart in the command's temporary directory (the user's
// chart is never written), once per run; the copy is rendered, relocated
// and pushed in its place, and messages name the chart as given.

// withDependencies returns the chart to use for the chart at path: path
// itself when it declares no dependency or --no-fetch-dependencies is
// given (rendering then fails as Helm does when one is missing), else
// what rehost-helm dependencies made of it.
func (c *chartSource) withDependencies(path string) (string, error) {
	if c.noFetchDeps {
		return path, nil
	}
	if p, ok := c.vendored[path]; ok {
		return p, nil
	}
	if !mayMissDependencies(path) {
		return path, nil
	}
	if d := c.stallTimeout(); d <= 0 {
		return "", fmt.Errorf("--stall-timeout %s: want a positive duration, like 2m", d)
	}
	dest, err := c.tempDir()
	if err != nil {
		return "", err
	}
	tmp, err := c.tempDir()
	if err != nil {
		return "", err
	}
	args := c.fetchArgs("dependencies", dest)
	hc, err := c.helmClient()
	if err != nil {
		return "", err
	}
	d, err := hc.Dependencies(append(args, "--", path), tmp)
	if err != nil {
		return "", helperError("", err)
	}
	if c.vendored == nil {
		c.vendored, c.copies = map[string]string{}, map[string]string{}
	}
	c.vendored[path] = d.Path
	if d.Path != path {
		c.copies[d.Path] = path
		for _, f := range d.Fetched {
			how := "its constraint " + f.Version
			if f.Locked {
				how = "Chart.lock"
			}
			from := ""
			if f.From != f.Repository {
				from = " (read from " + f.From + ")"
			}
			fmt.Fprintf(c.stderr(), "rehost: chart %s: fetched dependency %s %s from %s%s, by %s\n", c.show(path), f.Name, f.Fetched, f.Repository, from, how)
		}
	}
	return d.Path, nil
}

// redact keeps credentials out of the helper's messages, and names the
// charts as the user gave them: a copy with its dependencies by the
// chart's path, a fetched chart by its reference.
func (c *chartSource) redact(s string) string {
	s = c.secrets.String(s)
	for cp, orig := range c.copies {
		s = strings.ReplaceAll(s, cp, c.show(orig))
	}
	return s
}

// mayMissDependencies says whether the chart at path (a directory or a
// packaged chart) declares dependencies (Chart.yaml's, or an apiVersion v1
// chart's requirements.yaml) that are not seemingly in its charts/
// (vendored). When it cannot tell, it says yes, and rehost-helm finds out.
func mayMissDependencies(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return true
	}
	if st.IsDir() {
		for _, name := range []string{"Chart.yaml", "requirements.yaml"} {
			raw, err := os.ReadFile(filepath.Join(path, name))
			if err != nil {
				continue
			}
			deps, ok := dependencyNames(raw)
			if !ok || !vendored(path, deps) {
				return true
			}
		}
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return true
	}
	// The whole archive is read (its headers: tar skips the contents),
	// up to Helm's bound on a chart's size; each metadata file bounded.
	const maxMeta = 1 << 20
	limited := &io.LimitedReader{R: gz, N: 100 << 20}
	tr := tar.NewReader(limited)
	var (
		names    []string
		subchart = map[string]bool{} // charts/NAME/Chart.yaml, charts/NAME-VERSION.tgz
		tgzs     []string
	)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || limited.N <= 0 {
			return true
		}
		parts := strings.Split(strings.TrimPrefix(h.Name, "./"), "/")
		switch {
		case len(parts) == 2 && (parts[1] == "Chart.yaml" || parts[1] == "requirements.yaml"):
			raw, err := io.ReadAll(io.LimitReader(tr, maxMeta))
			if err != nil {
				return true
			}
			deps, ok := dependencyNames(raw)
			if !ok {
				return true
			}
			names = append(names, deps...)
		case len(parts) == 4 && parts[1] == "charts" && parts[3] == "Chart.yaml":
			subchart[parts[2]] = true
		case len(parts) == 3 && parts[1] == "charts" && strings.HasSuffix(parts[2], ".tgz"):
			tgzs = append(tgzs, parts[2])
		}
	}
	for _, n := range names {
		if subchart[n] {
			continue
		}
		found := false
		for _, t := range tgzs {
			if strings.HasPrefix(t, n+"-") {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// dependencyNames returns the names of the dependencies a Chart.yaml or
// requirements.yaml lists; ok is false when it cannot be read (rehost-helm
// then says why).
func dependencyNames(raw []byte) (names []string, ok bool) {
	var meta struct {
		Dependencies []struct {
			Name string `yaml:"name"`
		} `yaml:"dependencies"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, false
	}
	for _, d := range meta.Dependencies {
		names = append(names, d.Name)
	}
	return names, true
}

// vendored says whether each dependency seems to be in the charts/
// directory of the chart at dir: charts/NAME/Chart.yaml or
// charts/NAME-*.tgz, as helm dependency build leaves them. It is a quick
// check that spares a vendored chart a run of rehost-helm: a chart that
// passes it with a dependency missing fails to render as Helm fails.
func vendored(dir string, names []string) bool {
	for _, n := range names {
		if n == "" {
			return false
		}
		if _, err := os.Stat(filepath.Join(dir, "charts", n, "Chart.yaml")); err == nil {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "charts", globEscape(n)+"-*.tgz")); len(m) > 0 {
			continue
		}
		return false
	}
	return true
}

// globEscape escapes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}
