//go:build !unix

package mirror

// openNonblock is not needed where layouts hold no pipes.
const openNonblock = 0
