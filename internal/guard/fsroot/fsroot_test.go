package fsroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
)

func openSet(t *testing.T, dirs ...string) *Set {
	t.Helper()
	s, err := Open(dirs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestResolveRefusesEscapes(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	for _, e := range tr.Escapes() {
		t.Run(e.Name, func(t *testing.T) {
			p, err := s.Resolve(e.Path)
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", e.Path, p.Abs)
			}
			if e.Name != "NUL byte" && !errors.Is(err, ErrOutside) {
				t.Errorf("Resolve(%q) error %v does not wrap ErrOutside", e.Path, err)
			}
			if strings.Contains(err.Error(), tr.Outside) && !strings.Contains(e.Path, tr.Outside) {
				t.Errorf("error %q reveals where a link leads", err)
			}
		})
	}
}

func TestResolveAllowsInside(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	tests := []struct {
		path, want string
		exists     bool
	}{
		{tr.In("file.txt"), tr.In("file.txt"), true},
		{"file.txt", tr.In("file.txt"), true},
		{"./sub//inner.txt", tr.In("sub/inner.txt"), true},
		{tr.In("sub/../file.txt"), tr.In("file.txt"), true},
		{tr.In("link_in"), tr.In("file.txt"), true},
		{tr.In("link_in_dir/inner.txt"), tr.In("sub/inner.txt"), true},
		{tr.In("link_abs_in/inner.txt"), tr.In("sub/inner.txt"), true},
		{tr.In("dangling_in"), tr.In("new_inside.txt"), false},
		{tr.In("new/deeper/file.txt"), tr.In("new/deeper/file.txt"), false},
		{tr.In("link_in_dir/new.txt"), tr.In("sub/new.txt"), false},
		{tr.Allowed, tr.Allowed, true},
		{tr.Allowed + "/", tr.Allowed, true},
	}
	for _, tt := range tests {
		p, err := s.Resolve(tt.path)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.path, err)
			continue
		}
		if p.Abs != tt.want || p.Exists != tt.exists {
			t.Errorf("Resolve(%q) = %q exists=%v, want %q exists=%v", tt.path, p.Abs, p.Exists, tt.want, tt.exists)
		}
	}
}

// A root given through a symbolic link (as /tmp is on macOS) accepts paths
// spelled through the link and through its target.
func TestRootGivenThroughLink(t *testing.T) {
	tr := escapetest.New(t)
	alias := filepath.Join(tr.Base, "alias")
	if err := os.Symlink(tr.Allowed, alias); err != nil {
		t.Fatal(err)
	}
	s := openSet(t, alias)
	got := s.Roots()
	want := []Root{{Given: alias, Canonical: tr.Allowed}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Root{})); diff != "" {
		t.Fatalf("Roots() mismatch (-want +got):\n%s", diff)
	}
	for _, path := range []string{filepath.Join(alias, "file.txt"), tr.In("file.txt"), "file.txt"} {
		p, err := s.Resolve(path)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", path, err)
		}
		if p.Abs != tr.In("file.txt") {
			t.Errorf("Resolve(%q) = %q", path, p.Abs)
		}
	}
	if _, err := s.Resolve(filepath.Join(alias, "link_out_file")); !errors.Is(err, ErrOutside) {
		t.Errorf("escape through aliased root: err = %v", err)
	}
}

func TestHomeExpansion(t *testing.T) {
	tr := escapetest.New(t)
	t.Setenv("HOME", tr.Allowed)
	s := openSet(t, "~/sub")
	if got := s.Roots()[0].Given; got != tr.In("sub") {
		t.Fatalf("root ~/sub = %q", got)
	}
	p, err := s.Resolve("~/sub/inner.txt")
	if err != nil || p.Abs != tr.In("sub/inner.txt") {
		t.Fatalf("Resolve(~/sub/inner.txt) = %v, %v", p, err)
	}
	if _, err := s.Resolve("~/file.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("~/file.txt outside the root ~/sub: err = %v", err)
	}
	// ~user and a~ are names, not the home directory.
	p, err = s.Resolve("~nobody")
	if err != nil || p.Abs != tr.In("sub/~nobody") {
		t.Errorf("Resolve(~nobody) = %v, %v", p, err)
	}
}

