package rendered

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// brief is a manifest as the tests compare it: name, first line of
// content, line, hook events.
func brief(ms []Manifest) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		first, _, _ := strings.Cut(m.Content, "\n")
		out[i] = fmt.Sprintf("%s:%d %s", m.Name, m.Line, first)
		if m.IsHook() {
			out[i] += " hook=" + strings.Join(m.Hook, ",")
		}
	}
	return out
}

func TestFromTemplates(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		want     []string
		warnings []string
	}{
		{
			name: "NOTES.txt, partials and empty files dropped",
			files: map[string]string{
				"web/templates/NOTES.txt":               "kind: Pod\nmetadata: {name: notes}",
				"web/charts/db/templates/NOTES.txt":     "kind: Pod",
				"web/templates/_helpers.tpl":            "kind: Pod",
				"web/templates/empty.yaml":              "\n  \n",
				"web/templates/svc.yaml":                "kind: Service\nmetadata: {name: web}",
				"web/charts/db/templates/_partial.yaml": "",
			},
			want: []string{"web/templates/svc.yaml:1 kind: Service"},
		},
		{
			name: "install order by kind, unknown kinds last by kind, stable otherwise",
			files: map[string]string{
				"web/templates/a.yaml": "kind: Deployment\nmetadata: {name: a}\n---\nkind: Widget\n---\nkind: Namespace\n",
				"web/templates/b.yaml": "kind: Deployment\nmetadata: {name: b}\n---\nkind: Gadget\n---\n# only a comment\n",
				"web/templates/c.yaml": "kind: ServiceAccount\n---\nkind: Widget\nmetadata: {name: c}\n",
				"web/templates/d.yaml": "kind: CustomResourceDefinition\n---\nkind: APIService\n---\nkind: PriorityClass\n",
			},
			want: []string{
				"web/templates/d.yaml:5 kind: PriorityClass",
				"web/templates/a.yaml:6 kind: Namespace",
				"web/templates/c.yaml:1 kind: ServiceAccount",
				"web/templates/d.yaml:1 kind: CustomResourceDefinition",
				"web/templates/a.yaml:1 kind: Deployment",
				"web/templates/b.yaml:1 kind: Deployment",
				"web/templates/d.yaml:3 kind: APIService",
				"web/templates/b.yaml:6 # only a comment", // kind "": first of the unknown
				"web/templates/b.yaml:4 kind: Gadget",
				"web/templates/a.yaml:4 kind: Widget",
				"web/templates/c.yaml:3 kind: Widget",
			},
		},
		{
			name: "templates by name, sub-charts' among them",
			files: map[string]string{
				"web/templates/z.yaml":           "kind: ConfigMap\nmetadata: {name: z}",
				"web/charts/db/templates/a.yaml": "kind: ConfigMap\nmetadata: {name: db}",
				"web/templates/a.yaml":           "kind: ConfigMap\nmetadata: {name: a}",
			},
			want: []string{
				"web/charts/db/templates/a.yaml:1 kind: ConfigMap",
				"web/templates/a.yaml:1 kind: ConfigMap",
				"web/templates/z.yaml:1 kind: ConfigMap",
			},
		},
		{
			name: "hooks marked, after the others, sorted by kind",
			files: map[string]string{
				"web/templates/job.yaml": "kind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install, Post-Upgrade\n---\n" +
					"kind: ServiceAccount\nmetadata:\n  annotations: {helm.sh/hook: pre-install}\n",
				"web/templates/test.yaml": "kind: Pod\nmetadata:\n  annotations:\n    \"helm.sh/hook\": test-success\n",
				"web/templates/web.yaml":  "kind: Deployment\nmetadata:\n  annotations: {other: x}\n",
			},
			want: []string{
				"web/templates/web.yaml:1 kind: Deployment",
				"web/templates/job.yaml:6 kind: ServiceAccount hook=pre-install",
				"web/templates/test.yaml:1 kind: Pod hook=test",
				"web/templates/job.yaml:1 kind: Job hook=pre-install,post-upgrade",
			},
		},
		{
			name: "a hook of an unknown event left out, with a warning",
			files: map[string]string{
				"web/templates/hook.yaml": "kind: Deployment\n---\nkind: Job\nmetadata:\n  annotations: {helm.sh/hook: pre-instal}\n",
			},
			want:     []string{"web/templates/hook.yaml:1 kind: Deployment"},
			warnings: []string{`web/templates/hook.yaml:3: skipping unknown hook: "pre-instal" (Helm neither installs nor prints it)`},
		},
		{
			name: "CRDs first, as they are: the chart's, then its subcharts'",
			files: map[string]string{
				"web/templates/a.yaml":               "kind: ConfigMap",
				"web/charts/db/crds/a.yaml":          "kind: CustomResourceDefinition\nmetadata: {name: db}\n",
				"web/crds/b/c.yaml":                  "kind: CustomResourceDefinition\n",
				"web/crds/b-c.yaml":                  "kind: CustomResourceDefinition\n---\nkind: CustomResourceDefinition\n",
				"web/charts/db/charts/x/crds/x.yaml": "kind: CustomResourceDefinition\n",
				"web/charts/api/crds/api.yaml":       "# no document\n",
			},
			want: []string{
				"web/crds/b/c.yaml:1 kind: CustomResourceDefinition",
				"web/crds/b-c.yaml:1 kind: CustomResourceDefinition",
				"web/charts/api/crds/api.yaml:1 # no document",
				"web/charts/db/crds/a.yaml:1 kind: CustomResourceDefinition",
				"web/charts/db/charts/x/crds/x.yaml:1 kind: CustomResourceDefinition",
				"web/templates/a.yaml:1 kind: ConfigMap",
			},
		},
		{
			name: "lines: leading blank lines, separators with comments, documents trimmed",
			files: map[string]string{
				"web/templates/a.yaml": "\n\n# Source comment\nkind: Service\n---   \n\n\nkind: Pod\n--- # next\nkind: Secret\n  \n",
			},
			want: []string{
				"web/templates/a.yaml:9 # next",
				"web/templates/a.yaml:3 # Source comment",
				"web/templates/a.yaml:8 kind: Pod",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromTemplates(Metadata{Name: "web", Version: "1.0.0"}, tt.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := brief(c.Manifests); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("manifests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if !reflect.DeepEqual(c.Warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", c.Warnings, tt.warnings)
			}
			if c.Name != "web" || c.Version != "1.0.0" || c.Format != Format {
				t.Errorf("chart %s %s format %d", c.Name, c.Version, c.Format)
			}
		})
	}
}

