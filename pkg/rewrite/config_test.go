package rewrite

import (
	"strings"
	"testing"
)

func TestLoadConfigImageList(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // ConfigMapName, when no error
		wantErr string
	}{
		{name: "absent", in: "registry: x.io\n"},
		{name: "set", in: "imageList: {configMapName: rehost-images}\n", want: "rehost-images"},
		{name: "dotted name", in: "imageList:\n  configMapName: images.rehost.dev\n", want: "images.rehost.dev"},
		{name: "name required", in: "imageList: {}\n", wantErr: "imageList.configMapName: required"},
		{name: "invalid name", in: "imageList: {configMapName: Rehost_Images}\n", wantErr: `imageList.configMapName: "Rehost_Images"`},
		{name: "unknown field", in: "imageList: {configMapName: x, key: y}\n", wantErr: "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadConfig() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && c.ImageList != nil:
				t.Errorf("ImageList = %+v, want nil", c.ImageList)
			case tt.want != "" && (c.ImageList == nil || c.ImageList.ConfigMapName != tt.want):
				t.Errorf("ImageList = %+v, want configMapName %q", c.ImageList, tt.want)
			}
		})
	}
}

// TestLoadConfigEmptyRegistry: a registry field written but empty is an
// error; an absent one means the default.
func TestLoadConfigEmptyRegistry(t *testing.T) {
	for _, in := range []string{"registry: \"\"\n", "registry: ''\n", "registry:\n", "kind: RewriteConfig\nregistry: ~\n"} {
		if _, err := LoadConfig([]byte(in)); err == nil || !strings.Contains(err.Error(), "config: registry: empty") {
			t.Errorf("LoadConfig(%q) error = %v, want config: registry: empty", in, err)
		}
	}
	c, err := LoadConfig([]byte("kind: RewriteConfig\n"))
	if err != nil || c.registry() != DefaultRegistry {
		t.Errorf("absent registry: %+v, %v; want the default", c, err)
	}
}
