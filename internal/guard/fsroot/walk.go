package fsroot

import (
	"io/fs"
	"path/filepath"
)

// maxWalkDepth bounds how deep a walk descends; each level holds one open
// directory.
const maxWalkDepth = 256

// An Entry is a name found in a directory that passed re-validation: either it
// is not a symbolic link, or it is one whose target lies inside the allowed
// directories.
type Entry struct {
	Name string
	// Dir reports a directory; for a symbolic link, whether its target is one.
	Dir bool
	// Link reports that the name is a symbolic link.
	Link bool

	root   *Root
	dir    string // the directory holding it, relative to root.Canonical
	target *Path  // for a link: where it leads
}

// rel returns the entry's path relative to its root's canonical directory.
func (e Entry) rel() string { return filepath.Join(e.dir, e.Name) }

// Info describes the entry; for a symbolic link, its target.
func (e Entry) Info() (fs.FileInfo, error) {
	if e.target != nil {
		return e.target.Stat()
	}
	return e.root.dir.Lstat(e.rel())
}

// ReadDir lists the directory p, names sorted. A symbolic link that resolves
// outside the allowed directories, or cannot be resolved, is left out without
// a word: its name, size and date are not reported.
func (p *Path) ReadDir() ([]Entry, error) {
	d, err := openDir(p.root, p.rel)
	if err != nil {
		return nil, p.wrap(err)
	}
	defer d.close()
	entries, err := p.entries(d, p.rel)
	return entries, p.wrap(err)
}

// entries reads the directory d, at rel, and re-validates what it holds.
func (p *Path) entries(d dirHandle, rel string) ([]Entry, error) {
	des, err := d.read()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		e := Entry{Name: de.name, Dir: de.typ == fs.ModeDir, root: p.root, dir: rel}
		if de.typ == fs.ModeSymlink {
			target, err := p.set.Resolve(filepath.Join(p.root.Canonical, e.rel()))
			if err != nil || !target.Exists {
				continue
			}
			fi, err := target.Stat()
			if err != nil {
				continue
			}
			e.Link, e.Dir, e.target = true, fi.IsDir(), target
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// Walk visits the tree below the directory p depth first, names sorted. It
// calls visit with each entry and its slash-separated path relative to p;
// visit returns whether to descend into a directory. Entries are re-validated
// as in [Path.ReadDir]. Symbolic links are reported but never descended into;
// a subdirectory that cannot be read, or lies more than 256 levels down, is
// not descended into.
//
// Each directory is opened relative to its parent's open descriptor without
// following a symbolic link, so a directory swapped for a link during the
// walk ends that branch instead of leading elsewhere.
func (p *Path) Walk(visit func(rel string, e Entry) (descend bool)) error {
	d, err := openDir(p.root, p.rel)
	if err != nil {
		return p.wrap(err)
	}
	defer d.close()
	entries, err := p.entries(d, p.rel)
	if err != nil {
		return p.wrap(err)
	}
	p.walk(d, "", entries, visit, 1)
	return nil
}

func (p *Path) walk(d dirHandle, prefix string, entries []Entry, visit func(string, Entry) bool, depth int) {
	for _, e := range entries {
		rel := prefix + e.Name
		if !visit(rel, e) || !e.Dir || e.Link || depth >= maxWalkDepth {
			continue
		}
		child, err := d.openChild(e.Name, e.rel())
		if err != nil {
			continue
		}
		if children, err := p.entries(child, e.rel()); err == nil {
			p.walk(child, rel+"/", children, visit, depth+1)
		}
		child.close()
	}
}
