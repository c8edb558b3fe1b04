package mcpserver

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// replyPipeSize is the capacity Serve asks for when stdout is a pipe. A pipe
// holds 64 KiB by default, so a reply of a megabyte (a directory tree) is
// written in sixteen turns, each waiting for the client to read; with room
// for it, the reply goes in one write, and the client reads it at its pace.
// The kernel gives pages to a pipe only as they fill.
const replyPipeSize = 1 << 20

// growPipe widens out when it is a pipe. It is best effort: a system that
// refuses (past /proc/sys/fs/pipe-max-size, or a user over
// pipe-user-pages-soft) keeps the size it had, and nothing else changes.
func growPipe(out io.Writer) {
	f, ok := out.(*os.File)
	if !ok {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	if size, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0); err == nil && size < replyPipeSize {
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, replyPipeSize)
	}
}
