package manifest

import (
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/rewrite"
)

// TestSummary: one value holds every finding a front end reports besides
// the images — a registry setting added, an operator that starts images
// no manifest names (dropped once an image list is read), the guessed
// images, the embedded references left out — and reading it changes
// nothing.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		"apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\n",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {image: quay.io/team/widget:1.0}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {tool: quay.io/team/tool:2.0}\n",
	}, "---\n")
	for _, lists := range []bool{false, true} {
		t.Run(map[bool]string{false: "no image list", true: "image list read"}[lists], func(t *testing.T) {
			rw := mustNew(t, rewrite.Config{})
			if lists {
				if err := rw.ReadImageList(strings.NewReader("quay.io/tigera/operator:v1.36.0\n"), "images.txt"); err != nil {
					t.Fatal(err)
				}
			}
			if err := rw.Rewrite(nil, strings.NewReader(in), "in.yaml"); err != nil {
				t.Fatal(err)
			}
			s := rw.Summary()
			if len(s.Settings) != 1 || s.Settings[0].Location.Kind != "Installation" {
				t.Errorf("settings %+v, want the Installation's", s.Settings)
			}
			if n := len(s.Operators); lists && n != 0 || !lists && (n != 1 || s.Operators[0].Location.Kind != "Installation") {
				t.Errorf("operators %+v (image list read: %v)", s.Operators, lists)
			}
			if s.Guessed == nil || s.Guessed.Count != 1 || s.Guessed.First.Field != "spec.image" {
				t.Errorf("guessed %+v, want spec.image of the Widget", s.Guessed)
			}
			if len(s.EmbeddedLeftOut) != 1 || s.EmbeddedLeftOut[0].Source != "quay.io/team/tool:2.0" {
				t.Errorf("embedded left out %+v, want quay.io/team/tool:2.0", s.EmbeddedLeftOut)
			}
			if again := rw.Summary(); again.Guessed == nil || again.Guessed.Count != 1 {
				t.Errorf("a second Summary lost the guessed images: %+v", again.Guessed)
			}
		})
	}
}

// TestSummaryMessagesNameNoFlag: the messages of a Summary state facts in
// the library's terms; each front end adds its own hint (the CLI's flag,
// the KRM function's config field), so none names a flag.
func TestSummaryMessagesNameNoFlag(t *testing.T) {
	in := strings.Join([]string{
		"apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\n",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {image: quay.io/team/widget:1.0}\n",
		"apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: podinfo}\nspec: {type: oci, url: oci://ghcr.io/stefanprodan/charts}\n",
	}, "---\n")
	rw := mustNew(t, rewrite.Config{})
	if err := rw.Rewrite(nil, strings.NewReader(in), "in.yaml"); err != nil {
		t.Fatal(err)
	}
	s := rw.Summary()
	if len(s.Settings) != 1 || s.Guessed == nil || len(s.Operators) != 1 {
		t.Fatalf("settings %+v, guessed %+v: want the Installation's, the Widget's", s.Settings, s.Guessed)
	}
	for _, tt := range []struct{ name, msg string }{
		{"setting", s.Settings[0].Message()},
		{"guessed images", s.Guessed.Error()},
		{"operator", s.Operators[0].Message()},
		{"chart sources", ChartsSummary(s.Charts, rw.Mapper().ChartsRepository())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.msg == "" || strings.Contains(tt.msg, "--") {
				t.Errorf("message %q: want a fact naming no flag", tt.msg)
			}
		})
	}
}
