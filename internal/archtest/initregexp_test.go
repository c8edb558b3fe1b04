package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const eagerRegexpWhy = "every zero command's start-up pays for every package-level init of every package linked in; " +
	"compile on first use: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(...) })"

// regexpCompilers are the regexp functions that compile a pattern.
var regexpCompilers = map[string]bool{"Compile": true, "MustCompile": true, "CompilePOSIX": true, "MustCompilePOSIX": true}

// eagerRegexpsIn returns the places in one parsed file where a regexp is
// compiled during package init, as "file:line: var NAME (regexp.F)": a
// package-level variable whose value calls a regexp compiler, anywhere in
// it (in a composite literal, an argument, or a function literal called
// there and then), and a call in a func init. A function literal that is
// only passed on, as to sync.OnceValue, runs later and is not looked into.
func eagerRegexpsIn(fset *token.FileSet, f *ast.File) []string {
	var names []string // the names this file imports regexp by; "." for a dot import
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "regexp" {
			name := "regexp"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	// compiler reports whether call is a call of a regexp compiler, and
	// which one.
	compiler := func(call *ast.CallExpr) (string, bool) {
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			id, ok := fn.X.(*ast.Ident)
			// A package name resolves to no object in the file; a
			// local variable of the same name does.
			if ok && id.Obj == nil && regexpCompilers[fn.Sel.Name] {
				for _, n := range names {
					if id.Name == n {
						return fn.Sel.Name, true
					}
				}
			}
		case *ast.Ident:
			for _, n := range names {
				if n == "." && fn.Obj == nil && regexpCompilers[fn.Name] {
					return fn.Name, true
				}
			}
		}
		return "", false
	}
	var found []string
	// look reports the compiler calls that evaluating n makes, in what.
	look := func(what string, n ast.Node) {
		called := map[*ast.FuncLit]bool{}
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if lit, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok {
					called[lit] = true
				}
				if name, ok := compiler(n); ok {
					found = append(found, fmt.Sprintf("%s: %s (regexp.%s)", fset.Position(n.Pos()), what, name))
				}
			case *ast.FuncLit:
				return called[n]
			}
			return true
		})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				var vars []string
				for _, id := range vs.Names {
					vars = append(vars, id.Name)
				}
				for _, v := range vs.Values {
					look("var "+strings.Join(vars, ", "), v)
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" && d.Body != nil {
				look("func init", d.Body)
			}
		}
	}
	return found
}

// TestNoEagerRegexps parses every non-test Go file under internal/ and
// cmd/ and refuses a regexp compiled at package init: compiling one is
// not free (a counted repetition such as {0,199} compiles into a program
// that many instructions long), and start-up of every zero command pays
// for every package-level init of every package the binary links, used
// or not.
func TestNoEagerRegexps(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	for _, f := range parseGoFiles(t, fset, 0) {
		if f.test || !strings.HasPrefix(f.dir+"/", "internal/") && !strings.HasPrefix(f.dir+"/", "cmd/") {
			continue
		}
		files++
		for _, at := range eagerRegexpsIn(fset, f.ast) {
			t.Errorf("%s compiles a regexp at package init: %s", at, eagerRegexpWhy)
		}
	}
	if files < 50 {
		t.Fatalf("parsed only %d files under %s; is moduleRoot right?", files, moduleRoot)
	}
}

// TestNoEagerRegexpsSeesThrough proves the scanner finds a regexp
// compiled at init however it is written, and leaves alone one compiled
// on first use or inside a function.
func TestNoEagerRegexpsSeesThrough(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"var", `import "regexp"; var re = regexp.MustCompile("a")`, []string{"var re (regexp.MustCompile)"}},
		{"Compile", `import "regexp"; var re, err = regexp.Compile("a")`, []string{"var re, err (regexp.Compile)"}},
		{"var block", "import \"regexp\"\nvar (\n\tok = 1\n\tre = regexp.MustCompilePOSIX(\"a\")\n)", []string{"var re (regexp.MustCompilePOSIX)"}},
		{"table", `import "regexp"; var rules = []struct{ re *regexp.Regexp }{{regexp.MustCompile("a")}, {regexp.MustCompile("b")}}`,
			[]string{"var rules (regexp.MustCompile)", "var rules (regexp.MustCompile)"}},
		{"map", `import "regexp"; var rules = map[string]*regexp.Regexp{"a": regexp.MustCompile("a")}`, []string{"var rules (regexp.MustCompile)"}},
		{"argument", `import "regexp"; var s = wrap(regexp.MustCompile("a")); func wrap(r *regexp.Regexp) any { return r }`, []string{"var s (regexp.MustCompile)"}},
		{"called func literal", `import "regexp"; var re = func() *regexp.Regexp { return regexp.MustCompile("a") }()`, []string{"var re (regexp.MustCompile)"}},
		{"renamed import", `import rx "regexp"; var re = rx.MustCompile("a")`, []string{"var re (regexp.MustCompile)"}},
		{"dot import", `import . "regexp"; var re = MustCompile("a")`, []string{"var re (regexp.MustCompile)"}},
		{"func init", `import "regexp"; var re *regexp.Regexp; func init() { re = regexp.MustCompile("a") }`, []string{"func init (regexp.MustCompile)"}},
		{"on first use", `import ("regexp"; "sync"); var re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("a") })`, nil},
		{"lazy table", `import ("regexp"; "sync"); var rules = sync.OnceValue(func() []*regexp.Regexp { return []*regexp.Regexp{regexp.MustCompile("a")} })`, nil},
		{"in a function", `import "regexp"; func f() bool { return regexp.MustCompile("a").MatchString("a") }`, nil},
		{"uncompiled", `import "regexp"; var q = regexp.QuoteMeta("a")`, nil},
		{"other package's MustCompile", `import regexp "example.com/notregexp"; var re = regexp.MustCompile("a")`, nil},
		{"shadowed by a local", `import "regexp"; var n = func(regexp struct{ MustCompile func(string) int }) int { return regexp.MustCompile("a") }(s); var s struct{ MustCompile func(string) int }; var _ regexp.Regexp`, nil},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, at := range eagerRegexpsIn(fset, f) {
			_, what, _ := strings.Cut(at, ": ")
			got = append(got, what)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: found (-want +got):\n%s", tt.name, diff)
		}
	}
}
