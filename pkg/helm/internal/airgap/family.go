package airgap

import (
	"fmt"
	"strings"
)

// Family is a family of charts whose templates verify their images at
// render time and fail when an image is not one the chart was published
// with, and the documented value that turns the verification off. A
// relocated image is the same image in another registry, so the switch is
// what the family's users set in an air gap; rehost sets it only when a
// render with the relocated values fails the family's check, and says why
// in a comment in the overlay.
type Family struct {
	// Name names the family in the comment.
	Name string
	// Failure is a substring of the render error of the family's check.
	Failure string
	// Path and Value are the switch.
	Path  []interface{}
	Value interface{}
	// Why is the comment put above the switch in the overlay; %s is the
	// target registry.
	Why string
}

// families are the chart families rehost knows.
//
// Bitnami (and the VMware Tanzu catalogue built from it): the common
// library's common.errors.insecureImages, included from NOTES.txt, builds
// registry/repository for each image (global.imageRegistry before the
// image's own registry) and fails the render unless that string, and the
// registry alone, occur in the chart's "images" annotation, "Original
// containers have been substituted for unrecognized ones"; the documented
// way around it is global.security.allowInsecureImages: true
// (https://github.com/bitnami/charts/issues/30850). A chart written by
// rehost relocate has its annotation rewritten to the target references
// and passes the check without the switch.
var families = []Family{{
	Name:    "Bitnami",
	Failure: "Original containers have been substituted for unrecognized ones",
	Path:    []interface{}{"global", "security", "allowInsecureImages"},
	Value:   true,
	Why:     "Bitnami's image verification (common.errors.insecureImages, https://github.com/bitnami/charts/issues/30850) rejects any registry but the original: the relocated images are the same images, in %s",
}}

// FailedFamily returns the family whose check a render error is, or nil.
func FailedFamily(err error) *Family {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for i := range families {
		if strings.Contains(msg, families[i].Failure) {
			return &families[i]
		}
	}
	return nil
}

// setting is the switch as a key to set.
func (f *Family) setting() Setting {
	return Setting{Path: f.Path, Value: fmt.Sprint(f.Value), Raw: f.Value}
}

// why is the comment for the switch.
func (f *Family) why(registry string) string { return fmt.Sprintf(f.Why, registry) }

// withSwitches returns the settings followed by the families' switches.
func withSwitches(settings []Setting, fs []*Family) []Setting {
	out := append([]Setting(nil), settings...)
	for _, f := range fs {
		out = append(out, f.setting())
	}
	return out
}

func hasFamily(fs []*Family, f *Family) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}
