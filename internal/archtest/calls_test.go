package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A forbidden use is a package-level identifier that only the listed
// package directories may refer to, outside tests; none, for nowhere.
type forbidden struct {
	pkg, name string
	owners    []string
	why       string
}

// envOwners are the packages that read the environment: the command line,
// which turns it into options, and envscrub, which builds child
// environments from the parent's.
var envOwners = []string{"internal/cli", "internal/guard/envscrub"}

const envWhy = "configuration is read in internal/cli and passed in as options"
const httpWhy = "outbound HTTP goes through internal/guard/netguard"

var forbiddenUses = []forbidden{
	{"os", "Getenv", envOwners, envWhy},
	{"os", "LookupEnv", envOwners, envWhy},
	{"os", "Environ", envOwners, envWhy},
	{"os", "ExpandEnv", envOwners, envWhy},
	{"syscall", "Getenv", envOwners, envWhy},
	{"syscall", "Environ", envOwners, envWhy},
	{"net/http", "DefaultClient", nil, httpWhy},
	{"net/http", "DefaultTransport", nil, httpWhy},
	{"net/http", "Get", nil, httpWhy},
	{"net/http", "Head", nil, httpWhy},
	{"net/http", "Post", nil, httpWhy},
	{"net/http", "PostForm", nil, httpWhy},
}

// forbiddenIn returns the forbidden uses in one parsed file of package
// directory dir, as "file:line: pkg.Name". A use is any reference, a call
// or a function value, through whatever name the file imports the
// package by; a dot import of a watched package is one too.
func forbiddenIn(fset *token.FileSet, dir string, f *ast.File) []string {
	watched := map[string]bool{}
	for _, fb := range forbiddenUses {
		watched[fb.pkg] = true
	}
	names := map[string]string{} // import name in this file -> path
	var found []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !watched[p] {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			found = append(found, fmt.Sprintf("%s: dot import of %s", fset.Position(imp.Pos()), p))
			continue
		}
		names[name] = p
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		// A package name resolves to no object in the file; a local
		// variable of the same name does.
		if !ok || id.Obj != nil {
			return true
		}
		p, ok := names[id.Name]
		if !ok {
			return true
		}
		for _, fb := range forbiddenUses {
			if fb.pkg == p && fb.name == sel.Sel.Name && !slices.Contains(fb.owners, dir) {
				found = append(found, fmt.Sprintf("%s: %s.%s (%s)", fset.Position(sel.Pos()), p, fb.name, fb.why))
			}
		}
		return true
	})
	return found
}

// TestForbiddenUses parses every non-test Go file in full and refuses the
// forbidden uses outside their owners. Test code is free: _test.go files,
// the packages only tests import (testSupport) and the programs under
// testdata, which are not walked.
func TestForbiddenUses(t *testing.T) {
	support := testSupport(goFiles(t), modulePath(t))
	fset := token.NewFileSet()
	files := 0
	for _, f := range parseGoFiles(t, fset, 0) {
		if f.test || support[f.dir] {
			continue
		}
		files++
		for _, use := range forbiddenIn(fset, f.dir, f.ast) {
			t.Error(use)
		}
	}
	if files < 50 {
		t.Fatalf("parsed only %d files under %s; is moduleRoot right?", files, moduleRoot)
	}
}

// TestForbiddenUsesSeesThrough proves the scanner finds a use however the
// file names the package, and only a use of the package.
func TestForbiddenUsesSeesThrough(t *testing.T) {
	tests := []struct {
		name, dir, src string
		want           []string
	}{
		{"call", "internal/x", `import "os"; func f() { os.Getenv("A") }`, []string{"os.Getenv"}},
		{"function value", "internal/x", `import "os"; var get = os.LookupEnv`, []string{"os.LookupEnv"}},
		{"renamed import", "internal/x", `import xos "os"; func f() []string { return xos.Environ() }`, []string{"os.Environ"}},
		{"renamed http", "internal/x", `import h "net/http"; var c = h.DefaultClient`, []string{"net/http.DefaultClient"}},
		{"http.Get", "internal/x", `import "net/http"; func f() { http.Get("http://127.0.0.1/") }`, []string{"net/http.Get"}},
		{"transport", "internal/x", `import "net/http"; var t = http.DefaultTransport`, []string{"net/http.DefaultTransport"}},
		{"dot import", "internal/x", `import . "os"; func f() { Getenv("A") }`, []string{"dot import of os"}},
		{"owner", "internal/cli", `import "os"; func f() { os.Getenv("A") }`, nil},
		{"owner, but http", "internal/cli", `import "net/http"; var c = http.DefaultClient`, []string{"net/http.DefaultClient"}},
		{"shadowed by a local", "internal/x", `import "net/http"; func f(os struct{ Getenv func(string) string }) { os.Getenv("A"); _ = http.NewRequest }`, nil},
		{"other package's Getenv", "internal/x", `import os "example.com/notos"; func f() { os.Getenv("A") }`, nil},
		{"allowed http", "internal/x", `import "net/http"; var c = &http.Client{}`, nil},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, use := range forbiddenIn(fset, tt.dir, f) {
			for _, w := range tt.want {
				if strings.Contains(use, w) {
					use = w
				}
			}
			got = append(got, use)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: uses (-want +got):\n%s", tt.name, diff)
		}
	}
}
