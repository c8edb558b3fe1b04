package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// copyTree copies the folder src to dst, a path that does not exist yet:
// folders, regular files (with their permission bits) and symbolic links
// as links (never what they point to: a link out of the workspace stays a
// link, which the guest resolves in its own view). Other files are left
// out. Files are read through an os.Root at src, so nothing outside it is
// read even if the tree changes meanwhile.
func copyTree(src, dst string) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			return os.Mkdir(target, mode.Perm()|0o700)
		case mode.IsRegular():
			return copyFile(root, rel, target, mode.Perm())
		case mode&fs.ModeSymlink != 0:
			link, err := root.Readlink(rel)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		return nil
	})
}

func copyFile(root *os.Root, rel, target string, perm fs.FileMode) error {
	in, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", rel, err)
	}
	return out.Close()
}
