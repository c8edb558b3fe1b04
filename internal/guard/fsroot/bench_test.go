package fsroot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
)

func BenchmarkResolve(b *testing.B) {
	tr := escapetest.New(b)
	s, err := Open([]string{tr.Allowed})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, bc := range []struct{ name, path string }{
		{"file", tr.In("sub/inner.txt")},
		{"relative", "sub/inner.txt"},
		{"through link", tr.In("link_in_dir/inner.txt")},
		{"new file", tr.In("sub/new/deeper.txt")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Resolve(bc.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWalk walks 5,000 files in 100 directories, the tree of
// bench/filesystem.sh, visiting every entry.
func BenchmarkWalk(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("dir%02d", d))
		os.Mkdir(sub, 0o755)
		for f := range 50 {
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.txt", f)), nil, 0o644)
		}
	}
	s, err := Open([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	p, err := s.Resolve(dir)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		if err := p.Walk(func(_ string, e Entry) bool { n++; return e.Dir }); err != nil || n != 5100 {
			b.Fatal(n, err)
		}
	}
}
