// Package envscrub builds the environment of a child process. The parent's
// environment is never passed on wholesale: a child gets a short list of safe
// defaults copied from the parent ([Defaults]), and exactly what the caller
// declares in a [Spec], by name or with a value.
//
// Some variables are refused outright, with an error naming them and never a
// silent drop: every LD_* and DYLD_* name and GLIBC_TUNABLES (they change how
// the dynamic loader loads every program), BASH_ENV and ENV (they make bash
// and sh run a file at startup), and NODE_OPTIONS, PERL5OPT, RUBYOPT,
// JAVA_TOOL_OPTIONS, _JAVA_OPTIONS and JDK_JAVA_OPTIONS (they make an
// interpreter load code or options whatever its arguments say). These names
// are compared without regard to case. Names that are not identifiers
// ([A-Za-z_][A-Za-z0-9_]*), names holding "=" and names or values holding a
// NUL byte are refused too.
//
// Errors name the variable but never quote its value, which may be a secret.
package envscrub

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Defaults are copied from the parent when set there.
var Defaults = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"}

// Spec is what the caller declares beyond the defaults.
type Spec struct {
	Pass []string          // names copied from the parent's environment when set there
	Set  map[string]string // names with explicit values; they override defaults and Pass
}

// ErrRejected reports a variable that a child process may not be given.
var ErrRejected = errors.New("environment variable rejected")

// deniedNames are refused whatever their value (compared in upper case).
var deniedNames = map[string]string{
	"GLIBC_TUNABLES":    "changes how the dynamic loader runs every program",
	"BASH_ENV":          "makes bash run a file at startup",
	"ENV":               "makes sh run a file at startup",
	"NODE_OPTIONS":      "makes node load code whatever its arguments say",
	"PERL5OPT":          "makes perl load code whatever its arguments say",
	"RUBYOPT":           "makes ruby load code whatever its arguments say",
	"JAVA_TOOL_OPTIONS": "makes the JVM load code whatever its arguments say",
	"_JAVA_OPTIONS":     "makes the JVM load code whatever its arguments say",
	"JDK_JAVA_OPTIONS":  "makes the JVM load code whatever its arguments say",
}

// deniedPrefixes are refused for every name they begin (in upper case).
var deniedPrefixes = []struct{ prefix, reason string }{
	{"LD_", "changes how the dynamic loader loads programs"},
	{"DYLD_", "changes how the macOS dynamic loader loads programs"},
}

// Check reports whether a child process may be given the variable name with
// this value. A refusal wraps [ErrRejected] and says why; it names the
// variable but never includes the value.
func Check(name, value string) error {
	if reason := nameProblem(name); reason != "" {
		return fmt.Errorf("%w: %s %s", ErrRejected, quoteName(name), reason)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("%w: %s: value contains a NUL byte", ErrRejected, quoteName(name))
	}
	return nil
}

// nameProblem returns why name is refused, or "" when it is acceptable.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.IndexByte(name, 0) >= 0:
		return "contains a NUL byte"
	case strings.IndexByte(name, '=') >= 0:
		return `contains "="`
	case !isIdentifier(name):
		return "is not a valid name (letters, digits and _, not starting with a digit)"
	}
	upper := strings.ToUpper(name)
	if reason, ok := deniedNames[upper]; ok {
		return reason
	}
	for _, d := range deniedPrefixes {
		if strings.HasPrefix(upper, d.prefix) {
			return d.reason
		}
	}
	return ""
}

// isIdentifier reports whether name matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// quoteName quotes a name for an error message. A name holding "=" is cut
// there: what follows may be a value, and values stay out of messages.
func quoteName(name string) string {
	if before, _, found := strings.Cut(name, "="); found {
		return fmt.Sprintf("%q", before+"=…")
	}
	return fmt.Sprintf("%q", name)
}

// Build returns the environment for a child process, as NAME=value entries
// sorted by name, reading the parent's environment with [os.LookupEnv].
func Build(s Spec) ([]string, error) {
	return BuildFrom(os.LookupEnv, s)
}

// BuildFrom is [Build] with the parent's environment read through lookup.
// The result is the defaults set in the parent, then the Pass names set in
// the parent, then every Set entry, each later one overriding an earlier one
// of the same name. Every Pass and Set name is checked with [Check], whether
// or not the parent has it: the first refusal fails the whole build. The
// result is never nil, so that it can never be mistaken for "inherit
// everything".
func BuildFrom(lookup func(string) (string, bool), s Spec) ([]string, error) {
	if lookup == nil {
		return nil, errors.New("build environment: nil lookup function")
	}
	vars := map[string]string{}
	for _, name := range Defaults {
		if v, ok := lookup(name); ok {
			vars[name] = v
		}
	}
	for _, name := range s.Pass {
		v, ok := lookup(name)
		if err := Check(name, v); err != nil {
			return nil, err
		}
		if ok {
			vars[name] = v
		}
	}
	// Check Set in a fixed order, so that the same Spec always fails the same way.
	names := make([]string, 0, len(s.Set))
	for name := range s.Set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := s.Set[name]
		if err := Check(name, v); err != nil {
			return nil, err
		}
		vars[name] = v
	}
	env := make([]string, 0, len(vars))
	for name, v := range vars {
		env = append(env, name+"="+v)
	}
	slices.SortFunc(env, func(a, b string) int {
		an, _, _ := strings.Cut(a, "=")
		bn, _, _ := strings.Cut(b, "=")
		return strings.Compare(an, bn)
	})
	return env, nil
}
