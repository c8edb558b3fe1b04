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
	return nil
}
