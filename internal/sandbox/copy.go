package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Bounds of a scratch copy of a workspace (Guest.Copy): a larger workspace
// is refused with ErrWorkspaceTooLarge, and nothing runs.
const (
	MaxCopyBytes = 1 << 30 // the regular files' contents, all together
	MaxCopyFiles = 100_000 // entries of every kind
)

// ErrWorkspaceTooLarge reports a workspace over MaxCopyBytes or
// MaxCopyFiles, which a guest cannot have a scratch copy of.
var ErrWorkspaceTooLarge = errors.New("workspace too large for a scratch copy")

// copyBounds bound one copy; tests make them small.
type copyBounds struct {
	bytes int64
	files int
}

var defaultCopyBounds = copyBounds{MaxCopyBytes, MaxCopyFiles}

// workFolder is what g sees at /work: its workspace, or a fresh scratch
// copy of it (Copy); done removes the copy.
func (g Guest) workFolder() (work string, done func(), err error) {
	if !g.Copy {
		return g.Workspace, func() {}, nil
	}
	return scratchCopy(g.Workspace, defaultCopyBounds)
}

// scratchCopy copies the folder workspace into a fresh temporary folder
// and returns the copy's canonical path and a function that removes it.
// Directories, regular files and symbolic links (as links, never followed)
// are copied with their permission bits; sockets, pipes and devices are
// left out. Every read goes through an os.Root of the workspace, so a link
// swapped in during the copy cannot make it read outside.
func scratchCopy(workspace string, b copyBounds) (dir string, remove func(), err error) {
	src, err := os.OpenRoot(workspace)
	if err != nil {
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	defer src.Close()
	top, err := src.Stat(".")
	if err != nil {
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	tmp, err := os.MkdirTemp("", "zero-sandbox-copy-")
	if err != nil {
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	cleanup := func() { os.RemoveAll(tmp) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	dir = filepath.Join(real, "work")
	if err := os.Mkdir(dir, top.Mode().Perm()); err != nil {
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	if err := os.Chmod(dir, top.Mode().Perm()); err != nil { // past the umask
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	dst, err := os.OpenRoot(dir)
	if err != nil {
		return "", nil, fmt.Errorf("scratch copy: %w", err)
	}
	defer dst.Close()
	c := copier{src: src, dst: dst, bounds: b, left: b.bytes, files: b.files}
	if err := fs.WalkDir(src.FS(), ".", c.visit); err != nil {
		return "", nil, fmt.Errorf("scratch copy of %s: %w", workspace, err)
	}
	return dir, cleanup, nil
}

// copier copies one workspace, counting down its bounds.
type copier struct {
	src, dst *os.Root
	bounds   copyBounds
	left     int64 // bytes still allowed
	files    int   // entries still allowed
}

func (c *copier) visit(name string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if name == "." {
		return nil
	}
	if c.files--; c.files < 0 {
		return fmt.Errorf("%w: more than %d files", ErrWorkspaceTooLarge, c.bounds.files)
	}
	fi, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.IsDir():
		if err := c.dst.Mkdir(name, fi.Mode().Perm()); err != nil {
			return err
		}
		return c.dst.Chmod(name, fi.Mode().Perm())
	case d.Type()&fs.ModeSymlink != 0:
		target, err := c.src.Readlink(name)
		if err != nil {
			return err
		}
		return c.dst.Symlink(target, name)
	case d.Type().IsRegular():
		return c.file(name, fi.Mode().Perm())
	}
	return nil // a socket, a pipe or a device
}

// file copies one regular file, within the bytes left.
func (c *copier) file(name string, perm fs.FileMode) error {
	in, err := c.src.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s changed during the copy", name)
	}
	out, err := c.dst.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, c.left+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if c.left -= n; c.left < 0 {
		return fmt.Errorf("%w: more than %d bytes", ErrWorkspaceTooLarge, c.bounds.bytes)
	}
	return c.dst.Chmod(name, perm)
}
