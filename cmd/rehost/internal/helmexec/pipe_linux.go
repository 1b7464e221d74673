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
// 64 KiB. A system that refuses keeps the pipe as it is; the error says
// why (for tests: the caller has nothing to do about it).
func growPipe(w *os.File) error {
	rc, err := w.SyscallConn()
	if err != nil {
		return err
	}
	if cerr := rc.Control(func(fd uintptr) { _, err = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) }); cerr != nil {
		return cerr
	}
	return err
}
