package envscrub

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FuzzCheck compares Check with an independent statement of the rules: a
// name is accepted exactly when it is an identifier, is not a denied name or
// prefix (in any case) and the value has no NUL byte. A refusal wraps
// ErrRejected and its message does not depend on the value.
func FuzzCheck(f *testing.F) {
	for _, seed := range [][2]string{
		{"PATH", "/bin"}, {"LD_PRELOAD", "x"}, {"ld_bind_now", "1"}, {"DYLD_X", ""}, {"NODE_OPTIONS", ""},
		{"BASH_ENV", ""}, {"ENV", ""}, {"A=B", "c"}, {"A\x00", ""}, {"OK", "\x00"}, {"", ""}, {"1A", ""},
		{"_", ""}, {"ΣIGMA", ""}, {"LD", ""}, {"X", "=\n"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		err := Check(name, value)
		upper := strings.ToUpper(name)
		_, denied := deniedNames[upper]
		want := identifier.MatchString(name) &&
			!denied && !strings.HasPrefix(upper, "LD_") && !strings.HasPrefix(upper, "DYLD_") &&
			!strings.Contains(value, "\x00")
		if (err == nil) != want {
			t.Fatalf("Check(%q, %q) = %v, want accepted=%v", name, value, err, want)
		}
		if err != nil {
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("Check(%q, %q) = %v, does not wrap ErrRejected", name, value, err)
			}
			// The message must not depend on the value: it is the same as for
			// an empty value (or a bare NUL, when only the value is at fault).
			ref := Check(name, "")
			if ref == nil {
				ref = Check(name, "\x00")
			}
			if ref == nil || ref.Error() != err.Error() {
				t.Fatalf("Check(%q, %q) = %v, which depends on the value (reference %v)", name, value, err, ref)
			}
		}
	})
}
