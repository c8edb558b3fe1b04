package filesystem

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// node is a directory_tree entry as the reference server builds it.
type node struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Children *[]node `json:"children,omitempty"`
}

// TestTreeWriterMatchesStringify compares the streaming writer with the
// reference's JSON.stringify(tree, null, 2), quoted as a JSON string for the
// reply, on random trees and awkward names. encoding/json's indented
// encoding reproduces JSON.stringify save that it escapes U+2028, U+2029 and
// invalid UTF-8, which JSON.stringify writes as themselves (invalid UTF-8 as
// U+FFFD); the expected text puts them back.
func TestTreeWriterMatchesStringify(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	names := []string{"a", "b.txt", `quote"d`, `back\\slash`, "tab\tnew\nline", "ctl\x01", "é😀", "<html>&",
		"line\u2028sep", "para\u2029", "bad\xffbyte", "repl\ufffdchar"}
	var gen func(depth int) []node
	gen = func(depth int) []node {
		var out []node
		for range r.IntN(4) {
			n := node{Name: names[r.IntN(len(names))], Type: "file"}
			if depth < 4 && r.IntN(2) == 0 {
				children := gen(depth + 1)
				if children == nil {
					children = []node{}
				}
				n.Type, n.Children = "directory", &children
			}
			out = append(out, n)
		}
		return out
	}
	stringifyFixes := strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029", `\ufffd`, "\ufffd")
	var emit func(w *treeWriter, nodes []node, depth int)
	emit = func(w *treeWriter, nodes []node, depth int) {
		for _, n := range nodes {
			w.entry(depth, n.Name, n.Children != nil)
			if n.Children != nil {
				emit(w, *n.Children, depth+1)
			}
		}
	}
	for i := range 300 {
		tree := gen(0)
		if tree == nil {
			tree = []node{}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(tree); err != nil {
			t.Fatal(err)
		}
		text := stringifyFixes.Replace(strings.TrimSuffix(buf.String(), "\n"))
		buf.Reset()
		if err := enc.Encode(text); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		var w treeWriter
		emit(&w, tree, 0)
		if got := string(w.finish()); got != want {
			t.Fatalf("tree %d differs (-stringify +ours):\n%s", i, cmp.Diff(want, got))
		}
	}
}
