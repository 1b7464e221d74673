// Package deps imports every package the documentation's Go programs
// import from outside the standard library, so that this module's go.mod
// requires their modules (go mod tidy keeps what some package imports).
// TestGoSnippets fails when a program imports a package missing here.
package deps

import (
	_ "github.com/rehost/rehost/pkg/helm"
	_ "github.com/rehost/rehost/pkg/krmfn"
	_ "github.com/rehost/rehost/pkg/manifest"
	_ "github.com/rehost/rehost/pkg/mirror"
	_ "github.com/rehost/rehost/pkg/rendered"
	_ "github.com/rehost/rehost/pkg/rewrite"
	_ "helm.sh/helm/v3/pkg/action"
	_ "helm.sh/helm/v3/pkg/cli"
	_ "helm.sh/helm/v3/pkg/cli/values"
	_ "sigs.k8s.io/kustomize/kyaml/kio"
)
