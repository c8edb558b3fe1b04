package fsroot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Every operation below goes through the os.Root of the allowed directory
// that holds the path, with the canonical path relative to it. os.Root opens
// each element relative to the one before and refuses a symbolic link that
// leads out of the root, so a link swapped in after Resolve cannot redirect
// the operation outside.

// MaxReadSize is the largest file ReadFile reads whole.
const MaxReadSize = 64 << 20

// Open opens a directory, or a regular file, for reading. Anything else (a
// named pipe, a device, a socket) is refused: reading it could block forever
// or never end. The open does not wait on a named pipe.
func (p *Path) Open() (*os.File, error) {
	f, _, err := p.open()
	return f, err
}

// open is Open, which also returns what it learnt of the file.
func (p *Path) open() (*os.File, fs.FileInfo, error) {
	f, err := p.root.dir.OpenFile(p.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, p.wrap(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, p.wrap(err)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", p.Requested, typeName(fi.Mode()))
	}
	return f, fi, nil
}

// ReadFile returns the whole content of a regular file of at most
// [MaxReadSize] bytes.
func (p *Path) ReadFile() ([]byte, error) { return p.ReadFileLimit(MaxReadSize) }

// ReadFileLimit returns the whole content of a regular file of at most limit
// bytes; a larger one, or one that grows past limit while it is read, is an
// error.
func (p *Path) ReadFileLimit(limit int64) ([]byte, error) {
	f, fi, err := p.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", p.Requested)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes is more than the %d bytes a whole-file read returns", p.Requested, fi.Size(), limit)
	}
	b := make([]byte, 0, fi.Size()+1) // +1: seeing EOF takes no second allocation
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, p.wrap(err)
		}
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s: grew past the %d bytes a whole-file read returns", p.Requested, limit)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}

// Stat describes the file or directory.
func (p *Path) Stat() (fs.FileInfo, error) {
	fi, err := p.root.dir.Stat(p.rel)
	return fi, p.wrap(err)
}

// MkdirAll creates the directory and any missing parents.
func (p *Path) MkdirAll() error {
	return p.wrap(p.root.dir.MkdirAll(p.rel, 0o777))
}

// WriteFile replaces the file's content atomically: it writes a new file with
// a unique name in the same directory, then renames it over the target. The
// rename replaces whatever name is at the target, a symbolic link included,
// and never writes through it. An existing file keeps its permission bits; a
// new one gets 0666 less the umask. A hard link elsewhere to the old file
// keeps the old content.
func (p *Path) WriteFile(data []byte) (err error) {
	if p.rel == "." {
		return fmt.Errorf("%s: is a directory", p.Requested)
	}
	perm := fs.FileMode(0o666)
	keepPerm := false
	if fi, err := p.root.dir.Lstat(p.rel); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s: is a directory", p.Requested)
		}
		if fi.Mode().IsRegular() {
			perm, keepPerm = fi.Mode().Perm(), true
		}
	}
	tmp, f, err := p.createTemp(perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			p.root.dir.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil && keepPerm {
		err = f.Chmod(perm) // the umask may have narrowed it
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return p.wrap(err)
	}
	return p.wrap(p.root.dir.Rename(tmp, p.rel))
}

// createTemp creates a new, empty file next to p with a name nobody can have
// guessed. O_EXCL makes creation fail rather than open an existing name.
func (p *Path) createTemp(perm fs.FileMode) (string, *os.File, error) {
	dir, base := filepath.Split(p.rel)
	if len(base) > 200 { // keep the name under NAME_MAX (255 bytes)
		base = base[:200]
	}
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(b[:])+".tmp")
		f, err := p.root.dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, p.wrap(err)
		}
		return name, f, nil
	}
	return "", nil, fmt.Errorf("%s: cannot create a temporary file", p.Requested)
}

// Move renames src to dst. It fails if dst exists, whatever it is (a
// symbolic link, dangling or not, included), and it does not replace it even
// if dst appears while Move runs (where the system supports an exclusive
// rename). When the last element of src is a symbolic link, the link itself
// is moved. An allowed directory itself cannot be moved.
func Move(src, dst *Path) error {
	srcRoot, srcRel, err := src.nameInRoot()
	if err != nil {
		return err
	}
	dstRoot, dstRel, err := dst.nameInRoot()
	if err != nil {
		return err
	}
	if srcRel == "." {
		return fmt.Errorf("%s: an allowed directory cannot be moved", src.Requested)
	}
	if dstRel == "." {
		return fmt.Errorf("%s: already exists", dst.Requested)
	}
	srcDir, err := srcRoot.dir.Open(filepath.Dir(srcRel))
	if err != nil {
		return src.wrap(err)
	}
	defer srcDir.Close()
	dstDir, err := dstRoot.dir.Open(filepath.Dir(dstRel))
	if err != nil {
		return dst.wrap(err)
	}
	defer dstDir.Close()
	err = renameNoReplace(srcDir, filepath.Base(srcRel), dstDir, filepath.Base(dstRel))
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: already exists", dst.Requested)
	}
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", src.Requested, dst.Requested, unwrapPathError(err))
	}
	return nil
}

// wrap names the path as the caller gave it in an error, once.
func (p *Path) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", p.Requested, unwrapPathError(err))
}
