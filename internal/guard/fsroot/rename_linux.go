package fsroot

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames srcName in srcDir to dstName in dstDir with
// renameat2(RENAME_NOREPLACE): the kernel refuses atomically if dstName
// exists. On a filesystem without it, it checks and renames, which leaves a
// short window in which a new dstName can be replaced.
func renameNoReplace(srcDir *os.File, srcName string, dstDir *os.File, dstName string) error {
	err := unix.Renameat2(int(srcDir.Fd()), srcName, int(dstDir.Fd()), dstName, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameChecked(srcDir, srcName, dstDir, dstName)
	}
	return errnoToFS(err)
}
