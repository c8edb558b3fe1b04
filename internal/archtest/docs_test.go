package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSecurityDocsNameRealTests checks that every test a claim in
// docs/security names exists, so that a renamed or deleted test cannot leave
// a claim without its proof.
func TestSecurityDocsNameRealTests(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(moduleRoot, "docs/security/*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no security docs found: %v", err)
	}
	var tests strings.Builder
	filepath.WalkDir(moduleRoot, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, _ := os.ReadFile(path)
			tests.Write(b)
		}
		return nil
	})
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		found := named.FindAllStringSubmatch(string(b), -1)
		if len(found) == 0 {
			t.Errorf("%s names no test", doc)
		}
		for _, m := range found {
			if !strings.Contains(tests.String(), "func "+m[1]+"(") {
				t.Errorf("%s names %s, which does not exist", filepath.Base(doc), m[1])
			}
		}
	}
}
