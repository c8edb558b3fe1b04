package filesystem

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

func start(t *testing.T, dirs ...string) *mcp.ClientSession {
	t.Helper()
	set, err := fsroot.Open(dirs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return mcptest.Connect(t, New(set, io.Discard), nil)
}

// pathCall is one way to hand a path to a tool.
type pathCall struct {
	tool string
	args func(path string, tr *escapetest.Tree) map[string]any
}

// pathCalls covers every tool that takes a path, and both ends of move_file.
var pathCalls = []pathCall{
	{"read_text_file", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"read_text_file", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p, "head": 1} }},
	{"read_text_file", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p, "tail": 1} }},
	{"read_file", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"read_media_file", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"read_multiple_files", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"paths": []string{p}} }},
	{"write_file", func(p string, _ *escapetest.Tree) map[string]any {
		return map[string]any{"path": p, "content": "pwned\n"}
	}},
	{"edit_file", func(p string, _ *escapetest.Tree) map[string]any {
		return map[string]any{"path": p, "edits": []map[string]any{{"oldText": "secret", "newText": "pwned"}}}
	}},
	{"create_directory", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"list_directory", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"list_directory_with_sizes", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"directory_tree", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"search_files", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p, "pattern": "**"} }},
	{"get_file_info", func(p string, _ *escapetest.Tree) map[string]any { return map[string]any{"path": p} }},
	{"move_file (source)", func(p string, tr *escapetest.Tree) map[string]any {
		return map[string]any{"source": p, "destination": tr.In("moved_here")}
	}},
	{"move_file (destination)", func(p string, tr *escapetest.Tree) map[string]any {
		return map[string]any{"source": tr.In("sub/inner.txt"), "destination": p}
	}},
}

func (c pathCall) name() string { return strings.Fields(c.tool)[0] }

// snapshot records every name, size and content under dir, and /etc/passwd.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return nil
			}
			b, _ := os.ReadFile(p)
			out[p] = fi.Mode().String() + ":" + string(b)
			return nil
		})
	}
	b, _ := os.ReadFile("/etc/passwd")
	out["/etc/passwd"] = string(b)
	return out
}

// TestEscapesRefused hands every known escape to every tool that takes a
// path, through the real MCP tool call, and checks that each is refused and
// that nothing outside the allowed directory was read or changed.
func TestEscapesRefused(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, tr.Allowed)
	before := snapshot(t, tr.Outside, tr.Evil)
	home, _ := os.UserHomeDir()
	for _, e := range tr.Escapes() {
		for _, c := range pathCalls {
			t.Run(e.Name+"/"+c.tool, func(t *testing.T) {
				text, isError := mcptest.Call(t, cs, c.name(), c.args(e.Path, tr))
				if c.name() == "read_multiple_files" {
					// It reports each failure in its text and succeeds.
					if isError || !strings.Contains(text, ": Error - ") {
						t.Fatalf("not refused: isError=%v text=%q", isError, text)
					}
				} else if !isError {
					t.Fatalf("not refused: %q", text)
				}
				if strings.Contains(text, "secret\n") || strings.Contains(text, "root:") {
					t.Errorf("outside content leaked: %q", text)
				}
			})
		}
	}
	if diff := diffSnapshots(before, snapshot(t, tr.Outside, tr.Evil)); diff != "" {
		t.Errorf("outside changed:\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(home, ".zero-escapetest-missing")); err == nil {
		t.Errorf("a file was created in the home directory")
	}
	if _, err := os.Stat(tr.In("moved_here")); err == nil {
		t.Errorf("something outside was moved inside")
	}
}

