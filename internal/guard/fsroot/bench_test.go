package fsroot

import (
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
