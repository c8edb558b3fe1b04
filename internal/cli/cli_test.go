package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, Stdio{In: io.NopCloser(strings.NewReader("")), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// TestExitCodes checks that bad input fails before serving, with exit code
// 2, a message on stderr, and nothing on stdout (which belongs to JSON-RPC).
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	corrupt := filepath.Join(dir, "corrupt.jsonl")
	os.WriteFile(corrupt, []byte(`{"type":"entity","name":"a","entityType":"t","observations":[]}`+"\n{oops\n"), 0o600)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "Usage:"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"mcp"}, 2, "missing server"},
		{[]string{"mcp", "nope"}, 2, `unknown server "nope"`},
		{[]string{"mcp", "memory", "m.jsonl"}, 2, "give the file with --memory-file"},
		{[]string{"mcp", "memory", "--memory-file", corrupt}, 2, "line 2"},
		{[]string{"mcp", "fetch", "http://x"}, 2, "unexpected arguments"},
		{[]string{"mcp", "fetch", "--user-agent", " "}, 2, "--user-agent must not be empty"},
		{[]string{"mcp", "fetch", "--allow-private-networks", "10.0.0.0/8"}, 2, "needs --block-private-networks"},
		{[]string{"mcp", "fetch", "--block-private-networks", "--allow-private-networks", "nonsense"}, 2, "--allow-private-networks"},
		{[]string{"mcp", "fetch", "--isolate"}, 2, "flag --isolate belongs to 'zero mcp shell'"},
		{[]string{"mcp", "filesystem", "--user-agent", "x", dir}, 2, "flag --user-agent belongs to 'zero mcp fetch'"},
		{[]string{"mcp", "shell", "--timeout", "0s", dir}, 2, "--timeout must be positive"},
		{[]string{"mcp", "shell", "--timeout", "2m", "--max-timeout", "1m", dir}, 2, "shorter than --timeout"},
		{[]string{"mcp", "shell", "--timeout", "soon", dir}, 2, "invalid value"},
		{[]string{"mcp", "shell", filepath.Join(dir, "missing")}, 2, "no such file or directory"},
		{[]string{"mcp", "skills", dir}, 2, "give the workspace with --workspace"},
		{[]string{"mcp", "skills", "--workspace", file}, 2, "not a directory"},
		{[]string{"mcp", "skills", "--isolate"}, 2, "flag --isolate belongs to 'zero mcp shell'"},
		{[]string{"mcp", "agents", "--workspace", file}, 2, "not a directory"},
		{[]string{"mcp", "agents", dir}, 2, "give the workspace with --workspace"},
		{[]string{"mcp", "filesystem", "--memory-file", "m.jsonl", dir}, 2, "flag --memory-file belongs to 'zero mcp memory'"},
		{[]string{"mcp", "filesystem", dir, "--isolate"}, 2, "flag --isolate belongs to 'zero mcp shell'"},
		{[]string{"mcp", "filesystem", "--bogus", dir}, 2, "unknown flag --bogus"},
		{[]string{"mcp", "filesystem", filepath.Join(dir, "missing")}, 2, "no such file or directory"},
		{[]string{"mcp", "filesystem", file}, 2, "not a directory"},
		{[]string{"mcp", "filesystem", dir, filepath.Join(dir, "missing")}, 2, "missing"},
		{[]string{"mcp", "filesystem", "--http", "0.0.0.0:0", dir}, 2, "not a loopback address"},
		{[]string{"mcp", "filesystem", "--http", "example.com:80", dir}, 2, "not a loopback address"},
		{[]string{"mcp", "filesystem", "--http", "nonsense", dir}, 2, "want host:port"},
		{[]string{"mcp", "filesystem", "--allow-remote", dir}, 2, "--allow-remote needs --http"},
		{[]string{"version", "x"}, 2, "takes no arguments"},
		{[]string{"help", "nope"}, 2, "unknown command"},
		{[]string{"help", "servers", "nope"}, 2, `unknown subcommand "nope" for 'zero servers'`},
		{[]string{"servers"}, 2, "missing subcommand: want one of list, preview, add"},
		{[]string{"servers", "remove"}, 2, `unknown subcommand "remove"`},
		{[]string{"servers", "add"}, 2, "zero servers add: missing --name and --command (the program to run); for an http or sse server, give --kind and --url instead"},
		{[]string{"servers", "preview", "--name", "x"}, 2, "missing --command"},
		{[]string{"servers", "add", "--command", "/bin/true"}, 2, "missing --name\n"},
		{[]string{"servers", "add", "--name", "x", "--kind", "http"}, 2, "missing --url (the server's https URL)"},
		{[]string{"servers", "add", "--name", "x", "--kind", "ftp"}, 2, `--kind "ftp": want stdio, http or sse`},
		{[]string{"servers", "add", "--name", "x", "--command", "/bin/true", "extra"}, 2, "unexpected arguments"},
		{[]string{"servers", "list", "--name", "x"}, 2, "flag --name belongs to 'zero servers preview'; 'zero servers list' does not take it"},
		{[]string{"servers", "list", "--bogus"}, 2, "unknown flag --bogus for 'zero servers list'"},
		{[]string{"servers", "list", "--addr", "0.0.0.0:7077"}, 2, "--addr"},
		{[]string{"audit"}, 2, "missing subcommand: want one of verify"},
		{[]string{"agent", "run"}, 2, "--repo is required"},
		{[]string{"agent", "approve"}, 2, "missing arguments"},
		{[]string{"login", "x"}, 2, "unexpected arguments"},
		// A database URL that does not parse is refused before anything
		// opens, and its password is not repeated.
		{[]string{"serve", "--database", "postgres://zero:s3cret@127.0.0.1:5432/zero?sslmode=bogus"}, 2, "--database or ZERO_DATABASE_URL: cannot parse `postgres://zero:xxxxx@"},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("zero %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.stderr)
		}
		if stdout != "" {
			t.Errorf("zero %q wrote to stdout: %q", tt.args, stdout)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "zero <command>"},
		{[]string{"--help"}, "zero <command>"},
		{[]string{"help", "mcp"}, "--allow-remote"},
		{[]string{"mcp", "--help"}, "filesystem"},
		{[]string{"mcp", "filesystem", "-h"}, "usage: zero mcp filesystem"},
		{[]string{"servers", "add", "--help"}, "--command PROGRAM"},
		{[]string{"help", "servers", "add"}, "--command PROGRAM"},
		{[]string{"servers", "-h"}, "Subcommands:"},
		{[]string{"version", "-h"}, "usage: zero version"},
		{[]string{"version"}, "zero "},
	}
	for _, tt := range tests {
		code, stdout, stderr := run(t, tt.args...)
		if code != 0 || !strings.Contains(stdout, tt.want) || stderr != "" {
			t.Errorf("zero %q: exit %d, stdout %q, stderr %q", tt.args, code, stdout, stderr)
		}
	}
}

