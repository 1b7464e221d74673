package rewrite

import (
	"errors"
	"strings"
	"testing"
)

func TestMapChart(t *testing.T) {
	prefixed := Config{Registry: "sea.hub:5000/mirror"}
	tests := []struct {
		name   string
		config Config
		form   ChartForm
		in     string
		target string
		action Action
		chart  string // Name, for ChartOCI
	}{
		// Flux HelmRepository: any repository becomes the target's OCI
		// repository of charts.
		{name: "https repository", form: ChartRepoOCI, in: "https://stefanprodan.github.io/podinfo", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "https repository with a path and a trailing slash", form: ChartRepoOCI, in: "https://charts.bitnami.com/bitnami/", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "http repository with a port", form: ChartRepoOCI, in: "http://chartmuseum.local:8080/api/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "oci repository", form: ChartRepoOCI, in: "oci://ghcr.io/stefanprodan/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "oci registry root", form: ChartRepoOCI, in: "oci://ghcr.io", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "oci repository with a port and a deep path", form: ChartRepoOCI, in: "oci://registry.example.com:8443/team/helm/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "scheme in upper case", form: ChartRepoOCI, in: "HTTPS://Charts.Example.com/x", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "IPv6 host", form: ChartRepoOCI, in: "https://[fd00::1]:8443/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "registry with a prefix", config: prefixed, form: ChartRepoOCI, in: "https://charts.bitnami.com/bitnami", target: "oci://sea.hub:5000/mirror/charts", action: Rewritten},
		{name: "charts path", config: Config{ChartsPath: "helm/charts"}, form: ChartRepoOCI, in: "oci://ghcr.io/x", target: "oci://sea.hub:5000/helm/charts", action: Rewritten},
		{name: "nest style changes nothing", config: Config{PathStyle: PathStyleNest}, form: ChartRepoOCI, in: "oci://ghcr.io/x", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "in target", form: ChartRepoOCI, in: "oci://sea.hub:5000/charts", target: "oci://sea.hub:5000/charts", action: InTarget},
		{name: "in target, other path", form: ChartRepoOCI, in: "oci://sea.hub:5000/other", target: "oci://sea.hub:5000/other", action: InTarget},
		{name: "in target, host in upper case", form: ChartRepoOCI, in: "oci://SEA.HUB:5000/charts", target: "oci://SEA.HUB:5000/charts", action: InTarget},
		{name: "in target with a prefix", config: prefixed, form: ChartRepoOCI, in: "oci://sea.hub:5000/mirror/charts", target: "oci://sea.hub:5000/mirror/charts", action: InTarget},
		{name: "same host, other port", form: ChartRepoOCI, in: "oci://sea.hub:5001/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "excluded host", config: Config{Exclude: []string{"charts.internal.example"}}, form: ChartRepoOCI, in: "https://charts.internal.example/stable", target: "https://charts.internal.example/stable", action: Excluded},
		{name: "excluded host with port", config: Config{Exclude: []string{"harbor.local:8443"}}, form: ChartRepoOCI, in: "oci://harbor.local:8443/charts", target: "oci://harbor.local:8443/charts", action: Excluded},
		{name: "excluded host, other port", config: Config{Exclude: []string{"harbor.local:8443"}}, form: ChartRepoOCI, in: "oci://harbor.local/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "excluded repository prefix", config: Config{Exclude: []string{"ghcr.io/stefanprodan"}}, form: ChartRepoOCI, in: "oci://ghcr.io/stefanprodan/charts", target: "oci://ghcr.io/stefanprodan/charts", action: Excluded},
		{name: "repository prefix is component-wise", config: Config{Exclude: []string{"ghcr.io/stefan"}}, form: ChartRepoOCI, in: "oci://ghcr.io/stefanprodan/charts", target: "oci://sea.hub:5000/charts", action: Rewritten},
		{name: "repository prefix matches an https path", config: Config{Exclude: []string{"charts.bitnami.com/bitnami"}}, form: ChartRepoOCI, in: "https://charts.bitnami.com/bitnami", target: "https://charts.bitnami.com/bitnami", action: Excluded},
		{name: "docker.io exclusion matches registry-1.docker.io", config: Config{Exclude: []string{"docker.io"}}, form: ChartRepoOCI, in: "oci://registry-1.docker.io/bitnamicharts", target: "oci://registry-1.docker.io/bitnamicharts", action: Excluded},
		{name: "docker.io namespace exclusion", config: Config{Exclude: []string{"docker.io/bitnamicharts"}}, form: ChartRepoOCI, in: "oci://registry-1.docker.io/bitnamicharts", target: "oci://registry-1.docker.io/bitnamicharts", action: Excluded},
		{name: "image exclusion of another host", config: Config{Exclude: []string{"quay.io"}}, form: ChartRepoOCI, in: "oci://ghcr.io/x", target: "oci://sea.hub:5000/charts", action: Rewritten},

		// Flux OCIRepository of a chart: the URL names the chart.
		{name: "oci chart", form: ChartOCI, in: "oci://ghcr.io/stefanprodan/charts/podinfo", target: "oci://sea.hub:5000/charts/podinfo", action: Rewritten, chart: "podinfo"},
		{name: "oci chart with a port and a prefix", config: prefixed, form: ChartOCI, in: "oci://registry.example.com:8443/podinfo/", target: "oci://sea.hub:5000/mirror/charts/podinfo", action: Rewritten, chart: "podinfo"},
		{name: "oci chart in target", form: ChartOCI, in: "oci://sea.hub:5000/charts/podinfo", target: "oci://sea.hub:5000/charts/podinfo", action: InTarget, chart: "podinfo"},
		{name: "oci chart excluded by its repository", config: Config{Exclude: []string{"ghcr.io/stefanprodan/charts/podinfo"}}, form: ChartOCI, in: "oci://ghcr.io/stefanprodan/charts/podinfo", target: "oci://ghcr.io/stefanprodan/charts/podinfo", action: Excluded, chart: "podinfo"},

		// Argo CD: the target's repository of charts without a scheme.
		{name: "argo https repository", form: ChartRepoHost, in: "https://argoproj.github.io/argo-helm", target: "sea.hub:5000/charts", action: Rewritten},
		{name: "argo oci repository without scheme", form: ChartRepoHost, in: "registry-1.docker.io/bitnamicharts", target: "sea.hub:5000/charts", action: Rewritten},
		{name: "argo oci repository with scheme", form: ChartRepoHost, in: "oci://ghcr.io/stefanprodan/charts", target: "sea.hub:5000/charts", action: Rewritten},
		{name: "argo host only", form: ChartRepoHost, in: "ghcr.io", target: "sea.hub:5000/charts", action: Rewritten},
		{name: "argo with a prefix and a charts path", config: Config{Registry: "harbor.local:8443/air", ChartsPath: "helm"}, form: ChartRepoHost, in: "https://charts.jetstack.io", target: "harbor.local:8443/air/helm", action: Rewritten},
		{name: "argo in target", form: ChartRepoHost, in: "sea.hub:5000/charts", target: "sea.hub:5000/charts", action: InTarget},
		{name: "argo excluded without scheme", config: Config{Exclude: []string{"registry-1.docker.io"}}, form: ChartRepoHost, in: "registry-1.docker.io/bitnamicharts", target: "registry-1.docker.io/bitnamicharts", action: Excluded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMapper(tt.config)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.MapChart(tt.in, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			if got.Source != tt.in || got.Target != tt.target || got.Action != tt.action || got.Name != tt.chart {
				t.Errorf("MapChart(%q, %s) = %+v, want target %q, action %s, name %q", tt.in, tt.form, got, tt.target, tt.action, tt.chart)
			}
		})
	}
}

// TestMapChartIdempotent: the target of every form maps to itself.
func TestMapChartIdempotent(t *testing.T) {
	for _, c := range []Config{{}, {Registry: "harbor.local:8443/air", ChartsPath: "helm/charts"}} {
		m, err := NewMapper(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []ChartForm{ChartRepoOCI, ChartOCI, ChartRepoHost} {
			first, err := m.MapChart("oci://ghcr.io/stefanprodan/charts/podinfo", form)
			if err != nil || first.Action != Rewritten {
				t.Fatalf("%s: %+v, %v", form, first, err)
			}
			again, err := m.MapChart(first.Target, form)
			if err != nil || again.Action != InTarget || again.Target != first.Target {
				t.Errorf("%s: mapping the target %q again: %+v, %v; want it in the target, unchanged", form, first.Target, again, err)
			}
		}
	}
}

func TestMapChartInvalid(t *testing.T) {
	tests := []struct {
		form ChartForm
		in   string
		want string
	}{
		{ChartRepoOCI, "", "empty"},
		{ChartRepoOCI, "ghcr.io/stefanprodan/charts", "want an oci:// or https:// URL"},
		{ChartRepoOCI, "git://github.com/x/y", "scheme git: want oci:// or https:// or http://"},
		{ChartRepoOCI, "s3://bucket/charts", "scheme s3"},
		{ChartRepoOCI, "https:///charts", "no host"},
		{ChartRepoOCI, "oci://bad_host!/x", "is not a domain name"},
		{ChartRepoOCI, "oci://${REGISTRY}/charts", "a template or a placeholder"},
		{ChartOCI, "https://ghcr.io/x/podinfo", "scheme https: want oci://"},
		{ChartOCI, "oci://ghcr.io", "names no chart"},
		{ChartOCI, "oci://ghcr.io/x/PodInfo", "cannot be a repository of the target"},
		{ChartRepoHost, "{{.repoURL}}", "a template or a placeholder"},
		{ChartRepoHost, "/charts", "no host"},
	}
	m, err := NewMapper(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, err := m.MapChart(tt.in, tt.form)
		var ce *InvalidChartSourceError
		if !errors.As(err, &ce) || ce.Value != tt.in || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("MapChart(%q, %s) error = %v, want an *InvalidChartSourceError containing %q", tt.in, tt.form, err, tt.want)
		}
	}
}

func TestConfigChartsPath(t *testing.T) {
	for _, tt := range []struct {
		in, want, wantErr string
	}{
		{in: "kind: RewriteConfig\n", want: "sea.hub:5000/charts"},
		{in: "chartsPath: helm/charts\n", want: "sea.hub:5000/helm/charts"},
		{in: "registry: r.io/p\nchartsPath: c\n", want: "r.io/p/c"},
		{in: "chartsPath: /charts\n", wantErr: "config: chartsPath: \"/charts\": want a repository path without leading or trailing slash"},
		{in: "chartsPath: Charts\n", wantErr: "config: chartsPath: \"Charts\": repository path component"},
		{in: "chartsPath: a//b\n", wantErr: "config: chartsPath"},
	} {
		c, err := LoadConfig([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("LoadConfig(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMapper(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.ChartsRepository(); got != tt.want {
			t.Errorf("LoadConfig(%q): ChartsRepository() = %q, want %q", tt.in, got, tt.want)
		}
	}
}
