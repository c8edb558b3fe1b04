package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/pin"
)

// FuzzParse: Parse never panics; what it accepts has a valid name and an
// exact version, and reads the same from its canonical form (the bytes the
// cache keeps).
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"official", "invalid"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"name": "io.github.user/a", "description": "d", "version": "1.x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data)
		if err != nil {
			return
		}
		if NameProblem(e.Name) != "" || VersionProblem(e.Version) != "" || e.Description == "" {
			t.Fatalf("accepted %+v", e)
		}
		for _, k := range e.Packages {
			if k.Version != "" && VersionProblem(k.Version) != "" {
				t.Fatalf("accepted package version %q", k.Version)
			}
		}
		canon, err := pin.CanonicalJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form refused: %v", err)
		}
		if d := cmp.Diff(e, again); d != "" {
			t.Fatalf("canonical form reads otherwise:\n%s", d)
		}
	})
}
