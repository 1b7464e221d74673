//go:build unix

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

func keepOwner(tmp string, like fs.FileInfo) error {
	want, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	st, err := os.Lstat(tmp)
	if err != nil {
		return err
	}
	if have, ok := st.Sys().(*syscall.Stat_t); ok && have.Uid == want.Uid && have.Gid == want.Gid {
		return nil
	}
	err = os.Lchown(tmp, int(want.Uid), int(want.Gid))
	if err != nil && os.Geteuid() != 0 {
		// Not root: keep the group where the process is a member of it,
		// as GNU sed -i does; the owner becomes the process's.
		_ = os.Lchown(tmp, -1, int(want.Gid))
		return nil
	}
	return err
}
