package manifest

import (
	"errors"
	"fmt"

	"github.com/rehost/rehost/pkg/rewrite"
)

// Error is an error in an input, with where it occurred: the file (or
// "<stdin>"), the line and, where known, the object and the field path.
// Every input error the package returns is one (several are joined with
// errors.Join); its Err is the cause, which errors.As and errors.Is reach
// through it: a *rewrite.InvalidReferenceError, a *rewrite.CollisionError
// (located at the second of the two images), ErrNotString, or a message
// (malformed YAML, invalid UTF-8, an alias shared with a non-image field).
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
