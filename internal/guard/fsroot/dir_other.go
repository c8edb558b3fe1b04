//go:build !linux

package fsroot

import (
	"io/fs"
	"os"
	"slices"
	"strings"
)

// A dirHandle is a directory being listed, opened through the os.Root each
// time it is read.
type dirHandle struct {
	root *Root
	rel  string
}

type dirent struct {
	name string
	typ  fs.FileMode
}

func openDir(root *Root, rel string) (dirHandle, error) {
	fi, err := root.dir.Stat(rel)
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "open", Path: rel, Err: errNotDir}
	}
	return dirHandle{root, rel}, err
}

func (d dirHandle) openChild(_, rel string) (dirHandle, error) {
	fi, err := d.root.dir.Lstat(rel)
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "open", Path: rel, Err: errNotDir}
	}
	return dirHandle{d.root, rel}, err
}

func (d dirHandle) close() {}

func (d dirHandle) read() ([]dirent, error) {
	f, err := d.root.dir.Open(d.rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(des))
	for i, de := range des {
		out[i] = dirent{name: de.Name(), typ: de.Type()}
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

var errNotDir = os.ErrInvalid
