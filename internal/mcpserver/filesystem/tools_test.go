package filesystem

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// fixture makes a plain directory tree and returns its canonical path.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type toolCase struct {
	name    string
	tool    string
	args    map[string]any
	want    string // exact text, unless contains is set
	contain bool
	isError bool
}

func runCases(t *testing.T, cs *mcp.ClientSession, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		text, isError := mcptest.Call(t, cs, tc.tool, tc.args)
		if isError != tc.isError {
			t.Errorf("%s: isError = %v, want %v; text %q", tc.name, isError, tc.isError, text)
			continue
		}
		if tc.contain {
			if !strings.Contains(text, tc.want) {
				t.Errorf("%s: %q does not contain %q", tc.name, text, tc.want)
			}
		} else if text != tc.want {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.name, cmp.Diff(tc.want, text))
		}
	}
}

func TestReadTools(t *testing.T) {
	dir := fixture(t, map[string]string{
		"lines.txt":   "one\ntwo\nthree\nfour\n",
		"nofinal.txt": "a\nb\nc",
		"crlf.txt":    "x\r\ny\r\n",
		"empty.txt":   "",
		"pic.png":     "\x89PNG fake",
		"song.mp3":    "ID3 fake",
		"blob.bin":    "\x00\x01",
		"dir/":        "",
	})
	cs := start(t, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	runCases(t, cs, []toolCase{
		{name: "whole", tool: "read_text_file", args: map[string]any{"path": p("lines.txt")}, want: "one\ntwo\nthree\nfour\n"},
		{name: "relative", tool: "read_text_file", args: map[string]any{"path": "lines.txt"}, want: "one\ntwo\nthree\nfour\n"},
		{name: "deprecated alias", tool: "read_file", args: map[string]any{"path": p("lines.txt")}, want: "one\ntwo\nthree\nfour\n"},
		{name: "head", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "head": 2}, want: "one\ntwo\n"},
		{name: "head past end", tool: "read_text_file", args: map[string]any{"path": p("nofinal.txt"), "head": 9}, want: "a\nb\nc"},
		{name: "tail", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "tail": 2}, want: "three\nfour\n"},
		{name: "tail no final newline", tool: "read_text_file", args: map[string]any{"path": p("nofinal.txt"), "tail": 2}, want: "b\nc"},
		{name: "tail all", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "tail": 10}, want: "one\ntwo\nthree\nfour\n"},
		{name: "tail crlf", tool: "read_text_file", args: map[string]any{"path": p("crlf.txt"), "tail": 1}, want: "y\r\n"},
		{name: "tail empty", tool: "read_text_file", args: map[string]any{"path": p("empty.txt"), "tail": 3}, want: ""},
		{name: "head and tail", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "head": 1, "tail": 1}, want: "not both", contain: true, isError: true},
		{name: "head zero", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "head": 0}, want: "at least 1", contain: true, isError: true},
		{name: "head fraction", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "head": 1.5}, want: "head", contain: true, isError: true},
		{name: "unknown argument", tool: "read_text_file", args: map[string]any{"path": p("lines.txt"), "Path": "x"}, want: "Path", contain: true, isError: true},
		{name: "missing path", tool: "read_text_file", args: map[string]any{}, want: "path is required", contain: true, isError: true},
		{name: "wrong type", tool: "read_text_file", args: map[string]any{"path": 7}, want: "path", contain: true, isError: true},
		{name: "missing file", tool: "read_text_file", args: map[string]any{"path": p("nope.txt")}, want: "no such file", contain: true, isError: true},
		{name: "directory", tool: "read_text_file", args: map[string]any{"path": p("dir")}, want: "is a directory", contain: true, isError: true},
		{name: "multiple", tool: "read_multiple_files", args: map[string]any{"paths": []string{p("nofinal.txt"), p("nope.txt")}},
			want: p("nofinal.txt") + ":\na\nb\nc\n\n---\n" + p("nope.txt") + ": Error - " + p("nope.txt") + ": no such file or directory"},
		{name: "multiple empty", tool: "read_multiple_files", args: map[string]any{"paths": []string{}}, want: "at least one", contain: true, isError: true},
	})
	media := func(name string) mcp.Content {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_media_file", Arguments: map[string]any{"path": p(name)}})
		if err != nil || res.IsError {
			t.Fatalf("read_media_file %s: %v %v", name, err, mcptest.Text(res))
		}
		return res.Content[0]
	}
	if img, ok := media("pic.png").(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG fake" {
		t.Errorf("png: %#v", media("pic.png"))
	}
	if au, ok := media("song.mp3").(*mcp.AudioContent); !ok || au.MIMEType != "audio/mpeg" {
		t.Errorf("mp3: %#v", media("song.mp3"))
	}
	res, ok := media("blob.bin").(*mcp.EmbeddedResource)
	if !ok || res.Resource.MIMEType != "application/octet-stream" || res.Resource.URI != "file://"+p("blob.bin") || string(res.Resource.Blob) != "\x00\x01" {
		t.Errorf("bin: %#v", media("blob.bin"))
	}
}

