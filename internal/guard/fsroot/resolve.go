package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds how many symbolic links one resolution follows, as the
// kernel does (ELOOP).
const maxSymlinks = 40

// A Path is a requested path that passed every check. It names a place inside
// one allowed directory.
type Path struct {
	// Requested is the path as the caller gave it.
	Requested string
	// Abs is the canonical absolute path: every symbolic link resolved.
	Abs string
	// Exists reports whether Abs existed when the path was resolved.
	Exists bool

	set        *Set
	normalized string // the requested path made absolute and clean
	root       *Root
	rel        string // Abs relative to root.Canonical; "." for the root itself
}

// Resolve checks a requested path and returns where it leads. It fails with an
// error wrapping [ErrOutside] when the path, lexically or after resolving
// symbolic links, is outside every allowed directory, and with a plain error
// for a path that is malformed (empty, a NUL byte, a Windows drive path).
func (s *Set) Resolve(requested string) (*Path, error) {
	abs, err := s.normalize(requested)
	if err != nil {
		return nil, err
	}
	if !s.lexicallyAllowed(abs) {
		return nil, fmt.Errorf("%w: %s is outside the allowed directories", ErrOutside, requested)
	}
	canonical, exists, err := canonicalize(s.resolveStart(abs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", requested, err)
	}
	root := s.rootOf(canonical)
	if root == nil {
		return nil, fmt.Errorf("%w: %s resolves, through a symbolic link, outside the allowed directories", ErrOutside, requested)
	}
	rel, err := filepath.Rel(root.Canonical, canonical)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", requested, err)
	}
	p := &Path{Requested: requested, Abs: canonical, Exists: exists, set: s, normalized: abs, root: root, rel: rel}
	return p, nil
}

// normalize turns a requested path into a clean absolute path: it rejects
// malformed input, expands ~ and joins a relative path to the first root.
func (s *Set) normalize(requested string) (string, error) {
	switch {
	case requested == "":
		return "", errors.New("path is empty")
	case strings.IndexByte(requested, 0) >= 0:
		return "", fmt.Errorf("path %q contains a NUL byte", requested)
	case isWindowsDrivePath(requested):
		return "", fmt.Errorf("path %q is a Windows drive path, which this system does not have", requested)
	}
	p, err := expandHome(requested)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", requested, err)
	}
	if !filepath.IsAbs(p) {
		if len(s.roots) == 0 {
			return "", fmt.Errorf("%w: %s is relative and no directory is allowed", ErrOutside, requested)
		}
		p = filepath.Join(s.roots[0].Given, p)
	}
	return filepath.Clean(p), nil
}

// lexicallyAllowed reports whether abs lies in a root as given or as
// canonicalized, before any symbolic link is read.
func (s *Set) lexicallyAllowed(abs string) bool {
	for _, r := range s.roots {
		if Within(r.Given, abs) || Within(r.Canonical, abs) {
			return true
		}
	}
	return false
}

// resolveStart returns the canonical directory from which to resolve abs, and
// the part of abs below it. A path inside a root, as given or canonicalized,
// starts at the root's canonical directory: the root is the directory it was
// when the set was opened, which is also the one its os.Root holds.
func (s *Set) resolveStart(abs string) (start, rest string) {
	var best *Root
	var bestBase string
	for _, r := range s.roots {
		for _, base := range []string{r.Canonical, r.Given} {
			if Within(base, abs) && len(base) > len(bestBase) {
				best, bestBase = r, base
			}
		}
	}
	if best == nil {
		return "/", abs
	}
	return best.Canonical, abs[len(bestBase):] // abs is within bestBase
}

// rootOf returns the innermost root whose canonical directory holds the
// canonical path p, or nil.
func (s *Set) rootOf(p string) *Root {
	var best *Root
	for _, r := range s.roots {
		if Within(r.Canonical, p) && (best == nil || len(r.Canonical) > len(best.Canonical)) {
			best = r
		}
	}
	return best
}

// canonicalize resolves every symbolic link in rest, a slash-separated path
// below the canonical directory resolved, one element at a time. Where an
// element does not exist, the remainder is appended lexically and exists is
// false: the deepest existing ancestor is canonical, and nothing below it can
// be a link yet.
func canonicalize(resolved, rest string) (canonical string, exists bool, err error) {
	links := 0
	for {
		var name string
		name, rest = nextElement(rest)
		switch name {
		case "":
			return resolved, true, nil
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.Join(next, rest), false, nil
			}
			if errors.Is(err, syscall.ENOTDIR) {
				return "", false, fmt.Errorf("%s is not a directory", filepath.Base(resolved))
			}
			return "", false, unwrapPathError(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", false, errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false, unwrapPathError(err)
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = target + "/" + rest
	}
}

// expandHome replaces a leading ~ or ~/ with the user's home directory.
// Other uses of ~ (~user, a~b) are left as they are.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand ~: %w", err)
	}
	return filepath.Join(home, p[1:]), nil
}

// isWindowsDrivePath reports paths like C:\x or C:/x, which on a POSIX system
// would otherwise become a file literally named "C:\x" inside the first root.
func isWindowsDrivePath(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	if c < 'a' || c > 'z' {
		return false
	}
	return len(p) == 2 || p[2] == '\\' || p[2] == '/'
}

// nameInRoot returns where the requested name itself lies, without following
// a symbolic link in its last element: the canonical directory of its parent
// plus its base name. Move uses it so that moving a link moves the link.
func (p *Path) nameInRoot() (*Root, string, error) {
	dir, base := filepath.Split(p.normalized)
	if base == "" || p.rel == "." {
		return p.root, p.rel, nil
	}
	parent, _, err := canonicalize(p.set.resolveStart(filepath.Clean(dir)))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", p.Requested, err)
	}
	name := filepath.Join(parent, base)
	r := p.set.rootOf(name)
	if r == nil {
		return nil, "", fmt.Errorf("%w: %s is outside the allowed directories", ErrOutside, p.Requested)
	}
	rel, err := filepath.Rel(r.Canonical, name)
	if err != nil {
		return nil, "", err
	}
	return r, rel, nil
}
