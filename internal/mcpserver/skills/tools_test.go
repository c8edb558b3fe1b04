package skills

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
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
		if diff := cmp.Diff(sorted(fields), required[tool.Name], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: every argument is required (-fields +required):\n%s", tool.Name, diff)
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