func TestWriteTools(t *testing.T) {
	dir := fixture(t, map[string]string{
		"code.go":  "func main() {\n\tif x {\n\t\tdo()\n\t}\n}\n",
		"crlf.txt": "one\r\ntwo\r\n",
		"a.txt":    "a",
		"b.txt":    "b",
	})
	cs := start(t, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	runCases(t, cs, []toolCase{
		{name: "write new", tool: "write_file", args: map[string]any{"path": p("new.txt"), "content": "hello"}, want: "Successfully wrote to " + p("new.txt")},
		{name: "write empty", tool: "write_file", args: map[string]any{"path": p("empty.txt"), "content": ""}, want: "Successfully wrote", contain: true},
		{name: "write no content", tool: "write_file", args: map[string]any{"path": p("x.txt")}, want: "content is required", contain: true, isError: true},
		{name: "write missing parent", tool: "write_file", args: map[string]any{"path": p("no/such/x.txt"), "content": "x"}, want: "no such file", contain: true, isError: true},
		{name: "edit dry run", tool: "edit_file", args: map[string]any{"path": p("code.go"), "dryRun": true,
			"edits": []map[string]any{{"oldText": "do()", "newText": "done()"}}},
			want: "```diff\nIndex: " + p("code.go") + "\n===================================================================\n--- " + p("code.go") + "\toriginal\n+++ " + p("code.go") + "\tmodified\n@@ -1,5 +1,5 @@\n func main() {\n \tif x {\n-\t\tdo()\n+\t\tdone()\n \t}\n }\n```\n\n"},
		{name: "unchanged after dry run", tool: "read_text_file", args: map[string]any{"path": p("code.go")}, want: "func main() {\n\tif x {\n\t\tdo()\n\t}\n}\n"},
		{name: "edit whitespace-insensitive", tool: "edit_file", args: map[string]any{"path": p("code.go"),
			"edits": []map[string]any{{"oldText": "if x {\n  do()\n}", "newText": "if y {\n  run()\n}"}}}, want: "+\tif y {", contain: true},
		{name: "edited", tool: "read_text_file", args: map[string]any{"path": p("code.go")}, want: "func main() {\n\tif y {\n\trun()\n}\n}\n"},
		{name: "edit no match", tool: "edit_file", args: map[string]any{"path": p("code.go"),
			"edits": []map[string]any{{"oldText": "absent", "newText": "x"}}}, want: "could not find a match", contain: true, isError: true},
		{name: "edit empty oldText", tool: "edit_file", args: map[string]any{"path": p("code.go"),
			"edits": []map[string]any{{"oldText": "", "newText": "x"}}}, want: "oldText is empty", contain: true, isError: true},
		{name: "edit typo in dryRun", tool: "edit_file", args: map[string]any{"path": p("code.go"), "dry_run": true,
			"edits": []map[string]any{{"oldText": "run", "newText": "x"}}}, want: "dry_run", contain: true, isError: true},
		{name: "edit crlf", tool: "edit_file", args: map[string]any{"path": p("crlf.txt"),
			"edits": []map[string]any{{"oldText": "two", "newText": "2"}}}, want: "+2", contain: true},
		{name: "crlf kept", tool: "read_text_file", args: map[string]any{"path": p("crlf.txt")}, want: "one\r\n2\r\n"},
		{name: "mkdir", tool: "create_directory", args: map[string]any{"path": p("x/y/z")}, want: "Successfully created directory " + p("x/y/z")},
		{name: "mkdir again", tool: "create_directory", args: map[string]any{"path": p("x/y/z")}, want: "Successfully created", contain: true},
		{name: "mkdir over file", tool: "create_directory", args: map[string]any{"path": p("a.txt")}, isError: true, want: "a.txt", contain: true},
		{name: "move", tool: "move_file", args: map[string]any{"source": p("a.txt"), "destination": p("x/a.txt")}, want: "Successfully moved " + p("a.txt") + " to " + p("x/a.txt")},
		{name: "move onto existing", tool: "move_file", args: map[string]any{"source": p("b.txt"), "destination": p("x/a.txt")}, want: "already exists", contain: true, isError: true},
		{name: "move root", tool: "move_file", args: map[string]any{"source": dir, "destination": p("x/root")}, want: "cannot be moved", contain: true, isError: true},
	})
	if b, _ := os.ReadFile(p("x/a.txt")); string(b) != "a" {
		t.Errorf("moved file = %q", b)
	}
}

func TestListTools(t *testing.T) {
	dir := fixture(t, map[string]string{
		"b.txt":               strings.Repeat("b", 2048),
		"a.go":                "package a",
		"src/main.go":         "package main",
		"src/util/u.go":       "package util",
		"src/util/u_test.go":  "package util",
		"node_modules/m/i.js": "x",
		".hidden/h.go":        "package h",
		"util/zero.txt":       "",
		"util/mid.txt":        strings.Repeat("m", 1024),
		"util/big.bin":        strings.Repeat("x", 1536*1024),
		"empty/":              "",
	})
	cs := start(t, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	runCases(t, cs, []toolCase{
		{name: "list", tool: "list_directory", args: map[string]any{"path": dir},
			want: "[DIR] .hidden\n[FILE] a.go\n[FILE] b.txt\n[DIR] empty\n[DIR] node_modules\n[DIR] src\n[DIR] util"},
		{name: "list empty", tool: "list_directory", args: map[string]any{"path": p("empty")}, want: ""},
		{name: "list a file", tool: "list_directory", args: map[string]any{"path": p("a.go")}, want: "not a directory", contain: true, isError: true},
		{name: "sizes by name", tool: "list_directory_with_sizes", args: map[string]any{"path": dir},
			want: "[DIR] .hidden                        \n" +
				"[FILE] a.go                                  9 B\n" +
				"[FILE] b.txt                             2.00 KB\n" +
				"[DIR] empty                          \n" +
				"[DIR] node_modules                   \n" +
				"[DIR] src                            \n" +
				"[DIR] util                           \n" +
				"\nTotal: 2 files, 5 directories\nCombined size: 2.01 KB"},
		{name: "sizes by size", tool: "list_directory_with_sizes", args: map[string]any{"path": p("util"), "sortBy": "size"},
			want: "[FILE] big.bin                           1.50 MB\n" +
				"[FILE] mid.txt                           1.00 KB\n" +
				"[FILE] zero.txt                              0 B\n" +
				"\nTotal: 3 files, 0 directories\nCombined size: 1.50 MB"},
		{name: "sizes bad sort", tool: "list_directory_with_sizes", args: map[string]any{"path": dir, "sortBy": "date"}, want: "sortBy", contain: true, isError: true},
		{name: "tree excluding", tool: "directory_tree", args: map[string]any{"path": p("src"), "excludePatterns": []string{"u_test.go"}},
			want: "[\n  {\n    \"name\": \"main.go\",\n    \"type\": \"file\"\n  },\n  {\n    \"name\": \"util\",\n    \"type\": \"directory\",\n    \"children\": [\n      {\n        \"name\": \"u.go\",\n        \"type\": \"file\"\n      }\n    ]\n  }\n]"},
		{name: "tree empty dir", tool: "directory_tree", args: map[string]any{"path": p("empty")}, want: "[]"},
		{name: "tree bad pattern", tool: "directory_tree", args: map[string]any{"path": dir, "excludePatterns": []string{strings.Repeat("{a,b}", 50)}}, isError: true, want: "excludePatterns", contain: true},
		{name: "search top level", tool: "search_files", args: map[string]any{"path": dir, "pattern": "*.go"}, want: p("a.go")},
		{name: "search deep", tool: "search_files", args: map[string]any{"path": dir, "pattern": "**/*.go", "excludePatterns": []string{"node_modules", "**/*_test.go"}},
			want: strings.Join([]string{p(".hidden/h.go"), p("a.go"), p("src/main.go"), p("src/util/u.go")}, "\n")},
		{name: "search exclude dir", tool: "search_files", args: map[string]any{"path": dir, "pattern": "**/*.js", "excludePatterns": []string{"node_modules"}}, want: "No matches found"},
		{name: "search relative", tool: "search_files", args: map[string]any{"path": "src", "pattern": "util"}, want: p("src/util")},
		{name: "search no pattern", tool: "search_files", args: map[string]any{"path": dir}, want: "pattern is required", contain: true, isError: true},
		{name: "info", tool: "get_file_info", args: map[string]any{"path": p("a.go")}, want: "size: 9\n", contain: true},
		{name: "info perms", tool: "get_file_info", args: map[string]any{"path": p("a.go")}, want: "isDirectory: false\nisFile: true\npermissions: 644", contain: true},
		{name: "allowed", tool: "list_allowed_directories", args: map[string]any{}, want: "Allowed directories:\n" + dir},
		{name: "allowed no args", tool: "list_allowed_directories", args: nil, want: "Allowed directories:\n" + dir},
		{name: "allowed extra arg", tool: "list_allowed_directories", args: map[string]any{"x": 1}, want: "x", contain: true, isError: true},
	})
}

// TestSchemasMatchArguments checks each tool's hand-written input schema
// against the struct its handler decodes, and the annotations every tool
// must carry.
func TestSchemasMatchArguments(t *testing.T) {
	argTypes := map[string]any{
		"read_file": readTextArgs{}, "read_text_file": readTextArgs{}, "read_media_file": pathArgs{},
		"read_multiple_files": readMultipleArgs{}, "write_file": writeArgs{}, "edit_file": editArgs{},
		"create_directory": pathArgs{}, "list_directory": listArgs{}, "list_directory_with_sizes": listSizesArgs{},
		"directory_tree": treeArgs{}, "move_file": moveArgs{}, "search_files": searchArgs{},
		"get_file_info": pathArgs{}, "list_allowed_directories": noArgs{},
	}
	cs := start(t, t.TempDir())
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mcptest.CheckSchemas(t, res.Tools, argTypes)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if a := tool.Annotations; a != nil && a.DestructiveHint != nil && a.ReadOnlyHint && (*a.DestructiveHint || !a.IdempotentHint) {
			t.Errorf("%s: a read-only tool must be non-destructive and idempotent", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"create_directory", "directory_tree", "edit_file", "get_file_info", "list_allowed_directories",
		"list_directory", "list_directory_with_sizes", "move_file", "read_file", "read_media_file",
		"read_multiple_files", "read_text_file", "search_files", "write_file"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools differ from the reference's (-want +got):\n%s", diff)
	}
	writers := map[string]bool{"write_file": true, "edit_file": true, "create_directory": true, "move_file": true}
	for _, tool := range res.Tools {
		if tool.Annotations.ReadOnlyHint == writers[tool.Name] {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, tool.Annotations.ReadOnlyHint)
		}
		if writers[tool.Name] && *tool.Annotations.DestructiveHint != (tool.Name != "create_directory") {
			t.Errorf("%s: destructiveHint = %v", tool.Name, *tool.Annotations.DestructiveHint)
		}
	}
}

// TestRepliesFitBudget calls every tool that can answer at length with an
// answer over a lowered reply budget: each refuses with the budget and the
// way around it, which works, or skips what does not fit; no reply passes
// the budget.
func TestRepliesFitBudget(t *testing.T) {
	const budget = 100_000
	line := strings.Repeat("<&>", 20) + "\n" // 61 bytes, 62 quoted
	files := map[string]string{
		"big.txt":   strings.Repeat(line, 3000),
		"a.txt":     strings.Repeat("a", 30_000),
		"b.txt":     strings.Repeat("b", 30_000),
		"c.txt":     "small",
		"pic.png":   strings.Repeat("\x89", 60_000),
		"many/sub/": "",
	}
	for i := range 3000 {
		files[fmt.Sprintf("many/file%04d.txt", i)] = ""
	}
	dir := fixture(t, files)
	set, err := fsroot.Open([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	cs, wire := mcptest.ServeWire(t, New(set, io.Discard), budget)
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if size := wire.Last(); size > budget {
			t.Errorf("%s %v: a reply of %d bytes, over the budget of %d: %v %.200q", tool, args, size, budget, res.IsError, mcptest.Text(res))
		}
		return mcptest.Text(res), res.IsError
	}
	const over = "over this server's reply budget of 100000 bytes (--max-reply)"
	// The text is 62 quoted bytes a line: (budget - overhead) / 2 / 62 lines fit.
	fit := (budget - 512 - 70) / 2 / 62
	for _, tool := range []string{"read_text_file", "read_file"} {
		text, isError := call(tool, map[string]any{"path": "big.txt"})
		want := fmt.Sprintf("read it in parts with head or tail: head %d fits, and so does tail %d", fit, fit)
		if !isError || !strings.Contains(text, over) || !strings.Contains(text, want) {
			t.Errorf("%s of big.txt: %v %q", tool, isError, text)
		}
	}
	if text, isError := call("read_text_file", map[string]any{"path": "big.txt", "head": fit}); isError || text != strings.Repeat(line, fit) {
		t.Errorf("head %d: %v %.100q", fit, isError, text)
	}
	if text, isError := call("read_text_file", map[string]any{"path": "big.txt", "tail": fit + 1}); !isError || !strings.Contains(text, over+fmt.Sprintf(": ask for fewer lines: tail %d fits", fit)) {
		t.Errorf("tail %d: %v %.100q", fit+1, isError, text)
	}
	text, isError := call("read_multiple_files", map[string]any{"paths": []string{"a.txt", "b.txt", "c.txt", "big.txt"}})
	parts := strings.Split(text, "\n---\n")
	skipped := "Error - skipped: with it, the reply would pass this server's reply budget of 100000 bytes (--max-reply); read it alone"
	if isError || len(parts) != 4 || parts[0] != "a.txt:\n"+files["a.txt"]+"\n" || !strings.HasPrefix(parts[1], "b.txt: "+skipped) ||
		parts[2] != "c.txt:\nsmall\n" || !strings.HasPrefix(parts[3], "big.txt: "+skipped) {
		t.Errorf("read_multiple_files: %v %.300q", isError, parts)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		hint string
	}{
		{"read_media_file", map[string]any{"path": "pic.png"}, "this tool returns files of at most about 36476 bytes"},
		{"directory_tree", map[string]any{"path": "many"}, "ask for the tree of a subdirectory of many, or leave parts out with excludePatterns"},
		{"search_files", map[string]any{"path": ".", "pattern": "**/*.txt"}, "narrow the pattern, search a subdirectory, or leave parts out with excludePatterns"},
		{"list_directory", map[string]any{"path": "many"}, listHint},
		{"list_directory_with_sizes", map[string]any{"path": "many"}, listHint},
	} {
		if text, isError := call(c.tool, c.args); !isError || !strings.Contains(text, "reply budget of 100000 bytes (--max-reply): "+c.hint) {
			t.Errorf("%s: %v %q", c.tool, isError, text)
		}
	}
	if text, isError := call("directory_tree", map[string]any{"path": "many", "excludePatterns": []string{"file*"}}); isError || !strings.Contains(text, `"sub"`) {
		t.Errorf("directory_tree with excludePatterns: %v %q", isError, text)
	}
	if text, isError := call("search_files", map[string]any{"path": "many", "pattern": "file00*.txt"}); isError || strings.Count(text, "\n") != 99 {
		t.Errorf("search_files with a narrower pattern: %v %.100q", isError, text)
	}
}
