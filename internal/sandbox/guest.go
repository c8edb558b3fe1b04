package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// check refuses a guest no backend should start: no program, a program
// that is not an absolute, clean path (inside the guest), or a workspace
// that is not an existing folder's absolute, canonical path.
func (g Guest) check() error {
	if len(g.Argv) == 0 {
		return errors.New("guest: no program")
	}
	for _, a := range g.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errors.New("guest: an argument holds a NUL byte")
		}
	}
	if p := g.Argv[0]; !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("guest program %q: not an absolute, clean path", p)
	}
	ws := g.Workspace
	if !filepath.IsAbs(ws) {
		return fmt.Errorf("guest workspace %q: not an absolute path", ws)
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return fmt.Errorf("guest workspace: %w", err)
	}
	if real != ws {
		return fmt.Errorf("guest workspace %s is not canonical: it resolves to %s", ws, real)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return fmt.Errorf("guest workspace %s is not a folder", ws)
	}
	for _, p := range g.ReadOnly {
		if err := checkReadOnly(p); err != nil {
			return err
		}
	}
	return nil
}

// checkReadOnly refuses a path a guest may not be shown read-only: one not
// absolute, canonical and existing; the root; and one in or holding a place
// the guest has of its own (/proc, /dev, /sys, /work), or holding /tmp.
func checkReadOnly(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("guest read-only path %q: not an absolute, clean path", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("guest read-only path: %w", err)
	}
	if real != p {
		return fmt.Errorf("guest read-only path %s is not canonical: it resolves to %s", p, real)
	}
	if strings.ContainsAny(p, ":,") {
		// docker run -v reads a colon as a field's end; runsc's options a comma.
		return fmt.Errorf("guest read-only path %s: a colon or comma in a path is refused", p)
	}
	for _, own := range []string{"/proc", "/dev", "/sys", "/tmp", WorkDir} {
		if p == "/" || within(p, own) || (own != "/tmp" && within(own, p)) {
			return fmt.Errorf("guest read-only path %s: it is or holds %s, which the guest has of its own", p, own)
		}
	}
	return nil
}

// within reports whether p is dir or lies in it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// inHostUsr reports whether p lies in /usr, which bubblewrap and runsc
// guests see anyway.
func inHostUsr(p string) bool { return within("/usr", p) }