func diffSnapshots(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, "changed or removed: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "added: "+k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestLinksInsideWork checks that a symbolic link that stays inside the
// allowed directory works with every tool.
func TestLinksInsideWork(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, tr.Allowed)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_text_file", map[string]any{"path": tr.In("link_in")}, "inside\n"},
		{"read_text_file", map[string]any{"path": tr.In("link_in_dir/inner.txt")}, "inner\n"},
		{"read_text_file", map[string]any{"path": tr.In("link_abs_in/inner.txt")}, "inner\n"},
		{"read_multiple_files", map[string]any{"paths": []string{tr.In("link_in")}}, tr.In("link_in") + ":\ninside\n\n"},
		{"list_directory", map[string]any{"path": tr.In("link_in_dir")}, "[FILE] inner.txt"},
		{"get_file_info", map[string]any{"path": tr.In("link_in")}, "size: 7\n"},
		{"search_files", map[string]any{"path": tr.In("link_in_dir"), "pattern": "*.txt"}, tr.In("sub/inner.txt")},
		{"edit_file", map[string]any{"path": tr.In("link_in"), "edits": []map[string]any{{"oldText": "inside", "newText": "edited"}}}, "+edited"},
		{"read_text_file", map[string]any{"path": tr.In("file.txt")}, "edited\n"},
		{"write_file", map[string]any{"path": tr.In("link_in_dir/new.txt"), "content": "n"}, "Successfully wrote"},
		{"read_text_file", map[string]any{"path": tr.In("sub/new.txt")}, "n"},
		{"create_directory", map[string]any{"path": tr.In("link_in_dir/made/deeper")}, "Successfully created"},
		{"write_file", map[string]any{"path": tr.In("dangling_in"), "content": "d"}, "Successfully wrote"},
		{"read_text_file", map[string]any{"path": tr.In("new_inside.txt")}, "d"},
		{"move_file", map[string]any{"source": tr.In("link_in_dir/new.txt"), "destination": tr.In("link_in_dir/moved.txt")}, "Successfully moved"},
	}
	for _, tt := range tests {
		text, isError := mcptest.Call(t, cs, tt.tool, tt.args)
		if isError || !strings.Contains(text, tt.want) {
			t.Errorf("%s(%v) = %q (isError=%v), want it to contain %q", tt.tool, tt.args, text, isError, tt.want)
		}
	}
	if fi, err := os.Stat(tr.In("sub/made/deeper")); err != nil || !fi.IsDir() {
		t.Errorf("create_directory through an inside link: %v", err)
	}
}

// TestWalksDoNotLeak checks that the listing tools never name, size or date
// anything that resolves outside the allowed directory.
func TestWalksDoNotLeak(t *testing.T) {
	tr := escapetest.New(t)
	// Make the outside file's size distinctive.
	os.WriteFile(filepath.Join(tr.Outside, "secret.txt"), []byte(strings.Repeat("s", 31337)), 0o644)
	cs := start(t, tr.Allowed)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_directory", map[string]any{"path": tr.Allowed}},
		{"list_directory_with_sizes", map[string]any{"path": tr.Allowed}},
		{"list_directory_with_sizes", map[string]any{"path": tr.Allowed, "sortBy": "size"}},
		{"directory_tree", map[string]any{"path": tr.Allowed}},
		{"search_files", map[string]any{"path": tr.Allowed, "pattern": "**"}},
		{"search_files", map[string]any{"path": tr.Allowed, "pattern": "**/*secret*"}},
	}
	for _, c := range calls {
		text, isError := mcptest.Call(t, cs, c.tool, c.args)
		if isError {
			t.Errorf("%s: %s", c.tool, text)
			continue
		}
		for _, leak := range []string{"link_out_file", "link_out_dir", "link_passwd", "dangling_out", "secret", "30.60 KB", "31337"} {
			if strings.Contains(text, leak) {
				t.Errorf("%s(%v) reveals %q:\n%s", c.tool, c.args, leak, text)
			}
		}
		if !strings.Contains(text, "link_in") && c.tool != "search_files" {
			t.Errorf("%s dropped a link that stays inside:\n%s", c.tool, text)
		}
	}
}
