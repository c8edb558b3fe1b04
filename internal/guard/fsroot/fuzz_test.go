package fsroot

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
)

// FuzzResolve checks Resolve against the kernel's own resolution of the same
// path (filepath.EvalSymlinks): what Resolve allows must lie inside the root
// and be where the kernel lands; what it refuses must really lead outside.
// The seed corpus is in testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{"file.txt", "sub/../file.txt", "link_out_dir/secret.txt", "../outside", "~", "/etc/passwd", "link_in_dir/./inner.txt", "dangling_out"} {
		f.Add(seed)
	}
	tr := escapetest.New(f)
	s, err := Open([]string{tr.Allowed})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Fuzz(func(t *testing.T, requested string) {
		p, err := s.Resolve(requested)
		normalized, nerr := s.normalize(requested)
		kernel, kerr := filepath.EvalSymlinks(normalized)
		switch {
		case err == nil:
			if !Within(tr.Allowed, p.Abs) {
				t.Fatalf("Resolve(%q) = %q, outside the root", requested, p.Abs)
			}
			if p.Exists && (kerr != nil || kernel != p.Abs) {
				t.Fatalf("Resolve(%q) = %q, kernel resolves %q (%v)", requested, p.Abs, kernel, kerr)
			}
		case errors.Is(err, ErrOutside):
			if nerr == nil && kerr == nil && Within(tr.Allowed, normalized) && Within(tr.Allowed, kernel) {
				t.Fatalf("Resolve(%q) refused %q, which the kernel resolves inside to %q", requested, normalized, kernel)
			}
		}
	})
}
