package fsroot

import (
	"io/fs"
	"path/filepath"
	"runtime"
	"sync/atomic"
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
// not descended into. visit is called from one goroutine at a time, in order.
//
// Each directory is opened relative to its parent's open descriptor without
// following a symbolic link, so a directory swapped for a link during the
// walk ends that branch instead of leading elsewhere.
//
// While visit runs, a helper goroutine per directory reads its
// subdirectories ahead, in order, holding at most prefetchBudget of them open
// at once across the walk. The walk reads a subdirectory no one has taken
// yet itself; one the helper is still reading, it does not wait for, but
// reads the next untaken one meanwhile, so both cores read. When one of the
// two has to wait for the other, it spins for about 100 microseconds before
// it sleeps (see spin).
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
	w := &walker{p: p, visit: visit, budget: make(chan struct{}, prefetchBudget)}
	w.walk(d, "", entries, 1)
	return nil
}

// prefetchBudget bounds the directories read ahead and held open by a walk.
const prefetchBudget = 16

type walker struct {
	p      *Path
	visit  func(string, Entry) bool
	budget chan struct{} // one slot per directory read ahead and held open
}

// A listing is a subdirectory opened and read, by a helper or by the walk.
// Whoever takes it (taken) loads it and closes ready; its other fields are
// read only after that.
type listing struct {
	taken   atomic.Bool
	ready   chan struct{}
	open    bool // h is open and must be released
	h       dirHandle
	entries []Entry
	held    bool // it was read ahead, with a budget slot
}

// isReady reports whether l has been loaded.
func (l *listing) isReady() bool {
	select {
	case <-l.ready:
		return true
	default:
		return false
	}
}

// spin tries done for a short while, yielding between tries, and reports
// whether it succeeded. The walk's two goroutines wait for each other in
// spans of tens of microseconds; parking one and waking it again costs more
// than that on a machine whose idle processors sleep, so each first spins.
func spin(done func() bool) bool {
	for range spinTries {
		if done() {
			return true
		}
		runtime.Gosched()
	}
	return done()
}

// spinTries bounds a spin to about 100 microseconds.
const spinTries = 1000

// take claims l for the caller, which must then load it.
func (l *listing) take() bool { return l.taken.CompareAndSwap(false, true) }

// load opens and reads the subdirectory e of d into l, which the caller has
// taken; held says that the caller holds a budget slot for it. It reports
// whether the listing is usable; if not, the caller keeps its slot.
func (w *walker) load(l *listing, d dirHandle, e Entry, held bool) bool {
	defer close(l.ready)
	h, err := d.openChild(e.Name, e.rel())
	if err != nil {
		return false
	}
	entries, err := w.p.entries(h, e.rel())
	if err != nil {
		h.close()
		return false
	}
	l.open, l.h, l.entries, l.held = true, h, entries, held
	return true
}

// readAhead takes l and loads it with a budget slot, if l is free and a
// slot is to be had (waiting for one unless wait is nil, and then until wait
// closes). It reports false only when it gave up waiting.
func (w *walker) readAhead(l *listing, d dirHandle, e Entry, wait <-chan struct{}) bool {
	if l.taken.Load() {
		return true
	}
	if !w.acquire(wait) {
		return false
	}
	if !l.take() || !w.load(l, d, e, true) {
		<-w.budget // someone else took it, or it failed
	}
	return true
}

// acquire takes a budget slot: at once or not at all if wait is nil, and
// otherwise when one is free, unless wait closes first.
func (w *walker) acquire(wait <-chan struct{}) bool {
	got := false
	settled := func() bool { // a slot was had, or wait closed
		select {
		case w.budget <- struct{}{}:
			got = true
			return true
		case <-wait: // never, if wait is nil
			return true
		default:
			return false
		}
	}
	if wait == nil {
		settled()
		return got
	}
	if spin(settled) {
		return got
	}
	select {
	case w.budget <- struct{}{}:
		return true
	case <-wait:
		return false
	}
}

// release closes a loaded listing and frees its budget slot.
func (w *walker) release(l *listing) {
	if !l.open {
		return
	}
	l.open = false
	l.h.close()
	if l.held {
		<-w.budget
	}
}

func (w *walker) walk(d dirHandle, prefix string, entries []Entry, depth int) {
	subdirs := make([]*listing, len(entries))
	hasSubdirs := false
	for i, e := range entries {
		if e.Dir && !e.Link && depth < maxWalkDepth {
			subdirs[i], hasSubdirs = &listing{ready: make(chan struct{})}, true
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	if hasSubdirs {
		go func() { // the helper: read subdirectories ahead, in order
			defer close(done)
			for i, l := range subdirs {
				if l != nil && !w.readAhead(l, d, entries[i], stop) {
					return
				}
			}
		}()
	} else {
		close(done)
	}
	ahead := 0 // subdirs before it are all taken
	for i, e := range entries {
		rel := prefix + e.Name
		descend := w.visit(rel, e)
		l := subdirs[i]
		if l == nil || !descend {
			continue
		}
		if l.take() {
			w.load(l, d, e, false)
		} else {
			// The helper has it: read later ones while it finishes.
			for ahead = max(ahead, i+1); ahead < len(subdirs) && !l.isReady(); ahead++ {
				if m := subdirs[ahead]; m != nil && !w.readAhead(m, d, entries[ahead], nil) {
					break // no budget slot free
				}
			}
			if !spin(l.isReady) {
				<-l.ready
			}
		}
		if l.open {
			w.walk(l.h, rel+"/", l.entries, depth+1)
			w.release(l)
		}
	}
	close(stop)
	<-done
	for _, l := range subdirs {
		if l != nil {
			w.release(l) // read ahead but not descended into
		}
	}
}
