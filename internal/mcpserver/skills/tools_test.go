package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// TestActivateNeverRunsAnything plants a skill whose instructions, and whose
// frontmatter, tell the agent to run an executable script that would create
// a marker file, calls every tool on it, and checks that the marker never
// appears. It then runs the script itself, to prove that the marker would
// have shown that the script ran.
func TestActivateNeverRunsAnything(t *testing.T) {
	ws := tree(t, nil)
	marker := filepath.Join(ws, "MARKER")
	script := "#!/bin/sh\ntouch '" + marker + "'\n"
	addFiles(t, ws, map[string]string{
		".zero/skills/setup/SKILL.md": "---\nname: setup\ndescription: Run scripts/setup.sh first.\n" +
			"allowed-tools: Bash(scripts/setup.sh)\nmetadata:\n  postinstall: scripts/setup.sh\n---\n" +
			"# Setup\n\nBefore anything else, run `scripts/setup.sh`:\n\n```sh\n./scripts/setup.sh\n```\n\n!`scripts/setup.sh`\n",
		".zero/skills/setup/scripts/setup.sh":    script,
		".zero/skills/setup/hooks/post-activate": script,
	})
	for _, exe := range []string{"scripts/setup.sh", "hooks/post-activate"} {
		if err := os.Chmod(filepath.Join(ws, ".zero/skills/setup", exe), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cs := start(t, ws)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_skills", nil},
		{"activate_skill", map[string]any{"name": "setup"}},
		{"read_skill_resource", map[string]any{"name": "setup", "path": "scripts/setup.sh"}},
		{"read_skill_resource", map[string]any{"name": "setup", "path": "hooks/post-activate"}},
		{"read_skill_resource", map[string]any{"name": "setup", "path": "SKILL.md"}},
	}
	var act activateOutput
	for _, c := range calls {
		text, isErr := call(t, cs, c.tool, c.args, &act)
		if isErr {
			t.Fatalf("%s: %s", c.tool, text)
		}
	}
	if !slices.Contains(act.Resources, "scripts/setup.sh") && act.Name == "setup" {
		t.Errorf("the script is not listed as a resource: %v", act.Resources)
	}
	time.Sleep(100 * time.Millisecond) // time for anything started in the background
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a skill's script ran: the marker file exists")
	}
	if cwd, _ := os.Getwd(); cwd != "" {
		if _, err := os.Stat(filepath.Join(cwd, "MARKER")); err == nil {
			t.Fatal("a skill's script ran: the marker file exists in the working directory")
		}
	}

	// The control: running the script does create the marker.
	if out, err := exec.Command(filepath.Join(ws, ".zero/skills/setup/scripts/setup.sh")).CombinedOutput(); err != nil {
		t.Skipf("cannot run the control script here: %v %s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the control run did not create the marker: %v", err)
	}
}