func TestOpenRejectsUnusableDirectories(t *testing.T) {
	tr := escapetest.New(t)
	tests := map[string][]string{
		"none":         {},
		"missing":      {filepath.Join(tr.Base, "missing")},
		"file":         {tr.In("file.txt")},
		"empty string": {""},
		"NUL":          {tr.Allowed + "\x00"},
		"one bad":      {tr.Allowed, filepath.Join(tr.Base, "missing")},
		"dangling":     {tr.In("dangling_out")},
	}
	for name, dirs := range tests {
		if s, err := Open(dirs); err == nil {
			s.Close()
			t.Errorf("%s: Open(%q) succeeded", name, dirs)
		}
	}
	if os.Geteuid() != 0 { // root reads everything
		locked := filepath.Join(tr.Base, "locked")
		os.Mkdir(locked, 0o000)
		if s, err := Open([]string{locked}); err == nil {
			s.Close()
			t.Errorf("Open(unreadable dir) succeeded")
		}
	}
}

func TestNarrow(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	tests := []struct {
		name        string
		client      []string
		wantRoots   []string
		wantSkipped int
	}{
		{"inside narrows", []string{tr.In("sub")}, []string{tr.In("sub")}, 0},
		{"containing keeps the command line root", []string{tr.Base}, []string{tr.Allowed}, 0},
		{"outside is dropped", []string{tr.Outside}, nil, 1},
		{"prefix collision is dropped", []string{tr.Evil}, nil, 1},
		{"link leading out is dropped", []string{tr.In("link_out_dir")}, nil, 1},
		{"link staying in narrows", []string{tr.In("link_in_dir")}, []string{tr.In("sub")}, 0},
		{"missing is dropped", []string{tr.In("nope")}, nil, 1},
		{"relative is dropped", []string{"sub"}, nil, 1},
		{"mixed", []string{tr.Outside, tr.In("sub")}, []string{tr.In("sub")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, skipped := s.Narrow(tt.client)
			defer n.Close()
			var got []string
			for _, r := range n.Roots() {
				got = append(got, r.Canonical)
			}
			if diff := cmp.Diff(tt.wantRoots, got); diff != "" {
				t.Errorf("roots mismatch (-want +got):\n%s", diff)
			}
			if len(skipped) != tt.wantSkipped {
				t.Errorf("skipped = %v, want %d", skipped, tt.wantSkipped)
			}
		})
	}
	n, _ := s.Narrow([]string{tr.In("sub")})
	defer n.Close()
	if _, err := n.Resolve(tr.In("file.txt")); !errors.Is(err, ErrOutside) {
		t.Errorf("narrowed set still allows the wider root: %v", err)
	}
	if _, err := n.Resolve(tr.In("sub/inner.txt")); err != nil {
		t.Errorf("narrowed set refuses its own root: %v", err)
	}
	empty, _ := s.Narrow([]string{tr.Outside})
	defer empty.Close()
	if _, err := empty.Resolve("file.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("empty set allows a relative path: %v", err)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, p string
		want   bool
	}{
		{"/r/allowed", "/r/allowed", true},
		{"/r/allowed", "/r/allowed/x", true},
		{"/r/allowed", "/r/allowed_evil", false},
		{"/r/allowed", "/r/allowed_evil/x", false},
		{"/r/allowed", "/r", false},
		{"/r/allowed", "/r/allowedx/../allowed", false}, // callers pass clean paths
		{"/", "/etc/passwd", true},
		{"/", "/", true},
		{"/a", "/", false},
		{"/usr", "/usrx/bin", false},
		{"/a", "/a/..b", true},
	}
	for _, tt := range tests {
		if got := Within(tt.dir, tt.p); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.dir, tt.p, got, tt.want)
		}
	}
}

func TestResolveRejectsMalformed(t *testing.T) {
	tr := escapetest.New(t)
	s := openSet(t, tr.Allowed)
	for path, want := range map[string]string{
		"":                   "empty",
		"file.txt\x00":       "NUL",
		`C:\Windows\win.ini`: "Windows drive",
		"c:/x":               "Windows drive",
	} {
		if _, err := s.Resolve(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %v, want an error mentioning %q", path, err, want)
		}
	}
}
