package policy

import "go.yaml.in/yaml/v3"

func (g generator) kyverno() []*yaml.Node { return nil }
