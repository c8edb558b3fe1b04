// Package gitref owns the rules for the git names Zero takes from outside
// (webhook payloads, a remote's answers, the model) before they reach a git
// command line: full object names ([ValidSHA]) and branch names
// ([ValidBranch]), the latter following git check-ref-format --branch and a
// little stricter. It is pure: it runs nothing, and every caller judges a
// name by these rules and no others.
package gitref

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBranch bounds a branch name's length in bytes.
const MaxBranch = 255

// ValidSHA reports whether s is a full object name: 40 (SHA-1) or 64
// (SHA-256) lowercase hexadecimal digits.
func ValidSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidBranch reports whether s is a branch name that git check-ref-format
// --branch accepts as it is (no normalization): no component starting with
// "." or ending in ".lock", no "..", "@{", "//", no control character,
// space, "~", "^", ":", "?", "*", "[" or "\", not "@", not starting or
// ending with "/", not ending with ".", not starting with "-", and not
// "HEAD". Stricter than git, it also refuses invalid UTF-8, invisible
// characters (anything unicode.IsPrint refuses, such as U+200B or U+202E)
// and names over MaxBranch bytes. "fix/ümlaut" and "a+b" pass; "x.lock/y"
// does not.
func ValidBranch(s string) bool {
	if s == "" || len(s) > MaxBranch || !utf8.ValidString(s) || s[0] == '-' || s == "@" || s == "HEAD" ||
		strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".") ||
		strings.Contains(s, "..") || strings.Contains(s, "@{") || strings.Contains(s, "//") ||
		strings.ContainsAny(s, " ~^:?*[\\") {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	for _, c := range strings.Split(s, "/") {
		if c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return true
}