func TestParseFlagsInterspersed(t *testing.T) {
	code, _, stderr := run(t, "mcp", "filesystem", t.TempDir(), "--http", "0.0.0.0:1")
	if code != 2 || !strings.Contains(stderr, "loopback") {
		t.Errorf("a flag after the directory was not parsed: exit %d %q", code, stderr)
	}
}

// TestEveryFlagInHelp walks the whole command tree and checks that each
// command's help, asked for either way (zero help PATH, zero PATH --help),
// is the same and lists every flag of its FlagSet with its meaning and its
// default.
func TestEveryFlagInHelp(t *testing.T) {
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	commands, flags := 0, 0
	var walk func(c *Command)
	walk = func(c *Command) {
		for _, sub := range c.Subcommands {
			walk(sub)
		}
		if c.parent == nil || c.Name == "help" {
			return
		}
		commands++
		words := strings.Fields(c.path())
		code, viaHelp, stderr := run(t, append([]string{"help"}, words...)...)
		if code != 0 || stderr != "" {
			t.Errorf("zero help %s: exit %d, stderr %q", c.path(), code, stderr)
		}
		code, viaFlag, stderr := run(t, append(words, "--help")...)
		if code != 0 || stderr != "" || viaFlag != viaHelp {
			t.Errorf("zero %s --help: exit %d, stderr %q, and it differs from zero help %s:\n%s\n---\n%s", c.path(), code, stderr, c.path(), viaFlag, viaHelp)
		}
		if !strings.HasPrefix(viaHelp, "usage: zero "+c.path()) {
			t.Errorf("zero help %s does not begin with its usage: %q", c.path(), firstLine(viaHelp))
		}
		help := squash(viaHelp)
		for _, sub := range c.Subcommands {
			if !strings.Contains(help, sub.Name+" "+squash(sub.Short)) {
				t.Errorf("zero help %s does not list %s", c.path(), sub.Name)
			}
		}
		if c.Flag == nil {
			return
		}
		c.Flag.VisitAll(func(f *flag.Flag) {
			flags++
			arg, usage := flag.UnquoteUsage(f)
			want := []string{strings.TrimSpace("--" + f.Name + " " + arg), squash(usage)}
			for _, w := range want {
				if !strings.Contains(help, w) {
					t.Errorf("zero help %s lacks %q of flag --%s", c.path(), w, f.Name)
				}
			}
			def := squash(f.DefValue)
			if !isZeroDefault(def) && !strings.Contains(help, "(default "+def+")") && !strings.Contains(help, "(default "+strconv.Quote(def)+")") {
				t.Errorf("zero help %s lacks the default %q of flag --%s", c.path(), def, f.Name)
			}
		})
	}
	walk(tree())
	// The tree has every leaf: a walk that missed subcommands would pass.
	if commands < 20 || flags < 50 {
		t.Errorf("walked %d commands and %d flags; want the whole tree", commands, flags)
	}
	_, out, _ := run(t, "servers", "add", "--help")
	for _, w := range []string{"--name NAME", "--command PROGRAM", "--arg ARG", "--cwd DIR", "--env NAME", "--kind KIND", "(default stdio)", "--url URL", "--header NAME", "--addr ADDR", "(default 127.0.0.1:7077)", "--token-file FILE"} {
		if !strings.Contains(squash(out), w) {
			t.Errorf("zero servers add --help lacks %q:\n%s", w, out)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// columns is how wide line is on a terminal with tab stops every 8.
func columns(line string) int {
	n := 0
	for _, r := range line {
		if r == '\t' {
			n += 8 - n%8
			continue
		}
		n++
	}
	return n
}

// TestHelpFitsTheTerminal: no line of zero help, or of any command's help,
// is wider than 80 columns, so none is cut; and a summary that does not fit
// its list is wrapped, never cut.
func TestHelpFitsTheTerminal(t *testing.T) {
	check := func(what, text string) {
		for _, line := range strings.Split(text, "\n") {
			if columns(line) > helpWidth {
				t.Errorf("%s: a line of %d columns:\n%s", what, columns(line), line)
			}
		}
	}
	_, out, _ := run(t, "help")
	check("zero help", out)
	var walk func(c *Command)
	walk = func(c *Command) {
		for _, sub := range c.Subcommands {
			walk(sub)
		}
		if c.parent != nil {
			check("zero help "+c.path(), c.help())
		}
	}
	walk(tree())
	_, out, _ = run(t, "help", "mcp")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "workspace bridge a local MCP client (stdio) to a running zero serve's approved tools") {
		t.Errorf("zero help mcp cuts the workspace line:\n%s", out)
	}
}

// TestGroupUsageNamesEveryFlag: the usage a group's help begins with says
// [flags], or names every flag its subcommands take: zero help audit shows
// --database as zero help audit verify does.
func TestGroupUsageNamesEveryFlag(t *testing.T) {
	var walk func(c *Command)
	walk = func(c *Command) {
		for _, sub := range c.Subcommands {
			walk(sub)
		}
		if c.parent == nil || len(c.Subcommands) == 0 {
			return
		}
		usage, _, _ := strings.Cut(c.help(), "\n\n")
		if strings.Contains(usage, "[flags]") {
			return
		}
		for _, sub := range c.Subcommands {
			if sub.Flag == nil {
				continue
			}
			sub.Flag.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(usage, "--"+f.Name) {
					t.Errorf("zero help %s: its usage lacks --%s of %s:\n%s", c.path(), f.Name, sub.path(), usage)
				}
			})
		}
	}
	walk(tree())
	_, out, _ := run(t, "help", "audit")
	if !strings.HasPrefix(out, "usage: zero audit verify [--file FILE | --database URL]\n") {
		t.Errorf("zero help audit:\n%s", out)
	}
}
