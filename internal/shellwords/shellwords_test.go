package shellwords

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// accepted are lines a shell only splits into words.
var accepted = []struct {
	line string
	want []string
}{
	{"npx -y @modelcontextprotocol/server-filesystem /tmp", []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}},
	{"  node\tserver.js  ", []string{"node", "server.js"}},
	{`uvx 'mcp-server-git' --repository "/home/me/my repo"`, []string{"uvx", "mcp-server-git", "--repository", "/home/me/my repo"}},
	{`a '' "" b`, []string{"a", "", "", "b"}},
	{`it\'s "say \"hi\"" 'back\slash' "a\b" "\$\` + "`" + `\\"`, []string{"it's", `say "hi"`, `back\slash`, `a\b`, "$`\\"}},
	{`one\ word two`, []string{"one word", "two"}},
	{"npx -y \\\n  @scope/server \\\n  /tmp\n", []string{"npx", "-y", "@scope/server", "/tmp"}},
	{"\"multi\nline\" 'x\ny'", []string{"multi\nline", "x\ny"}},
	{`"joined"'parts'\ and\ more`, []string{"joined" + "parts and more"}},
	{"prog a=b --x=y:z a#b x~ ''~ \\~ '$HOME' \"*\" '|' \\; \\$ \\{a,b\\}", []string{"prog", "a=b", "--x=y:z", "a#b", "x~", "~", "~", "$HOME", "*", "|", ";", "$", "{a,b}"}},
	{"café 日本 \x01ctl", []string{"café", "日本", "\x01ctl"}},
	{"bad\xffbyte '\xfe'", []string{"bad\xffbyte", "\xfe"}},
	{`./server --json='{"a": 1}'`, []string{"./server", `--json={"a": 1}`}},
	{`"a\` + "\n" + `b"`, []string{"ab"}},
}

// TestSplit: each line splits into the words a shell would give.
func TestSplit(t *testing.T) {
	for _, c := range accepted {
		got, err := Split(c.line)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.line, diff)
		}
	}
}

// TestSplitAgreesWithShells: bash and dash, given each accepted line as
// printf's arguments in an empty folder, print the very words Split
// returns.
func TestSplitAgreesWithShells(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a", "b", "x.txt"} { // for a glob to find, were one let through
		os.WriteFile(dir+"/"+f, nil, 0o600)
	}
	for _, shell := range []string{"bash", "dash"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("no %s", shell)
			continue
		}
		for _, c := range accepted {
			got, err := Split(c.line)
			if err != nil {
				continue // TestSplit reports it
			}
			cmd := exec.Command(path, "-c", `printf '%s\0' `+c.line)
			cmd.Dir, cmd.Env = dir, []string{"HOME=/home/nobody", "PATH=/usr/bin:/bin", "LC_ALL=C"}
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("%s -c %q: %v", shell, c.line, err)
				continue
			}
			want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s splits %q otherwise (-%s +Split):\n%s", shell, c.line, shell, diff)
			}
		}
	}
}

// TestSplitRefuses: whatever a shell would do more than split words with is
// refused, saying what was found and where.
func TestSplitRefuses(t *testing.T) {
	for _, c := range []struct {
		line  string
		kind  error
		found string
		at    int
	}{
		{"", ErrEmpty, "", 0},
		{" \t\n", ErrEmpty, "", 0},
		{"cat x | grep y", ErrOperator, "|", 7},
		{"a && b", ErrOperator, "&&", 3},
		{"a || b", ErrOperator, "||", 3},
		{"a; b", ErrOperator, ";", 2},
		{"a > out", ErrOperator, ">", 3},
		{"a >> out", ErrOperator, ">>", 3},
		{"a < in", ErrOperator, "<", 3},
		{"a 2>&1", ErrOperator, ">&", 4},
		{"a &", ErrOperator, "&", 3},
		{"(a)", ErrOperator, "(", 1},
		{"a\nb", ErrOperator, "\n", 2},
		{"node $(which x)", ErrExpansion, "$(", 6},
		{"node `which x`", ErrExpansion, "`", 6},
		{"node $HOME/x", ErrExpansion, "$", 6},
		{"node ${HOME}", ErrExpansion, "${", 6},
		{"node $'\\x41'", ErrExpansion, "$'", 6},
		{`node "$HOME"`, ErrExpansion, "$", 7},
		{`node "$(id)"`, ErrExpansion, "$(", 7},
		{"node \"`id`\"", ErrExpansion, "`", 7},
		{"ls *.go", ErrExpansion, "*", 4},
		{"ls a?", ErrExpansion, "?", 5},
		{"ls [ab]", ErrExpansion, "[", 4},
		{"echo {a,b}", ErrExpansion, "{", 6},
		{"node ~/server.js", ErrExpansion, "~", 6},
		{"node --dir=~/x", ErrExpansion, "~", 12},
		{"node --path=/a:~/b", ErrExpansion, "~", 16},
		{"node # comment", ErrExpansion, "#", 6},
		{"API_KEY=secret npx server", ErrAssignment, "API_KEY=", 1},
		{"'open", ErrUnclosed, "'", 1},
		{`a "open`, ErrUnclosed, `"`, 3},
		{`a "esc\"`, ErrUnclosed, `"`, 3},
		{`trailing\`, ErrUnclosed, `\`, 9},
		{"nul\x00byte", ErrNUL, "", 4},
		{"日本 | x", ErrOperator, "|", 4},
		{strings.Repeat("w ", MaxWords+1), ErrTooMany, "", 0},
	} {
		words, err := Split(c.line)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%.40q: %q, %v; want a refusal", c.line, words, err)
			continue
		}
		if !errors.Is(err, c.kind) || e.Found != c.found || e.At != c.at || e.Advice == "" {
			t.Errorf("%.40q: %v (found %q at %d), want %v, %q at %d", c.line, err, e.Found, e.At, c.kind, c.found, c.at)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the message quotes a value: %v", c.line, err)
		}
	}
}

// quote writes w in single quotes, as a shell reads it back.
func quote(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// FuzzSplit: Split never panics; what it accepts is at least one word, none
// holding a NUL byte, and those words, each quoted, split back into
// themselves; a line it refuses says why.
func FuzzSplit(f *testing.F) {
	for _, c := range accepted {
		f.Add(c.line)
	}
	for _, s := range []string{"a | b", "$(x)", "'", `"\`, "~", "a=b", "#", "{", "\\\n", "\"\\\n\"", "x\n \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind == nil || words != nil {
				t.Fatalf("%q: %v, %q", line, err, words)
			}
			return
		}
		if len(words) == 0 || len(words) > MaxWords {
			t.Fatalf("%q: %d words", line, len(words))
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			if strings.IndexByte(w, 0) >= 0 {
				t.Fatalf("%q: a word holds NUL", line)
			}
			quoted[i] = quote(w)
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil || !cmp.Equal(again, words) {
			t.Fatalf("%q: %q quoted splits into %q, %v", line, words, again, err)
		}
	})
}
