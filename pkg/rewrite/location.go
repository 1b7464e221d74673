package rewrite

import (
	"fmt"
	"strings"

	"github.com/rehost/rehost/internal/bounded"
)

// Location is where an image occurs: the input, the line, the object and the
// field path inside it.
type Location struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Column is the 1-based column, in characters, where the value starts
	// (its opening quote, tag or anchor included). For a reference that is
	// only part of a string (embedded, or the repository of a composed
	// reference) it is where that part starts.
	Column    int    `json:"column,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Field is the path of the field in the object,
	// "spec.template.spec.containers[0].image".
	Field string `json:"field,omitempty"`
	// Value is the image reference as written at this place.
	Value string `json:"value,omitempty"`
	// Embedded marks an image reference found inside a string value
	// (a container argument, an env value, ConfigMap data, an annotation)
	// rather than in an image field. Line and Column are then those of the
	// reference itself, inside the string.
	Embedded bool `json:"embedded,omitempty"`
	// Named marks an embedded reference whose flag or env var name says
	// image (--*-image=, *_IMAGE): listed and rewritten by default.
	Named bool `json:"named,omitempty"`
	// Guessed marks an image found in a custom resource of a kind rehost
	// has no entries for, by the name of its key (image, baseImage,
	// sidecarImage, ...) rather than by a known field: listed and
	// rewritten by default (Config.NoGuessImages leaves it as written).
	Guessed bool `json:"guessed,omitempty"`
	// Origin says where the image came from when it is not an image field of
	// a manifest, for example "annotation" for a chart's helm.sh/images.
	Origin string `json:"origin,omitempty"`
}

// Object is "Kind namespace/name" (or less, as far as known).
func (l Location) Object() string {
	id := bounded.Cut(l.Name, bounded.MaxQuoted)
	if l.Namespace != "" {
		id = bounded.Cut(l.Namespace, bounded.MaxQuoted) + "/" + id
	}
	return joinNonEmpty(" ", bounded.Cut(l.Kind, bounded.MaxQuoted), id)
}

// String formats the location as "file:line: Kind ns/name: field"; each
// part read from an input is cut to bounded.MaxQuoted bytes.
func (l Location) String() string {
	var b strings.Builder
	b.WriteString(bounded.Cut(l.File, bounded.MaxQuoted))
	if l.Line > 0 {
		fmt.Fprintf(&b, ":%d", l.Line)
	}
	if o := l.Object(); o != "" {
		b.WriteString(": " + o)
	}
	if l.Field != "" {
		b.WriteString(": " + bounded.Cut(l.Field, bounded.MaxQuoted))
	}
	return b.String()
}
