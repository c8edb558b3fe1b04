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
// A value the caller holds as a secret ([Spec].Secret: a value the person
// who approved the program never sees) meets one more rule: it may not name
// a variable that steers which code runs ([Steers]: PATH, HOME, the
// interpreters' module paths, package managers' and git's configuration,
// and the like), because then a value nobody reviewed would decide what
// runs. The list covers the well-known ones; a program may read any
// variable as code, so it cannot be complete.
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
	// Secret are names with values that whoever approved the program never
	// saw; they override the rest, and a name [Steers] reports is refused.
	Secret map[string]string
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

// A prefixRule applies to every name that begins with prefix (in upper
// case).
type prefixRule struct{ prefix, reason string }

// deniedPrefixes are refused for every name they begin.
var deniedPrefixes = []prefixRule{
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

// CheckSecret is [Check] for a variable whose value is a secret, hidden
// from whoever approves the program: it also refuses a name that [Steers]
// reports.
func CheckSecret(name, value string) error {
	if err := Check(name, value); err != nil {
		return err
	}
	if reason := Steers(name); reason != "" {
		return fmt.Errorf("%w: %s %s, and a secret's value is never shown to whoever approves the program; "+
			"name the value in the command line instead (for example with /usr/bin/env NAME=value as the command)", ErrRejected, quoteName(name), reason)
	}
	return nil
}

// steeringNames decide which code a program loads or runs (compared in
// upper case): where it looks for programs, configuration, modules and
// plugins, and which helper programs it starts.
var steeringNames = byName([]struct {
	reason string
	names  []string
}{
	{"decides which program a name runs", []string{"PATH"}},
	{"decides which configuration and startup files programs read", []string{"HOME", "ZDOTDIR"}},
	{"decides where programs write, and may run, temporary files", []string{"TMPDIR"}},
	{"names a program that other programs start", []string{"SHELL", "EDITOR", "VISUAL", "PAGER", "BROWSER", "RUBYSHELL",
		"SSH_ASKPASS", "SUDO_ASKPASS", "CC", "CXX", "CPP", "RUSTC", "RUSTC_WRAPPER"}},
	{"changes what a shell runs", []string{"IFS", "CDPATH", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "MAKEFLAGS"}},
	{"decides which code python loads or runs", []string{"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE",
		"PYTHONEXECUTABLE", "PYTHONBREAKPOINT", "PYTHONWARNINGS", "PYTHONPLATLIBDIR", "PYTHONPYCACHEPREFIX"}},
	{"decides which code node loads", []string{"NODE_PATH", "NODE_REPL_EXTERNAL_MODULE"}},
	{"decides which code perl loads or runs", []string{"PERL5LIB", "PERLLIB", "PERL5DB"}},
	{"decides which code ruby loads", []string{"RUBYLIB", "GEM_PATH", "GEM_HOME", "BUNDLE_GEMFILE"}},
	{"decides which code java loads or runs", []string{"CLASSPATH", "JAVA_HOME"}},
	{"makes the C library load code or data", []string{"GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF"}},
	{"can make OpenSSL load code", []string{"OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES"}},
	{"decides which code go downloads, builds or runs", []string{"GOFLAGS", "GOPROXY", "GOTOOLCHAIN", "GOPATH", "GOROOT",
		"GOENV", "GOBIN", "GOWORK", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOINSECURE", "GOPRIVATE", "GONOPROXY",
		"GOMODCACHE", "GOCACHE"}},
	{"makes a GUI library load code", []string{"GTK_MODULES", "GTK_PATH", "GIO_MODULE_DIR", "GIO_EXTRA_MODULES",
		"GST_PLUGIN_PATH", "QT_PLUGIN_PATH", "QT_QPA_PLATFORM_PLUGIN_PATH"}},
})

// byName maps each name of each group to the group's reason.
func byName(groups []struct {
	reason string
	names  []string
}) map[string]string {
	m := map[string]string{}
	for _, g := range groups {
		for _, name := range g.names {
			m[name] = g.reason
		}
	}
	return m
}

// steeringPrefixes steer code for every name they begin (in upper case):
// git's and the package managers' configuration, which can name programs
// to run and places to download code from.
var steeringPrefixes = []prefixRule{
	{"GIT_", "configures git, which can make it run programs"},
	{"XDG_", "decides which configuration and data files programs read"},
	{"NPM_CONFIG_", "configures npm and npx, which can make them run programs or download other code"},
	{"YARN_", "configures yarn, which can make it run programs or download other code"},
	{"PNPM_", "configures pnpm, which can make it run programs or download other code"},
	{"COREPACK_", "decides which package manager corepack downloads and runs"},
	{"BUN_", "configures bun, which can make it download other code"},
	{"DENO_", "configures deno, which can make it load other code"},
	{"PIP_", "configures pip, which can make it download other code"},
	{"PIPX_", "configures pipx, which can make it download other code"},
	{"UV_", "configures uv and uvx, which can make them download other code"},
	{"POETRY_", "configures poetry, which can make it download other code"},
	{"CONDA_", "configures conda, which can make it load other code"},
	{"CARGO_", "configures cargo, which can make it run programs or download other code"},
	{"RUSTUP_", "decides which rust toolchain runs"},
	{"LUA_", "decides which code lua loads or runs"},
	{"DOTNET_", "configures .NET, which can make it load other code"},
	{"CORECLR_", "makes .NET load a profiler"},
	{"COMPLUS_", "configures .NET, which can make it load other code"},
}

// Steers returns why a variable named name steers which code a program
// loads or runs, or "" when it is not one Zero knows of. Names are
// compared in upper case.
func Steers(name string) string {
	return reasonFor(name, steeringNames, steeringPrefixes)
}

// reasonFor returns the reason names or prefixes give for name, compared
// in upper case, or "".
func reasonFor(name string, names map[string]string, prefixes []prefixRule) string {
	upper := strings.ToUpper(name)
	if reason, ok := names[upper]; ok {
		return reason
	}
	for _, p := range prefixes {
		if strings.HasPrefix(upper, p.prefix) {
			return p.reason
		}
	}
	return ""
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
	return reasonFor(name, deniedNames, deniedPrefixes)
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
// the parent, then every Set entry, then every Secret entry, each later one
// overriding an earlier one of the same name. Every Pass and Set name is
// checked with [Check], and every Secret name with [CheckSecret], whether or
// not the parent has it: the first refusal fails the whole build. The
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
	// Check in a fixed order, so that the same Spec always fails the same way.
	for _, values := range []struct {
		m     map[string]string
		check func(string, string) error
	}{{s.Set, Check}, {s.Secret, CheckSecret}} {
		names := make([]string, 0, len(values.m))
		for name := range values.m {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			v := values.m[name]
			if err := values.check(name, v); err != nil {
				return nil, err
			}
			vars[name] = v
		}
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
