package krmfn

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ImageListKey is the data key of the image-list ConfigMap.
const ImageListKey = "imageList"

// setImageList stores the image list, one image a line, under
// data.imageList of every v1 ConfigMap named name in *items (any
// namespace), keeping its other data; when there is none it appends a new
// ConfigMap. It returns the (first) ConfigMap set.
func setImageList(items *[]*yaml.RNode, name string, images []string) (*yaml.RNode, error) {
	value := yaml.NewStringRNode(strings.Join(images, "\n"))
	if len(images) > 0 {
		value = yaml.NewStringRNode(strings.Join(images, "\n") + "\n")
		value.YNode().Style = yaml.LiteralStyle
	}
	var first *yaml.RNode
	for _, it := range *items {
		if it.GetKind() != "ConfigMap" || it.GetApiVersion() != "v1" || it.GetName() != name {
			continue
		}
		if err := it.PipeE(yaml.LookupCreate(yaml.MappingNode, yaml.DataField), yaml.SetField(ImageListKey, value.Copy())); err != nil {
			return nil, err
		}
		if first == nil {
			first = it
		}
	}
	if first != nil {
		return first, nil
	}
	cm := yaml.NewMapRNode(nil)
	cm.SetApiVersion("v1")
	cm.SetKind("ConfigMap")
	if err := cm.SetName(name); err != nil {
		return nil, err
	}
	if err := cm.PipeE(yaml.LookupCreate(yaml.MappingNode, yaml.DataField), yaml.SetField(ImageListKey, value)); err != nil {
		return nil, err
	}
	*items = append(*items, cm)
	return cm, nil
}
