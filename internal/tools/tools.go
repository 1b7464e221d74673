//go:build tools

// Package tools pins the modules rehost's packages build on, so that
// go.mod holds them even while a package using them is being written.
package tools

import (
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/layout"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "helm.sh/helm/v3/pkg/action"
	_ "helm.sh/helm/v3/pkg/postrender"
	_ "sigs.k8s.io/kustomize/kyaml/fn/framework"
	_ "sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
)
