package definitions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
)

// workspace makes a workspace holding files (path to content) and returns
// its fsroot set and directory.
func workspace(t *testing.T, files map[string]string) (*fsroot.Set, string) {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		write(t, filepath.Join(dir, p), content)
	}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	return roots, dir
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// discover runs Discover and returns the definitions' names and sources,
// and the warnings.
func discover(t *testing.T, roots *fsroot.Set) (found []string, warnings []string) {
	t.Helper()
	defs, err := Discover(roots, func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		found = append(found, d.Name+" "+d.Source)
	}
	for _, w := range warnings {
		if strings.Contains(w, "\n") {
			t.Errorf("warning is not one line: %q", w)
		}
	}
	return found, warnings
}

func named(name string) string { return "---\nname: " + name + "\ndescription: d\n---\n" }

// TestDiscoverPrecedence: .agents/agents, .claude/agents, .codex/agents,
// .opencode/agents in this order; the first definition of a name wins and
// each later one is reported, naming both files; the result is sorted by
// name.
func TestDiscoverPrecedence(t *testing.T) {
	roots, _ := workspace(t, map[string]string{
		".opencode/agents/one.md":  named("one"),
		".codex/agents/one.toml":   "name = \"one\"\n",
		".claude/agents/one.md":    named("one"),
		".agents/agents/one.toml":  "name = \"one\"\n",
		".codex/agents/two.toml":   "name = \"two\"\n",
		".opencode/agents/two.md":  named("two"),
		".opencode/agents/zed.md":  named("zed"),
		".claude/agents/abc.md":    named("abc"),
		".claude/agents/x/abc.md":  named("abc"), // same place, later in name order
		".claude/agents/notes.txt": "not a definition",
	})
	found, warnings := discover(t, roots)
	want := []string{"abc .claude/agents/abc.md", "one .agents/agents/one.toml", "two .codex/agents/two.toml", "zed .opencode/agents/zed.md"}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	wantWarnings := []string{
		`agent definition .claude/agents/one.md: the name "one" is defined first by .agents/agents/one.toml; this one is not used`,
		`agent definition .claude/agents/x/abc.md: the name "abc" is defined first by .claude/agents/abc.md; this one is not used`,
		`agent definition .codex/agents/one.toml: the name "one" is defined first by .agents/agents/one.toml; this one is not used`,
		`agent definition .opencode/agents/one.md: the name "one" is defined first by .agents/agents/one.toml; this one is not used`,
		`agent definition .opencode/agents/two.md: the name "two" is defined first by .codex/agents/two.toml; this one is not used`,
	}
	slices.Sort(warnings)
	if diff := cmp.Diff(wantWarnings, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestDiscoverInvalidDoesNotHide: an invalid file is reported, naming the
// file and the field, and skipped; the valid ones around it are found, the
// next definition of its name included.
func TestDiscoverInvalidDoesNotHide(t *testing.T) {
	roots, _ := workspace(t, map[string]string{
		".agents/agents/a.md":  named("a") + "",
		".agents/agents/b.md":  "---\nname: b\napi_key: sk-live\n---\n",
		".agents/agents/c.md":  named("c"),
		".claude/agents/b.md":  named("b"),
		".codex/agents/d.toml": "name = \"d\"\nsandbox_mode = \"danger-full-access\"\n",
	})
	found, warnings := discover(t, roots)
	if diff := cmp.Diff([]string{"a .agents/agents/a.md", "b .claude/agents/b.md", "c .agents/agents/c.md"}, found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	slices.Sort(warnings)
	want := []string{
		"agent definition .agents/agents/b.md: api_key: a literal key or token is refused; the provider's key comes from the " +
			"environment variable env_key names, and a child server's from ${VAR} in its env or headers; skipped",
		`agent definition .codex/agents/d.toml: sandbox_mode: "danger-full-access" is refused: Zero cannot enforce it ` +
			"(default and read-only are accepted, and describe the agent); skipped",
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestDiscoverDepth: a file 8 levels below a place is read, one 9 levels
// below is not.
func TestDiscoverDepth(t *testing.T) {
	eight := ".agents/agents/1/2/3/4/5/6/7/deep.md"
	nine := ".claude/agents/1/2/3/4/5/6/7/8/deeper.md"
	roots, _ := workspace(t, map[string]string{eight: named("deep"), nine: named("deeper")})
	found, warnings := discover(t, roots)
	if diff := cmp.Diff([]string{"deep " + eight}, found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
}

// TestDiscoverSizeLimit: a file of MaxFileSize bytes is read; one byte more
// is reported and skipped.
func TestDiscoverSizeLimit(t *testing.T) {
	fit := named("fit")
	fit += strings.Repeat("x", MaxFileSize-len(fit))
	over := named("over")
	over += strings.Repeat("x", MaxFileSize+1-len(over))
	roots, _ := workspace(t, map[string]string{".agents/agents/fit.md": fit, ".agents/agents/over.md": over})
	found, warnings := discover(t, roots)
	if diff := cmp.Diff([]string{"fit .agents/agents/fit.md"}, found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	want := []string{"agent definition .agents/agents/over.md: 1048577 bytes, more than the 1048576 a definition may hold; skipped"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestDiscoverEscapingLinks: a definition that is a link leading outside the
// workspace is not read, nor is a place that is one; a link inside the
// workspace is read.
func TestDiscoverEscapingLinks(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "evil.md"), named("evil"))
	write(t, filepath.Join(outside, "agents", "evil2.md"), named("evil2"))
	roots, dir := workspace(t, map[string]string{
		".agents/agents/ok.md": named("ok"),
		"shared/linked.md":     named("linked"),
	})
	for link, target := range map[string]string{
		".agents/agents/evil.md":   filepath.Join(outside, "evil.md"),
		".agents/agents/linked.md": filepath.Join(dir, "shared", "linked.md"),
		".claude/agents":           filepath.Join(outside, "agents"),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	found, warnings := discover(t, roots)
	if diff := cmp.Diff([]string{"linked .agents/agents/linked.md", "ok .agents/agents/ok.md"}, found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	want := []string{"agent definitions: .claude/agents leads outside the workspace; it is not read"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestDiscoverOpenCodePrimary: OpenCode's primary agents are skipped
// without a word; its sub-agents are found.
func TestDiscoverOpenCodePrimary(t *testing.T) {
	roots, _ := workspace(t, map[string]string{
		".opencode/agents/build.md":  "---\ndescription: d\nmode: primary\n---\n",
		".opencode/agents/review.md": "---\ndescription: d\nmode: subagent\n---\n",
	})
	found, warnings := discover(t, roots)
	if diff := cmp.Diff([]string{"review .opencode/agents/review.md"}, found); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
}
