package fsroot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// TestWalkWideTree compares Walk with filepath.WalkDir on a tree wider than
// the read-ahead budget, with directories left out by visit, and checks
// that the walk holds no more directories open than its budget allows, and
// none afterwards.
func TestWalkWideTree(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for i := range 60 {
		for j := range 3 {
			sub := filepath.Join(dir, fmt.Sprintf("d%02d", i), fmt.Sprintf("e%d", j))
			os.MkdirAll(sub, 0o755)
			os.WriteFile(filepath.Join(sub, "f.txt"), nil, 0o644)
		}
	}
	skip := func(rel string) bool { return strings.HasSuffix(rel, "e1") || strings.HasPrefix(rel, "d13") }
	var want []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		want = append(want, rel)
		if d.IsDir() && skip(rel) {
			return filepath.SkipDir
		}
		return nil
	})
	s := openSet(t, dir)
	before := openFDs(t)
	// Open at once, at most: the read-ahead budget, one directory per level
	// being walked (the top, d, e), and the one that counts them.
	bound := before + prefetchBudget + 3 + 1
	for range 3 {
		var got []string
		err := resolve(t, s, dir).Walk(func(rel string, e Entry) bool {
			got = append(got, rel)
			if n := openFDs(t); n > bound {
				t.Fatalf("at %s: %d descriptors open, more than %d", rel, n, bound)
			}
			return !skip(rel)
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Walk differs from WalkDir (-want +got):\n%s", diff)
		}
	}
	// Stopping early: visit refuses everything after the first 20 entries.
	n := 0
	resolve(t, s, dir).Walk(func(string, Entry) bool { n++; return n < 20 })
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before the walks, %d after", before, after)
	}
}
