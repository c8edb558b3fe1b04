package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// newRoot is a fresh folder standing for /work, next to a canary file
// outside it; the canary's path is returned too.
func newRoot(t *testing.T) (root, canary string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(dir, "work")
	canary = filepath.Join(dir, "secret.txt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(canary, []byte("canary-1c7e"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, canary
}

// call runs the helper on root and decodes its answer into v (an error
// answer into a map).
func call(t *testing.T, root string, stdin string, args ...string) (code int, answer map[string]any, stdout string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(root, args, strings.NewReader(stdin), &out, &errOut)
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil {
		t.Fatalf("%q: stdout is not one JSON object: %v: %q", args, err, out.String())
	}
	return code, answer, out.String()
}

// TestWriteReadListSearch: a file written is read back, listed and found,
// at absolute and relative paths alike.
func TestWriteReadListSearch(t *testing.T) {
	root, _ := newRoot(t)
	if code, a, _ := call(t, root, "alpha\nneedle here\nomega\n", "write", "/work/notes/a.txt"); code != 0 || a["size"] != float64(24) {
		t.Fatalf("write: exit %d, %v", code, a)
	}
	if b, err := os.ReadFile(filepath.Join(root, "notes", "a.txt")); err != nil || string(b) != "alpha\nneedle here\nomega\n" {
		t.Fatalf("the file written: %q %v", b, err)
	}
	for _, p := range []string{"/work/notes/a.txt", "notes/a.txt", "./notes/../notes/a.txt"} {
		code, a, _ := call(t, root, "", "read", p)
		if code != 0 || a["content"] != "alpha\nneedle here\nomega\n" || a["path"] != "/work/notes/a.txt" {
			t.Errorf("read %s: exit %d, %v", p, code, a)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "notes", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var listing Listing
	_, _, out := call(t, root, "", "list", "notes")
	if err := json.Unmarshal([]byte(out), &listing); err != nil {
		t.Fatal(err)
	}
	want := Listing{Path: "/work/notes", Entries: []Entry{{"a.txt", "file", 24}, {"sub", "dir", 0}}}
	if diff := cmp.Diff(want, listing); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	var found Matches
	_, _, out = call(t, root, "", "search", "needle", "/work")
	if err := json.Unmarshal([]byte(out), &found); err != nil {
		t.Fatal(err)
	}
	wantFound := Matches{Text: "needle", Path: "/work", Matches: []Match{{"/work/notes/a.txt", 2, "needle here"}}}
	if diff := cmp.Diff(wantFound, found); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
}

// TestConfined: no command reaches outside /work, by a path or by a link.
func TestConfined(t *testing.T) {
	root, canary := newRoot(t)
	if err := os.Symlink(canary, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"read", canary},
		{"read", "../secret.txt"},
		{"read", "/work/../secret.txt"},
		{"read", "/etc/passwd"},
		{"read", "link"},
		{"read", "up/secret.txt"},
		{"list", "up"},
		{"list", "/"},
		{"search", "canary", "up"},
		{"write", "link"},
		{"write", "up/secret.txt"},
		{"write", "/tmp/x"},
	} {
		code, a, out := call(t, root, "overwritten", args...)
		if code != exitError || a["error"] == nil || strings.Contains(out, "canary-1c7e") {
			t.Errorf("%q: exit %d, %s", args, code, out)
		}
	}
	if b, _ := os.ReadFile(canary); string(b) != "canary-1c7e" {
		t.Errorf("the canary outside /work was written: %q", b)
	}
	// A search of /work does not follow the links out.
	if _, a, out := call(t, root, "", "search", "canary", "."); len(a["matches"].([]any)) != 0 {
		t.Errorf("search followed a link out of /work: %s", out)
	}
}

// TestBounds: each answer stays within its bound, and says it was cut.
func TestBounds(t *testing.T) {
	root, _ := newRoot(t)
	big := strings.Repeat("é", MaxRead) // two bytes a rune: the bound cuts one
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	code, a, _ := call(t, root, "", "read", "big.txt")
	if code != 0 || a["truncated"] != true || len(a["content"].(string)) != MaxRead || a["size"] != float64(2*MaxRead) {
		t.Errorf("read of %d bytes: exit %d, truncated %v, %d bytes", 2*MaxRead, code, a["truncated"], len(a["content"].(string)))
	}
	if code, a, _ := call(t, root, strings.Repeat("x", MaxWrite+1), "write", "huge.txt"); code != exitError || a["error"] == nil {
		t.Errorf("a write over MaxWrite: exit %d, %v", code, a)
	}
	if _, err := os.Lstat(filepath.Join(root, "huge.txt")); err == nil {
		t.Error("a write over MaxWrite left a file")
	}
	many := filepath.Join(root, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for i := range MaxEntries + 1 {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&lines, "hit %d %s\n", i, strings.Repeat("y", MaxLine))
	}
	if code, a, _ := call(t, root, "", "list", "many"); code != 0 || a["truncated"] != true || len(a["entries"].([]any)) != MaxEntries {
		t.Errorf("list of %d entries: exit %d, truncated %v, %d entries", MaxEntries+1, code, a["truncated"], len(a["entries"].([]any)))
	}
	if err := os.WriteFile(filepath.Join(root, "hits.txt"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, a, _ = call(t, root, "", "search", "hit", "hits.txt")
	matches := a["matches"].([]any)
	if code != 0 || a["truncated"] != true || len(matches) != MaxMatches || len(matches[0].(map[string]any)["text"].(string)) != MaxLine {
		t.Errorf("search of %d matching lines: exit %d, truncated %v, %d matches", MaxEntries+1, code, a["truncated"], len(matches))
	}
}

// TestUsage: a command that is not understood exits 2, with an error.
func TestUsage(t *testing.T) {
	root, _ := newRoot(t)
	for _, args := range [][]string{nil, {"rm", "x"}, {"read"}, {"read", "a", "b"}, {"search", "x"}} {
		if code, a, _ := call(t, root, "", args...); code != exitUsage || a["error"] == nil {
			t.Errorf("%q: exit %d, %v", args, code, a)
		}
	}
}
