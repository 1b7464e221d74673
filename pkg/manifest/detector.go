package manifest

import "go.yaml.in/yaml/v3"

// A detector locates one sort of image reference in objects, apart from
// what is done with them (rewriter.go maps them, splice.go writes them), as
// kustomize's filters locate fields apart from setting them. The walker
// (find.go) meets every object of a document, items of Lists and objects
// run together included, and hands each to the Finder's detectors in the
// order of their list (detectors); each adds what it finds to its part of
// the walk's result (found).
//
// A detector holds configuration only (its table, built once by NewFinder):
// a Finder is shared by concurrent walks, and what one document needs
// remembered lives in the walker, in the part named for the detector.
//
// Adding a detector is a file holding its type and detect method, its test,
// and one line in detectors.
type detector interface {
	detect(w *walker, o object)
}

// object is the object a detector looks at.
type object struct {
	// node is the object's mapping, aliases resolved.
	node *yaml.Node
	// gk is its group (empty for the core group) and kind.
	gk groupKind
	// builtin says the kind is a built-in workload kind (podSpecPaths);
	// the others are custom resources.
	builtin bool
}

// detectors is the Finder's list of detectors, in the order they run: the
// order in which a document's references are found and reported.
func (f *Finder) detectors() []detector {
	return []detector{
		podSpecs{},                     // podspec.go: PodSpecs, container lists of custom resources
		guessedFields{},                // guess.go: image and *Image keys of unknown custom resources
		operatorFields{f.extra},        // configured.go: image fields of the known kinds, configured fields
		splitReferences{f.composites},  // composite.go: references split across fields
		registrySettings{f.registries}, // registry.go: operators' registry settings
		chartSources{f.charts},         // gitops.go: GitOps chart sources
		operatorNotes{f.operators},     // operators.go: operators that start images no manifest names
		envImages{},                    // envimages.go: ConfigMap values passed as images through $(VAR)
		embeddedReferences{},           // embeddedrefs.go: named and free-text references in strings
	}
}
