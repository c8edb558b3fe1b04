package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// moduleRoot is the repository root, two levels above this package.
const moduleRoot = "../.."

// restricted lists imports that only one package may use, outside tests.
var restricted = map[string]string{
	"os/exec":                         "internal/guard/spawn", // the one execution boundary
	"modernc.org/sqlite":              "internal/database",    // the one database package
	"github.com/jackc/pgx/v5/stdlib":  "internal/database",
	"github.com/jackc/pgx/v5/pgxpool": "internal/database",
	// The one renderer and sanitizer of Markdown shown in pages.
	"github.com/yuin/goldmark":           "internal/guard/markdown",
	"github.com/microcosm-cc/bluemonday": "internal/guard/markdown",
	// The one place WebAuthn is spoken: passkeys and what they bind.
	"github.com/go-webauthn/webauthn/webauthn": "internal/workspace/passkeys",
	"github.com/go-webauthn/webauthn/protocol": "internal/workspace/passkeys",
}

// testSupportMay lists the restricted imports that a test-support package
// may use as well: one that test files import and no non-test file does,
// such as internal/testgit, which runs git to build fixtures.
var testSupportMay = map[string]bool{"os/exec": true}

// A goFile is a parsed Go file (imports and comments only) and the
// directory of its package, relative to the module root.
type goFile struct {
	dir  string
	test bool // a _test.go file
	ast  *ast.File
}

// goFiles parses every Go file of the module, test files included,
// imports and comments only.
func goFiles(t *testing.T) []goFile {
	t.Helper()
	return parseGoFiles(t, token.NewFileSet(), parser.ParseComments|parser.ImportsOnly)
}

// parseGoFiles parses every Go file of the module with mode, skipping
// hidden directories, testdata and node_modules.
func parseGoFiles(t *testing.T, fset *token.FileSet, mode parser.Mode) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != moduleRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, filepath.Dir(path))
		files = append(files, goFile{dir: filepath.ToSlash(rel), test: strings.HasSuffix(name, "_test.go"), ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// goPackages maps each directory holding Go files to its parsed non-test
// files.
func goPackages(t *testing.T) map[string][]*ast.File {
	t.Helper()
	pkgs := map[string][]*ast.File{}
	for _, f := range goFiles(t) {
		if !f.test {
			pkgs[f.dir] = append(pkgs[f.dir], f.ast)
		}
	}
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages under %s; is moduleRoot right?", len(pkgs), moduleRoot)
	}
	return pkgs
}

// modulePath reads the module's import path from go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(path), `"`)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// testSupport returns the directories of the module's packages that test
// files import and no non-test file does.
func testSupport(files []goFile, module string) map[string]bool {
	byTests, byCode := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		for _, imp := range f.ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			dir, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			if f.test {
				byTests[dir] = true
			} else {
				byCode[dir] = true
			}
		}
	}
	only := map[string]bool{}
	for dir := range byTests {
		if !byCode[dir] {
			only[dir] = true
		}
	}
	return only
}

// restrictedUses lists each non-test file's import of a restricted package
// outside its owner, save those that testSupportMay allows a test-support
// package.
func restrictedUses(files []goFile, module string) []string {
	support := testSupport(files, module)
	var bad []string
	for _, f := range files {
		if f.test {
			continue
		}
		for _, imp := range f.ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			owner, ok := restricted[path]
			if !ok || f.dir == owner || testSupportMay[path] && support[f.dir] {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s imports %s; only %s may", f.dir, path, owner))
		}
	}
	return bad
}

func TestRestrictedImports(t *testing.T) {
	for _, bad := range restrictedUses(goFiles(t), modulePath(t)) {
		t.Error(bad)
	}
}

// TestRestrictedImportsRule runs the rule on made-up files: a package only
// tests import may run programs; once a non-test file imports it, or where
// nothing imports it, it may not.
func TestRestrictedImportsRule(t *testing.T) {
	file := func(dir string, test bool, imports ...string) goFile {
		src := "package p\n"
		for _, imp := range imports {
			src += "import " + strconv.Quote(imp) + "\n"
		}
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		return goFile{dir: dir, test: test, ast: f}
	}
	const m = "example.com/m"
	support := file("internal/testfix", false, "os/exec")
	tests := []struct {
		name  string
		files []goFile
		want  []string
	}{
		{"the owner", []goFile{file("internal/guard/spawn", false, "os/exec")}, nil},
		{"a test file", []goFile{file("internal/a", true, "os/exec")}, nil},
		{"imported by tests only", []goFile{support, file("internal/a", true, m+"/internal/testfix")}, nil},
		{"imported by code too", []goFile{support, file("internal/a", true, m+"/internal/testfix"), file("internal/b", false, m+"/internal/testfix")},
			[]string{"internal/testfix imports os/exec; only internal/guard/spawn may"}},
		{"imported by nothing", []goFile{file("cmd/tool", false, "os/exec")},
			[]string{"cmd/tool imports os/exec; only internal/guard/spawn may"}},
		{"only os/exec", []goFile{file("internal/testfix", false, "modernc.org/sqlite"), file("internal/a", true, m+"/internal/testfix")},
			[]string{"internal/testfix imports modernc.org/sqlite; only internal/database may"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, restrictedUses(tc.files, m)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestOnePackageDoc(t *testing.T) {
	for dir, files := range goPackages(t) {
		var docs []string
		for _, f := range files {
			if f.Doc != nil {
				docs = append(docs, f.Doc.Text())
			}
		}
		if len(docs) != 1 {
			t.Errorf("%s: %d package doc comments, want exactly 1", dir, len(docs))
			continue
		}
		name := files[0].Name.Name
		want := "Package " + name + " "
		if name == "main" {
			want = "Command " + filepath.Base(dir) + " "
		}
		if !strings.HasPrefix(docs[0], want) {
			t.Errorf("%s: package doc should begin %q, got %q", dir, want, firstLine(docs[0]))
		}
	}
}

// TestScannerSeesImports proves the scanner reads imports: this very
// package's test file imports go/parser, and the test-support packages are
// seen as such.
func TestScannerSeesImports(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "archtest_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		paths = append(paths, p)
	}
	if !slices.Contains(paths, "go/parser") {
		t.Errorf("imports read as %v", paths)
	}
	if _, err := os.Stat(filepath.Join(moduleRoot, "go.mod")); err != nil {
		t.Errorf("moduleRoot %s has no go.mod: %v", moduleRoot, err)
	}
	support := testSupport(goFiles(t), modulePath(t))
	for _, dir := range []string{"internal/testnet", "internal/testgit", "internal/testref", "internal/mcpserver/mcptest"} {
		if !support[dir] {
			t.Errorf("%s is not seen as a package only tests import", dir)
		}
	}
	if support["internal/guard/spawn"] {
		t.Error("internal/guard/spawn is seen as a package only tests import")
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
