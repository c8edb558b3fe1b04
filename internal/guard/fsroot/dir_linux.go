package fsroot

import (
	"io/fs"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A dirHandle is an open directory being listed. On Linux it is a descriptor:
// the first is opened through the os.Root, each one below relative to its
// parent with O_NOFOLLOW, which is how os.Root confines opens too, without
// its per-call cost. Entries are read with getdents, which gives each one's
// type without a stat (an os.Root File.ReadDir stats every entry).
type dirHandle struct {
	fd int
}

// dirent is a name read from a directory, with its type (d_type).
type dirent struct {
	name string
	typ  fs.FileMode // fs.ModeDir, fs.ModeSymlink, fs.ModeIrregular or 0
}

func openDir(root *Root, rel string) (dirHandle, error) {
	f, err := root.dir.OpenFile(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return dirHandle{-1}, err
	}
	defer f.Close()
	// Keep a descriptor of our own, outside the os.File and its poller.
	conn, err := f.SyscallConn()
	if err != nil {
		return dirHandle{-1}, err
	}
	fd, dupErr := -1, error(nil)
	err = conn.Control(func(raw uintptr) { fd, dupErr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) })
	if err == nil {
		err = dupErr
	}
	return dirHandle{fd}, err
}

func (d dirHandle) openChild(name, _ string) (dirHandle, error) {
	for {
		fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		return dirHandle{fd}, err
	}
}

func (d dirHandle) close() { unix.Close(d.fd) }

var direntBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// read returns the directory's entries, names sorted, without . and ..
func (d dirHandle) read() ([]dirent, error) {
	bufp := direntBuffers.Get().(*[]byte)
	defer direntBuffers.Put(bufp)
	var out []dirent
	for {
		n, err := unix.Getdents(d.fd, *bufp)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		out = parseDirents(d.fd, (*bufp)[:n], out)
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// parseDirents appends the entries of a getdents64 buffer: each record is
// d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then the name and a NUL.
// The names are slices of one string, a copy of the buffer, so that a
// directory costs an allocation or two instead of one per name.
func parseDirents(dirfd int, buf []byte, out []dirent) []dirent {
	const nameOffset = 19
	const minRecord = 24 // a one-byte name, its NUL, and padding to 8 bytes
	out = slices.Grow(out, len(buf)/minRecord)
	text := string(buf)
	for off := 0; len(buf)-off >= nameOffset; {
		rec := buf[off:]
		reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
		if reclen < nameOffset || reclen > len(rec) {
			break
		}
		nameLen := slices.Index(rec[nameOffset:reclen], 0)
		if nameLen < 0 {
			nameLen = reclen - nameOffset
		}
		name := text[off+nameOffset : off+nameOffset+nameLen]
		off += reclen
		if name == "" || name == "." || name == ".." {
			continue
		}
		d := dirent{name: name}
		switch rec[18] {
		case unix.DT_DIR:
			d.typ = fs.ModeDir
		case unix.DT_LNK:
			d.typ = fs.ModeSymlink
		case unix.DT_REG:
		case unix.DT_UNKNOWN: // some filesystems leave the type to a stat
			var st unix.Stat_t
			if unix.Fstatat(dirfd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue // gone since
			}
			d.typ = modeType(st.Mode)
		default:
			d.typ = fs.ModeIrregular
		}
		out = append(out, d)
	}
	return out
}

func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}
