package web

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCommandLineShowsHiddenCharacters: what a person reads on the review
// page names every character: controls, bidirectional overrides,
// zero-width and other invisible characters are escaped, not rendered.
func TestCommandLineShowsHiddenCharacters(t *testing.T) {
	tests := []struct {
		command string
		args    []string
		want    string
	}{
		{"/usr/bin/node", []string{"server.js", "--port=8080"}, "/usr/bin/node server.js --port=8080"},
		{"npx", []string{"-y", "two words", "it's"}, `npx -y 'two words' 'it'\''s'`},
		{"x", []string{""}, "x ''"},
		{"x", []string{"safe\u202etxt.exe"}, `x $'safe\u202etxt.exe'`},
		{"x", []string{"a\u200bb", "tab\there", "new\nline"}, `x $'a\u200bb' $'tab\there' $'new\nline'`},
		{"x", []string{"bell\a", "nbsp\u00a0", "tag\U000E0041"}, `x $'bell\x07' $'nbsp\u00a0' $'tag\U000e0041'`},
		{"x", []string{"bad\xffutf8", `back\slash`}, `x $'bad\xffutf8' 'back\slash'`},
		{"x", []string{"$(rm -rf /)", "; sudo"}, `x '$(rm -rf /)' '; sudo'`},
	}
	for _, tc := range tests {
		if got := CommandLine(tc.command, tc.args); got != tc.want {
			t.Errorf("CommandLine(%q, %q) = %s, want %s", tc.command, tc.args, got, tc.want)
		}
	}
	if got := Visible("https://example.com/\u202emcp"); got != `https://example.com/\u202emcp` {
		t.Errorf("Visible = %s", got)
	}
}

// TestCommandLineSplitsBack: bash, given the line, splits it back into the
// very same arguments, so the line shown is the command that runs.
func TestCommandLineSplitsBack(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	args := []string{"plain", "two words", "it's", "", `back\slash`, "$HOME", "`id`", "a\u202eb", "tab\t", "new\nline",
		"bell\a", "bad\xffbyte", "quote\"d", "glob*?[x]", "~user", "semi;colon", "'", "\\'", "$'x'"}
	line := CommandLine("printf", append([]string{`%s\0`}, args...))
	out, err := exec.Command(bash, "-c", line).Output()
	if err != nil {
		t.Fatalf("bash -c %s: %v", line, err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, args) {
		t.Errorf("bash split %s into\n%q, want\n%q", line, got, args)
	}
	if bytes.ContainsAny([]byte(line), "\u202e\a\n\t") {
		t.Error("the line holds a hidden character as itself")
	}
}
