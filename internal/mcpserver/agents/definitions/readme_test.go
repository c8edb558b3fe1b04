package definitions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestREADMEExample: the example definition the README shows, under the
// file name it gives, parses into the agent it describes: Anthropic's
// defaults filled in, three tools of one stdio child selected.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const intro = "`.agents/agents/reviewer.md`:\n\n```markdown\n"
	_, rest, ok := strings.Cut(string(readme), intro)
	if !ok {
		t.Fatalf("the README has no example introduced by %q", intro)
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("the README's example block is not closed")
	}
	d, err := Parse(PlaceAgents, ".agents/agents/reviewer.md", []byte(block))
	if err != nil {
		t.Fatalf("the README's example does not parse: %v", err)
	}
	want := Definition{
		Name: "reviewer", Description: "Reviews a change using the workspace's files", Source: ".agents/agents/reviewer.md",
		Instructions: "You review changes. Read the files you need, then answer with what is wrong, file and line, most serious first.\n",
		Model:        "claude-sonnet-4-5", Provider: "anthropic", BaseURL: "https://api.anthropic.com", EnvKey: "ANTHROPIC_API_KEY",
		WireAPI: wireAnthropic, MaxTurns: 20, Sandbox: "default",
		Tools:   []string{"files/read_text_file", "files/list_directory", "files/search_files"},
		Servers: []Server{{Name: "files", Command: "zero", Args: []string{"mcp", "filesystem", "."}}},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("the README's example (-want +got):\n%s", diff)
	}
}
