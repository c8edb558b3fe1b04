package webhook

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPackageShape checks that exactly one file carries the package doc,
// that it says what the package guards, and that the package's code imports
// neither os nor log: secrets come from the caller, and logs go to the
// caller's slog.Logger.
func TestPackageShape(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			docs = append(docs, name)
			if doc := f.Doc.Text(); !strings.HasPrefix(doc, "Package webhook guards ") {
				t.Errorf("%s: package doc begins %q", name, strings.SplitN(doc, "\n", 2)[0])
			}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "os", "os/exec", "syscall", "log", "unsafe":
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
	if len(docs) != 1 {
		t.Errorf("package doc in %v, want exactly one file", docs)
	}
}
