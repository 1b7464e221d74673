package krmfn_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rehost/rehost/pkg/krmfn"
	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestParseFunctionConfig(t *testing.T) {
	tests := []struct {
		name    string
		in      string // "" for no functionConfig
		want    rewrite.Config
		wantErr string
	}{
		{name: "none"},
		{name: "RewriteConfig", in: `
apiVersion: rehost.dev/v1alpha1
kind: RewriteConfig
metadata:
  name: rehost
  annotations:
    config.kubernetes.io/function: '{exec: {path: rehost, args: [fn]}}'
registry: sea.hub:5000/mirror
pathStyle: nest
exclude: [quay.io]
skipInvalid: true
imageList: {configMapName: images}
`, want: rewrite.Config{
			APIVersion: rewrite.APIVersion, Kind: rewrite.Kind,
			Metadata: &rewrite.ObjectMeta{Name: "rehost", Annotations: map[string]string{
				"config.kubernetes.io/function": "{exec: {path: rehost, args: [fn]}}"}},
			Registry: "sea.hub:5000/mirror", PathStyle: rewrite.PathStyleNest, Exclude: []string{"quay.io"},
			SkipInvalid: true, ImageList: &rewrite.ImageListConfig{ConfigMapName: "images"},
		}},
		{name: "RewriteConfig empty registry", in: "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: \"\"\n", wantErr: "registry: empty"},
		{name: "ConfigMap empty registry", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  registry: \"\"\n", wantErr: "data.registry: empty"},
		{name: "RewriteConfig unknown field", in: "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistyr: x.io\n", wantErr: "registyr"},
		{name: "RewriteConfig invalid", in: "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\npathStyle: flat\n", wantErr: "pathStyle"},
		{name: "RewriteConfig prefix without room", in: "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nregistry: sea.hub:5000/" + strings.Repeat("p", 254) + "\n", wantErr: "prefix has 254 characters"},
		{name: "ConfigMap prefix without room", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  pathStyle: nest\n  registry: sea.hub:5000/" + strings.Repeat("p", 250) + "\n", wantErr: "prefix has 250 characters"},
		{name: "RewriteConfig wrong apiVersion", in: "apiVersion: rehost.dev/v2\nkind: RewriteConfig\n", wantErr: "apiVersion"},
		{name: "ConfigMap", in: `
apiVersion: v1
kind: ConfigMap
metadata: {name: rehost}
data:
  registry: registry.internal:5443
  pathStyle: strip
  exclude: " quay.io ,docker.io/library/busybox,, "
  skipInvalid: "true"
  imageList: images
`, want: rewrite.Config{
			Registry: "registry.internal:5443", PathStyle: rewrite.PathStyleStrip,
			Exclude: []string{"quay.io", "docker.io/library/busybox"}, SkipInvalid: true,
			ImageList: &rewrite.ImageListConfig{ConfigMapName: "images"},
		}},
		{name: "ConfigMap as kustomize fn run builds it", in: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: function-input
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: /usr/local/bin/rehost-fn
data: {}
`},
		{name: "ConfigMap booleans", in: "apiVersion: v1\nkind: ConfigMap\ndata: {noGuessImages: 'true', noNamedEmbedded: 'true', noAddRegistry: 'false'}\n",
			want: rewrite.Config{NoGuessImages: true, NoNamedEmbedded: true}},
		{name: "RewriteConfig noGuessImages", in: "apiVersion: rehost.dev/v1alpha1\nkind: RewriteConfig\nnoGuessImages: true\n",
			want: rewrite.Config{APIVersion: rewrite.APIVersion, Kind: rewrite.Kind, NoGuessImages: true}},
		{name: "ConfigMap bad noGuessImages", in: "apiVersion: v1\nkind: ConfigMap\ndata: {noGuessImages: sometimes}\n", wantErr: "data.noGuessImages"},
		{name: "ConfigMap chart sources", in: "apiVersion: v1\nkind: ConfigMap\ndata: {chartsPath: helm/charts, noChartSources: 'true'}\n",
			want: rewrite.Config{ChartsPath: "helm/charts", NoChartSources: true}},
		{name: "ConfigMap bad chartsPath", in: "apiVersion: v1\nkind: ConfigMap\ndata: {chartsPath: /charts}\n", wantErr: "chartsPath"},
		{name: "ConfigMap unknown key", in: "apiVersion: v1\nkind: ConfigMap\ndata: {registries: x.io}\n", wantErr: "data.registries"},
		{name: "ConfigMap bad skipInvalid", in: "apiVersion: v1\nkind: ConfigMap\ndata: {skipInvalid: maybe}\n", wantErr: "data.skipInvalid"},
		{name: "ConfigMap invalid registry", in: "apiVersion: v1\nkind: ConfigMap\ndata: {registry: 'https://x.io'}\n", wantErr: "registry"},
		{name: "ConfigMap invalid image list name", in: "apiVersion: v1\nkind: ConfigMap\ndata: {imageList: Images_List}\n", wantErr: "imageList.configMapName"},
		{name: "other kind", in: "apiVersion: v1\nkind: Secret\n", wantErr: `kind "Secret"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fc *yaml.RNode
			if tt.in != "" {
				fc = yaml.MustParse(tt.in)
			}
			got, err := krmfn.ParseFunctionConfig(fc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