// TestFromTemplatesOrder: the caller's Helm's install order replaces
// Helm 3.22's; kinds not in it come last, by kind.
func TestFromTemplatesOrder(t *testing.T) {
	files := map[string]string{"web/templates/a.yaml": "kind: Service\n---\nkind: PriorityClass\n---\nkind: Deployment\n---\nkind: Gadget\n"}
	for _, tt := range []struct {
		order []string
		want  string
	}{
		{nil, "PriorityClass Service Deployment Gadget"},
		{[]string{"Deployment", "Service"}, "Deployment Service Gadget PriorityClass"},
		{InstallOrder()[1:], "Service Deployment Gadget PriorityClass"}, // Helm 3.9's: no PriorityClass
	} {
		c, err := FromTemplates(Metadata{Name: "web"}, files, tt.order...)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range c.Manifests {
			got = append(got, strings.TrimPrefix(m.Content, "kind: "))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("order %q: %q, want %s", tt.order, got, tt.want)
		}
	}
}

// TestFromTemplatesContent: a template's documents are kept trimmed, as
// Helm keeps them; a CRD file byte for byte; Documents then prints what
// `helm template` prints.
func TestFromTemplatesContent(t *testing.T) {
	c, err := FromTemplates(Metadata{Name: "web"}, map[string]string{
		"web/crds/crd.yaml":    "kind: CustomResourceDefinition\n\n",
		"web/templates/a.yaml": "\n---\nkind: Pod\nspec:\n  containers:\n  - image: nginx   \n\n---\nkind: Service\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	if _, err := c.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	want := "---\n# Source: web/crds/crd.yaml\nkind: CustomResourceDefinition\n\n\n" +
		"---\n# Source: web/templates/a.yaml\nkind: Service\n" +
		"---\n# Source: web/templates/a.yaml\nkind: Pod\nspec:\n  containers:\n  - image: nginx\n"
	if got.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", got.String(), want)
	}
}

// TestFromTemplatesHeadErrors: a document Helm could not install (its head
// is not what Helm reads) is an error naming the template and the line.
func TestFromTemplatesHeadErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not a map", "- a\n- b\n", "web/templates/x.yaml:3: YAML parse error (Helm could not install it): want a map, got a list"},
		{"kind not a string", "kind: [Pod]\n", "web/templates/x.yaml:3: YAML parse error (Helm could not install it): kind: want a string, got a list"},
		{"annotation not a string", "kind: Job\nmetadata:\n  annotations:\n    helm.sh/hook-weight: 5\n", "web/templates/x.yaml:6: YAML parse error (Helm could not install it): metadata.annotations.helm.sh/hook-weight: want a string, got \"5\""},
		{"annotations not a map", "kind: Job\nmetadata:\n  annotations: [a]\n", "web/templates/x.yaml:5: YAML parse error (Helm could not install it): metadata.annotations: want a map, got a list"},
		{"metadata not a map", "kind: Job\nmetadata: x\n", "web/templates/x.yaml:4: YAML parse error (Helm could not install it): metadata: want a map, got \"x\""},
		{"name not a string", "kind: Job\nmetadata: {name: {a: b}}\n", "web/templates/x.yaml:4: YAML parse error (Helm could not install it): metadata.name: want a string, got a map"},
		// The line where yaml.v3 found the problem, the end of the
		// stream, as pkg/manifest reports it (yaml.v3 counts a parser
		// error's line from 0: read from 1, it said line 4).
		{"YAML syntax", "kind: Job\nmetadata: [\n", "web/templates/x.yaml:5: YAML parse error (Helm could not install it): did not find expected node content"},
		{"YAML syntax, scanner", "kind: Job\nmetadata: \"x\n", "web/templates/x.yaml:4: YAML parse error (Helm could not install it): found unexpected end of stream"},
		{"YAML syntax, parser", "kind: Job\n- a\n", "web/templates/x.yaml:4: YAML parse error (Helm could not install it): did not find expected key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromTemplates(Metadata{Name: "web"}, map[string]string{"web/templates/x.yaml": "kind: Service\n---\n" + tt.doc})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// What Helm accepts: null values, dates, quoted numbers, no metadata,
	// duplicate keys (the last wins).
	for _, doc := range []string{
		"kind: Job\nmetadata:\n  annotations:\n    a: null\n    b: 2024-01-01\n    c: \"5\"\n",
		"kind: Job\nmetadata: null\n",
		"kind: Job\n",
		"kind: Job\nkind: Pod\n",
		"null\n",
	} {
		if _, err := FromTemplates(Metadata{Name: "web"}, map[string]string{"web/templates/x.yaml": doc}); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
	c, _ := FromTemplates(Metadata{Name: "web"}, map[string]string{"web/templates/x.yaml": "kind: Service\nkind: Job\n---\nkind: Deployment\n"})
	if got := brief(c.Manifests); got[0] != "web/templates/x.yaml:4 kind: Deployment" {
		t.Errorf("a repeated kind: the last one sorts: %q", got)
	}
}

// TestFromTemplatesImages: the annotation images of the chart and of the
// subcharts meta gives, conditions evaluated on Values.
func TestFromTemplatesImages(t *testing.T) {
	meta := Metadata{
		Name:        "web",
		Annotations: map[string]string{AnnotationKey: "- name: op\n  image: quay.io/op:1\n- name: dbg\n  image: busybox\n  condition: debug.enabled\n"},
		Subcharts:   []Metadata{{Name: "db", Annotations: map[string]string{AnnotationKeyImages: "- name: db\n  image: postgres:16\n"}}},
		Values:      map[string]interface{}{"debug": map[string]interface{}{"enabled": false}},
	}
	c, err := FromTemplates(meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range c.Images {
		got = append(got, a.Location().File+" "+a.Image)
	}
	want := []string{"web/Chart.yaml quay.io/op:1", "web/charts/db/Chart.yaml postgres:16"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images %q, want %q", got, want)
	}
	meta.Annotations[AnnotationKey] = "{not: a list}"
	if _, err := FromTemplates(meta, nil); err == nil || !strings.Contains(err.Error(), "web/Chart.yaml: annotation helm.sh/images") {
		t.Errorf("err = %v", err)
	}
}

func TestSplitChartPath(t *testing.T) {
	for name, want := range map[string][2]string{
		"web/templates/a.yaml":               {"web", "templates/a.yaml"},
		"web/charts/db/crds/a.yaml":          {"web/charts/db", "crds/a.yaml"},
		"web/charts/db/charts/x/templates/a": {"web/charts/db/charts/x", "templates/a"},
		"web/templates/charts/a.yaml":        {"web", "templates/charts/a.yaml"},
		"web/charts":                         {"web", "charts"},
		"web":                                {"web", ""},
	} {
		if c, r := splitChartPath(name); c != want[0] || r != want[1] {
			t.Errorf("splitChartPath(%q) = %q, %q, want %q", name, c, r, want)
		}
	}
}
