package helmexec

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the buffer growPipe asks for: the most Linux gives a user
// by default (/proc/sys/fs/pipe-max-size).
const pipeSize = 1 << 20

// growPipe enlarges the buffer of the pipe w writes into from 64 KiB to
// pipeSize, when the system allows it, so that the helper writes a
// chart in a few writes instead of waiting for a busy reader after each
// 64 KiB. A system that refuses keeps the pipe as it is.
func growPipe(w *os.File) {
	if rc, err := w.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}
