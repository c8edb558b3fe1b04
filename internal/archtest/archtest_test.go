package archtest

import (
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
)

// moduleRoot is the repository root, two levels above this package.
const moduleRoot = "../.."

// restricted lists imports that only one package may use, outside tests.
var restricted = map[string]string{
	"os/exec":            "internal/guard/spawn", // the one execution boundary
	"modernc.org/sqlite": "internal/sqlitedb",    // the one database driver user
}

// goPackages maps each directory holding Go files to its parsed files.
func goPackages(t *testing.T) map[string][]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
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
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, filepath.Dir(path))
		pkgs[filepath.ToSlash(rel)] = append(pkgs[filepath.ToSlash(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages under %s; is moduleRoot right?", len(pkgs), moduleRoot)
	}
	return pkgs
}

func TestRestrictedImports(t *testing.T) {
	for dir, files := range goPackages(t) {
		for _, f := range files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if owner, ok := restricted[path]; ok && dir != owner {
					t.Errorf("%s imports %s; only %s may", dir, path, owner)
				}
			}
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
// package's test file imports go/parser.
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
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
