package fsroot

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// times reads the birth time with statx, relative to the file's directory as
// opened through the root, without following a final symbolic link.
func (p *Path) times(fi fs.FileInfo) (created, accessed time.Time) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		accessed = time.Unix(st.Atim.Unix())
	}
	dir, err := p.root.dir.Open(filepath.Dir(p.rel))
	if err != nil {
		return created, accessed
	}
	defer dir.Close()
	name, flags := filepath.Base(p.rel), unix.AT_SYMLINK_NOFOLLOW
	if p.rel == "." {
		name, flags = "", unix.AT_EMPTY_PATH
	}
	var stx unix.Statx_t
	if unix.Statx(int(dir.Fd()), name, flags, unix.STATX_BTIME, &stx) == nil && stx.Mask&unix.STATX_BTIME != 0 {
		created = time.Unix(stx.Btime.Sec, int64(stx.Btime.Nsec))
	}
	return created, accessed
}
