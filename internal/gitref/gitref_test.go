package gitref

import (
	"os/exec"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// branchCases are names and whether git check-ref-format --branch takes
// them as they are; the test checks each against the real git too.
var branchCases = []struct {
	name string
	ok   bool
}{
	{"main", true}, {"fix/ümlaut", true}, {"a+b", true}, {"feature/x-1.2", true}, {"agent-zero/20261202-1", true},
	{"x.lock/y", false}, {"x.lock", false}, {"a/b.lock", false}, {".hidden", false}, {"a/.b", false},
	{"a..b", false}, {"a@{b", false}, {"a//b", false}, {"/a", false}, {"a/", false},
	{"a.", false}, {"-a", false}, {"a b", false}, {"a~b", false}, {"a^b", false}, {"a:b", false},
	{"a?b", false}, {"a*b", false}, {"a[b", false}, {"a\\b", false}, {"a\tb", false}, {"a\x7fb", false},
	{"HEAD", false}, {"", false},
}

func TestValidBranchMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, c := range branchCases {
		if got := ValidBranch(c.name); got != c.ok {
			t.Errorf("ValidBranch(%q) = %v, want %v", c.name, got, c.ok)
		}
		if c.name == "" {
			continue
		}
		out, err := exec.Command(git, "check-ref-format", "--branch", c.name).Output()
		gitOK := err == nil && strings.TrimSpace(string(out)) == c.name
		if gitOK != c.ok {
			t.Errorf("git check-ref-format --branch %q: accepts %v, the table says %v", c.name, gitOK, c.ok)
		}
	}
}

// TestValidBranchStricterThanGit: names git takes that Zero refuses on
// purpose, because a person could not read them as they are.
func TestValidBranchStricterThanGit(t *testing.T) {
	// "@": git --branch reads it as a shorthand for the current branch.
	for _, name := range []string{"@", "fix\u200bx", "a\u202eb", "\xff", strings.Repeat("a", MaxBranch+1)} {
		if ValidBranch(name) {
			t.Errorf("ValidBranch(%q) = true", name)
		}
	}
}

func TestValidSHA(t *testing.T) {
	for s, want := range map[string]bool{
		strings.Repeat("a", 40): true, strings.Repeat("0", 64): true, strings.Repeat("a", 39): false,
		strings.Repeat("A", 40): false, strings.Repeat("g", 40): false, strings.Repeat("a", 41): false, "": false,
	} {
		if got := ValidSHA(s); got != want {
			t.Errorf("ValidSHA(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzValidBranch: a name ValidBranch accepts is one git accepts as it is,
// printable and without a leading "-".
func FuzzValidBranch(f *testing.F) {
	for _, c := range branchCases {
		f.Add(c.name)
	}
	git, err := exec.LookPath("git")
	f.Fuzz(func(t *testing.T, name string) {
		if !ValidBranch(name) {
			return
		}
		if !utf8.ValidString(name) || strings.HasPrefix(name, "-") || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Fatalf("ValidBranch(%q) accepts an unreadable name", name)
		}
		if err == nil {
			out, cerr := exec.Command(git, "check-ref-format", "--branch", name).Output()
			if cerr != nil || strings.TrimSpace(string(out)) != name {
				t.Fatalf("ValidBranch(%q) = true, but git check-ref-format --branch refuses or rewrites it (%v %q)", name, cerr, out)
			}
		}
	})
}
