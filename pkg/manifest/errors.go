package manifest

import (
	"errors"
	"fmt"

	"github.com/rehost/rehost/pkg/rewrite"
)

// Error is an error in an input, with where it occurred: the file (or
// "<stdin>"), the line and, where known, the object and the field path.
type Error struct {
	Location rewrite.Location
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %v", e.Location, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotString is wrapped by errors about image fields whose value is not a
// string.
var ErrNotString = errors.New("image value is not a string")
