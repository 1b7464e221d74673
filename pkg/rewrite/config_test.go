package rewrite

import (
	"errors"
	"strconv"
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

// TestPrefixRoom (issue 29, item 8): a registry prefix that leaves no
// room for any image is refused, with its length and the longest allowed,
// at the exact boundary of each path style; the longest allowed prefix
// still maps the shortest image (and refuses longer ones per image).
func TestPrefixRoom(t *testing.T) {
	for _, tt := range []struct {
		style PathStyle
		max   int
		short string // the shortest source image, whose target fits exactly
	}{
		{PathStyleStrip, 253, "quay.io/a:1"},
		{PathStyleNest, 249, "a.b/a:1"},
	} {
		for _, n := range []int{tt.max - 1, tt.max, tt.max + 1, 300} {
			prefix := strings.Repeat("p", n)
			c := Config{Registry: "sea.hub:5000/" + prefix, PathStyle: tt.style}
			err := c.Validate()
			if n <= tt.max {
				if err != nil {
					t.Errorf("%s, prefix of %d: %v", tt.style, n, err)
					continue
				}
				m, err := NewMapper(c)
				if err != nil {
					t.Fatal(err)
				}
				mp, err := m.Map(tt.short)
				if err != nil {
					t.Errorf("%s, prefix of %d: %s: %v", tt.style, n, tt.short, err)
				} else if len(mp.Target.Repository) > MaxRepositoryPath {
					t.Errorf("target %s longer than %d", mp.Target.Repository, MaxRepositoryPath)
				}
				if n == tt.max {
					if _, err := m.Map(strings.Replace(tt.short, "/a:", "/ab:", 1)); err == nil {
						t.Errorf("%s, prefix of %d: a target of 256 characters was accepted", tt.style, n)
					}
				}
				continue
			}
			var pe *PrefixTooLongError
			var ce *ConfigError
			if !errors.As(err, &pe) || pe.Length != n || pe.Max != tt.max || pe.Style != tt.style || !errors.As(err, &ce) || ce.Field != "registry" {
				t.Errorf("%s, prefix of %d: %v, want a *PrefixTooLongError of length %d, max %d", tt.style, n, err, n, tt.max)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, strconv.Itoa(n)+" characters") || !strings.Contains(msg, "at most "+strconv.Itoa(tt.max)) {
				t.Errorf("message %q", msg)
			}
			if _, err := NewMapper(c); !errors.As(err, &pe) {
				t.Errorf("NewMapper: %v", err)
			}
		}
	}
}
