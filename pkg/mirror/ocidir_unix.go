//go:build unix

package mirror

import "syscall"

// openNonblock keeps the open of a layout file from blocking on a pipe.
const openNonblock = syscall.O_NONBLOCK
