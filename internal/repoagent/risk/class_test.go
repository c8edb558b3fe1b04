package risk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// declaredClasses parses the package's source and returns every constant
// declared with type Class, so that a class added without a place in ranked
// fails the test below.
func declaredClasses(t *testing.T) []Class {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []Class
	fset := token.NewFileSet()
	for _, name := range files {
		if filepath.Ext(name) != ".go" || len(name) > 8 && name[len(name)-8:] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Class" {
					continue
				}
				for _, n := range vs.Names {
					obj := n.Name
					c, ok := map[string]Class{
						"Docs": Docs, "Tests": Tests, "Code": Code, "Config": Config, "Dependencies": Dependencies,
						"CI": CI, "AgentPolicy": AgentPolicy, "Secrets": Secrets, "DependencyMajor": DependencyMajor,
						"DependencySource": DependencySource, "InstallHooks": InstallHooks, "InfraDeploy": InfraDeploy,
						"ReleasePublish": ReleasePublish, "DeletedTests": DeletedTests, "MassChange": MassChange,
						"Verification": Verification, "Executable": Executable,
						"Unclassified": Unclassified,
					}[obj]
					if !ok {
						t.Errorf("constant %s of type Class is not known to this test; add it here and to ranked", obj)
						continue
					}
					out = append(out, c)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("found no Class constants; is the test running in the package directory?")
	}
	return out
}

// TestHighImpactNotLow checks the class table: every declared class is
// exactly one of high or low, the five low ones are the ones a repository
// may allow-list, every high class ranks above every low one, the ranks
// are a total order, Known round-trips every class and rejects anything
// else, and an undeclared class is treated as Unclassified.
func TestHighImpactNotLow(t *testing.T) {
	declared := declaredClasses(t)
	low := []Class{Docs, Tests, Code, Config, Dependencies}
	if len(declared) != len(ranked) {
		t.Errorf("%d classes declared, %d ranked", len(declared), len(ranked))
	}
	ranks := map[int]Class{}
	for _, c := range declared {
		if !slices.Contains(ranked[:], c) {
			t.Errorf("%s is declared but has no rank", c)
		}
		if c.HighImpact() == slices.Contains(low, c) {
			t.Errorf("%s: HighImpact() = %v, but it is %sin the low list", c, c.HighImpact(), map[bool]string{true: "", false: "not "}[slices.Contains(low, c)])
		}
		if other, dup := ranks[c.Rank()]; dup {
			t.Errorf("%s and %s share rank %d", c, other, c.Rank())
		}
		ranks[c.Rank()] = c
		got, ok := Known(string(c))
		if !ok || got != c {
			t.Errorf("Known(%q) = %q, %v", c, got, ok)
		}
	}
	for _, h := range declared {
		for _, l := range low {
			if h.HighImpact() && h.Rank() <= l.Rank() {
				t.Errorf("high %s (rank %d) does not rank above low %s (rank %d)", h, h.Rank(), l, l.Rank())
			}
		}
	}
	for i := 1; i < len(low); i++ {
		if low[i].Rank() <= low[i-1].Rank() {
			t.Errorf("low classes out of order: %s before %s", low[i-1], low[i])
		}
	}
	if top := ranked[len(ranked)-1]; top != Unclassified {
		t.Errorf("the top class is %s, want Unclassified", top)
	}
	for _, name := range []string{"", "DOCS", "Docs", " docs", "docs ", "doc", "test", "high", "low", "ci,docs", "unclassified\x00"} {
		if c, ok := Known(name); ok {
			t.Errorf("Known(%q) = %q, true; want rejected", name, c)
		}
	}
	for _, c := range []Class{"", "bogus", "DOCS"} {
		if !c.HighImpact() || c.Rank() != Unclassified.Rank() {
			t.Errorf("undeclared class %q: HighImpact %v, rank %d; want high, ranked as Unclassified", c, c.HighImpact(), c.Rank())
		}
	}
}
