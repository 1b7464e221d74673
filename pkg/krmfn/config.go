package krmfn

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
	"github.com/rehost/rehost/pkg/rewrite"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigMap data keys accepted in a ConfigMap functionConfig.
const (
	// KeyRegistry is the target registry, as RewriteConfig's registry.
	KeyRegistry = "registry"
	// KeyPathStyle is "strip" or "nest", as RewriteConfig's pathStyle.
	KeyPathStyle = "pathStyle"
	// KeyExclude is a comma-separated list of registry hosts and
	// repository prefixes, as RewriteConfig's exclude.
	KeyExclude = "exclude"
	// KeySkipInvalid is "true" or "false", as RewriteConfig's skipInvalid.
	KeySkipInvalid = "skipInvalid"
	// KeyImageList is the name of the image-list ConfigMap, as
	// RewriteConfig's imageList.configMapName.
	KeyImageList = "imageList"
	// KeyNoAddRegistry is "true" or "false", as RewriteConfig's
	// noAddRegistry.
	KeyNoAddRegistry = "noAddRegistry"
	// KeyNoNamedEmbedded is "true" or "false", as RewriteConfig's
	// noNamedEmbedded.
	KeyNoNamedEmbedded = "noNamedEmbedded"
	// KeyNoGuessImages is "true" or "false", as RewriteConfig's
	// noGuessImages.
	KeyNoGuessImages = "noGuessImages"
	// KeyChartsPath is the charts' repository path, as RewriteConfig's
	// chartsPath.
	KeyChartsPath = "chartsPath"
	// KeyNoChartSources is "true" or "false", as RewriteConfig's
	// noChartSources.
	KeyNoChartSources = "noChartSources"
)

// ParseFunctionConfig reads a functionConfig into a rewrite.Config.
//
// A RewriteConfig (apiVersion rehost.dev/v1alpha1) is decoded by
// rewrite.LoadConfig: strictly, metadata allowed. A ConfigMap (kpt's
// convention, and what "kustomize fn run --exec-path DIR -- key=value"
// builds) may hold, under data, the keys registry, pathStyle, exclude
// (comma-separated), skipInvalid, noNamedEmbedded, noGuessImages,
// noAddRegistry, chartsPath, noChartSources and imageList (the ConfigMap
// name); any
// other key is an error. No functionConfig means the defaults.
func ParseFunctionConfig(fc *yaml.RNode) (rewrite.Config, error) {
	if fc.IsNilOrEmpty() {
		return rewrite.Config{}, nil
	}
	switch kind := fc.GetKind(); kind {
	case "ConfigMap":
		return configMapConfig(fc)
	case "", rewrite.Kind:
		s, err := fc.String()
		if err != nil {
			return rewrite.Config{}, fmt.Errorf("functionConfig: %w", err)
		}
		c, err := rewrite.LoadConfig([]byte(s))
		if err != nil {
			return c, fmt.Errorf("functionConfig: %w", err)
		}
		return c, nil
	default:
		return rewrite.Config{}, fmt.Errorf("functionConfig: kind %s: want %s (apiVersion %s) or ConfigMap", bounded.Quote(kind), rewrite.Kind, rewrite.APIVersion)
	}
}

func configMapConfig(fc *yaml.RNode) (rewrite.Config, error) {
	var c rewrite.Config
	data := fc.GetDataMap()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(data[k])
		switch k {
		case KeyRegistry:
			if v == "" {
				return c, fmt.Errorf("functionConfig ConfigMap: data.%s: %w", k, rewrite.ErrEmptyRegistry)
			}
			c.Registry = v
		case KeyPathStyle:
			c.PathStyle = rewrite.PathStyle(v)
		case KeyExclude:
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e != "" {
					c.Exclude = append(c.Exclude, e)
				}
			}
		case KeyChartsPath:
			c.ChartsPath = v
		case KeySkipInvalid, KeyNoAddRegistry, KeyNoNamedEmbedded, KeyNoGuessImages, KeyNoChartSources:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("functionConfig ConfigMap: data.%s: %s: want true or false", k, bounded.Quote(v))
			}
			switch k {
			case KeySkipInvalid:
				c.SkipInvalid = b
			case KeyNoAddRegistry:
				c.NoAddRegistry = b
			case KeyNoGuessImages:
				c.NoGuessImages = b
			case KeyNoChartSources:
				c.NoChartSources = b
			default:
				c.NoNamedEmbedded = b
			}
		case KeyImageList:
			if v != "" {
				c.ImageList = &rewrite.ImageListConfig{ConfigMapName: v}
			}
		default:
			return c, fmt.Errorf("functionConfig ConfigMap: unknown key data.%s (want %s, %s, %s, %s, %s, %s, %s, %s, %s or %s)",
				k, KeyRegistry, KeyPathStyle, KeyExclude, KeySkipInvalid, KeyNoNamedEmbedded, KeyNoGuessImages, KeyNoAddRegistry, KeyChartsPath, KeyNoChartSources, KeyImageList)
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("functionConfig ConfigMap: %w", err)
	}
	return c, nil
}
