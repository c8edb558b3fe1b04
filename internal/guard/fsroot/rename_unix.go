//go:build unix

package fsroot

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// renameChecked renames after checking that dstName is free. Between the
// check and the rename another process could create dstName.
func renameChecked(srcDir *os.File, srcName string, dstDir *os.File, dstName string) error {
	var st unix.Stat_t
	err := unix.Fstatat(int(dstDir.Fd()), dstName, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil {
		return fs.ErrExist
	}
	if !errors.Is(err, unix.ENOENT) {
		return err
	}
	return errnoToFS(unix.Renameat(int(srcDir.Fd()), srcName, int(dstDir.Fd()), dstName))
}

// errnoToFS maps the errno values callers test for onto io/fs errors.
func errnoToFS(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTEMPTY):
		return fs.ErrExist
	case errors.Is(err, unix.ENOENT):
		return fs.ErrNotExist
	}
	return err
}