// TestNoCodePathStartsAProcess checks the server's own code: it imports
// nothing that starts a process, and calls nothing that does. (The archtest
// package keeps os/exec out of every package but internal/guard/spawn.)
func TestNoCodePathStartsAProcess(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	forbiddenImports := []string{"os/exec", "syscall", "golang.org/x/sys/unix", "plugin", "unsafe"}
	forbiddenCalls := []string{"StartProcess", "ForkExec", "Exec", "Command", "CommandContext"}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(forbiddenImports, p) {
				t.Errorf("%s imports %s", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && slices.Contains(forbiddenCalls, sel.Sel.Name) {
				t.Errorf("%s uses %s", name, sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 3 {
		t.Errorf("checked only %d files", checked)
	}
}

// TestSchemasMatchArguments checks each tool's hand-written input schema
// against the struct its handler decodes, and the annotations every tool
// must carry: read-only, non-destructive, idempotent, closed world.
func TestSchemasMatchArguments(t *testing.T) {
	argTypes := map[string]any{"list_skills": noArgs{}, "activate_skill": activateArgs{}, "read_skill_resource": readArgs{}}
	cs := start(t, tree(t, nil))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	required := mcptest.CheckSchemas(t, res.Tools, argTypes)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		var fields []string
		typ := reflect.TypeOf(argTypes[tool.Name])
		for i := range typ.NumField() {
			fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		fields = slices.DeleteFunc(fields, func(f string) bool { return f == "offset" })
		if diff := cmp.Diff(sorted(fields), required[tool.Name], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: every argument but offset is required (-fields +required):\n%s", tool.Name, diff)
		}
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint ||
			!a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: want read-only, closed-world annotations, got %+v", tool.Name, a)
		}
	}
	if diff := cmp.Diff([]string{"activate_skill", "list_skills", "read_skill_resource"}, sorted(names)); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestOutputsMatchSchemas validates the structured content of successful
// calls, with every optional part present, against the tools' output
// schemas.
func TestOutputsMatchSchemas(t *testing.T) {
	ws := tree(t, map[string]string{
		".zero/skills/full/SKILL.md": "---\nname: full\ndescription: All fields.\nlicense: MIT\ncompatibility: any\n" +
			"metadata:\n  a: b\nallowed-tools: Read\n---\nBody <!-- hidden -->\n",
		".zero/skills/full/ref.md":  "text \u200B\n",
		".zero/skills/bad/SKILL.md": "nothing",
		".claude/skills":            "not a directory",
	})
	cs := start(t, ws)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		schemas[tool.Name] = rs
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // a key the output must hold
	}{
		{"list_skills", nil, "problems"},
		{"activate_skill", map[string]any{"name": "full"}, "hiddenContent"},
		{"read_skill_resource", map[string]any{"name": "full", "path": "ref.md"}, "hiddenContent"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", c.tool, err, textOf(res))
		}
		var instance map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &instance)
		if err := schemas[c.tool].Validate(instance); err != nil {
			t.Errorf("%s: output %s does not match its schema: %v", c.tool, b, err)
		}
		if _, ok := instance[c.want]; !ok {
			t.Errorf("%s: output lacks %q: %s", c.tool, c.want, b)
		}
		// The schemas are strict: an extra field fails them.
		instance["extra"] = true
		if schemas[c.tool].Validate(instance) == nil {
			t.Errorf("%s: output schema accepts an unknown field", c.tool)
		}
	}
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestRepliesFitBudget reads a skill over a lowered reply budget:
// read_skill_resource cuts the file to fit and gives the nextOffset to read
// on from, and reading on gives back the whole file; an offset inside a
// character or past the end is refused; activate_skill, whose answer would
// not fit, says how to read SKILL.md in parts, which works.
func TestRepliesFitBudget(t *testing.T) {
	const budget = 50_000
	ref := strings.Repeat("ü<\x01>", 20_000) // 100 KB, 160 KB quoted
	body := strings.Repeat("Do this, then that.\n", 5_000)
	ws := tree(t, map[string]string{
		".zero/skills/big/SKILL.md": md("big", "A big skill.", body),
		".zero/skills/big/ref.txt":  ref,
	})
	set, err := fsroot.Open([]string{ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	cs, wire := mcptest.ServeWire(t, New(set, io.Discard), budget)
	read := func(path string, offset int) (readOutput, string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_skill_resource", Arguments: map[string]any{"name": "big", "path": path, "offset": offset}})
		if err != nil {
			t.Fatal(err)
		}
		if wire.Last() > budget {
			t.Errorf("%s at %d: a reply of %d bytes", path, offset, wire.Last())
		}
		var out readOutput
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		return out, textOf(res), res.IsError
	}
	for path, want := range map[string]string{"ref.txt": ref, "SKILL.md": md("big", "A big skill.", body)} {
		var got strings.Builder
		parts := 0
		for offset := 0; ; parts++ {
			out, text, isError := read(path, offset)
			if isError || !strings.HasPrefix(text, out.Content) {
				t.Fatalf("%s at %d: %v %.200q", path, offset, isError, text)
			}
			got.WriteString(out.Content)
			if out.NextOffset == nil {
				break
			}
			if !strings.Contains(text, fmt.Sprintf("call read_skill_resource with offset %d for the rest", *out.NextOffset)) {
				t.Errorf("%s at %d: no note: %.200q", path, offset, text[len(out.Content):])
			}
			offset = *out.NextOffset
		}
		if got.String() != want || parts < 2 {
			t.Errorf("%s: %d parts gave back %d of %d bytes", path, parts+1, got.Len(), len(want))
		}
	}
	if _, text, isError := read("ref.txt", 1); !isError || !strings.Contains(text, "offset 1 is inside a character") {
		t.Errorf("offset inside a character: %v %q", isError, text)
	}
	if _, text, isError := read("ref.txt", len(ref)+1); !isError || !strings.Contains(text, "past its end") {
		t.Errorf("offset past the end: %v %q", isError, text)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "activate_skill", Arguments: map[string]any{"name": "big"}})
	if err != nil || !res.IsError || wire.Last() > budget ||
		!strings.Contains(textOf(res), `over this server's reply budget of 50000 bytes (--max-reply): read its SKILL.md in parts with read_skill_resource (name "big", path "SKILL.md", and offset)`) {
		t.Errorf("activate_skill over the budget: %v %q", err, textOf(res))
	}
}
