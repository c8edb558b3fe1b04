package envscrub

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parent is a fake parent environment.
func parent(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestCheckRejects(t *testing.T) {
	tests := []struct {
		name, value string
		wantInMsg   string
	}{
		{"LD_PRELOAD", "/tmp/evil.so", "LD_PRELOAD"},
		{"LD_LIBRARY_PATH", "/tmp", "LD_LIBRARY_PATH"},
		{"LD_AUDIT", "x", "LD_AUDIT"},
		{"LD_", "", "LD_"},
		{"ld_preload", "x", "ld_preload"},
		{"DYLD_INSERT_LIBRARIES", "x", "DYLD_INSERT_LIBRARIES"},
		{"DYLD_LIBRARY_PATH", "x", "DYLD_LIBRARY_PATH"},
		{"GLIBC_TUNABLES", "x", "GLIBC_TUNABLES"},
		{"NODE_OPTIONS", "--require /tmp/x.js", "NODE_OPTIONS"},
		{"node_options", "x", "node_options"},
		{"BASH_ENV", "/tmp/x.sh", "BASH_ENV"},
		{"ENV", "/tmp/x.sh", "ENV"},
		{"PERL5OPT", "-Mevil", "PERL5OPT"},
		{"RUBYOPT", "-revil", "RUBYOPT"},
		{"JAVA_TOOL_OPTIONS", "-javaagent:x", "JAVA_TOOL_OPTIONS"},
		{"_JAVA_OPTIONS", "x", "_JAVA_OPTIONS"},
		{"JDK_JAVA_OPTIONS", "x", "JDK_JAVA_OPTIONS"},
		{"", "x", "empty"},
		{"1ABC", "x", "1ABC"},
		{"A-B", "x", "A-B"},
		{"A B", "x", "A B"},
		{"BASH_FUNC_ls%%", "() { :; }", "BASH_FUNC_ls%%"},
		{"É", "x", "É"},
		{"A=B", "x", `"A=…"`},
		{"A\x00B", "x", `"A\x00B"`},
		{"GOOD", "a\x00b", "GOOD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.name, tt.value)
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("Check(%q) = %v, want ErrRejected", tt.name, err)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("error %q does not name %q", err, tt.wantInMsg)
			}
		})
	}
}

// TestCheckHidesValues makes sure a value, which may be a secret, never
// reaches an error message, even when it is smuggled into the name.
func TestCheckHidesValues(t *testing.T) {
	for _, tt := range []struct{ name, value string }{
		{"TOKEN=hunter2", ""},
		{"LD_PRELOAD", "hunter2"},
		{"GOOD", "hunter2\x00"},
	} {
		err := Check(tt.name, tt.value)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Check(%q, %q) = %v; want an error without the value", tt.name, tt.value, err)
		}
	}
}

func TestCheckAccepts(t *testing.T) {
	for _, name := range []string{"PATH", "_", "_X", "a", "GOFLAGS", "LDFLAGS", "LD", "XLD_PRELOAD", "DYLD", "ENVIRONMENT", "MY_ENV", "NODE_PATH", "x1_2"} {
		if err := Check(name, "any value, even = and \n"); err != nil {
			t.Errorf("Check(%q) = %v, want nil", name, err)
		}
	}
}

func TestBuildPrecedence(t *testing.T) {
	env := parent(map[string]string{
		"PATH":     "/usr/bin:/bin",
		"HOME":     "/home/u",
		"LANG":     "C.UTF-8",
		"SECRET":   "s3cr3t",
		"AWS_KEY":  "k",
		"EDITOR":   "vi",
		"EMPTYVAR": "",
	})
	tests := []struct {
		name string
		spec Spec
		want []string
	}{
		{"defaults only, never the rest", Spec{},
			[]string{"HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
		{"pass copies when set", Spec{Pass: []string{"EDITOR", "NOT_SET", "EMPTYVAR"}},
			[]string{"EDITOR=vi", "EMPTYVAR=", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
		{"set adds", Spec{Set: map[string]string{"GOFLAGS": "-mod=mod"}},
			[]string{"GOFLAGS=-mod=mod", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
		{"set overrides a default", Spec{Set: map[string]string{"HOME": "/work"}},
			[]string{"HOME=/work", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
		{"set overrides pass", Spec{Pass: []string{"EDITOR"}, Set: map[string]string{"EDITOR": "ed"}},
			[]string{"EDITOR=ed", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
		{"set may be empty", Spec{Set: map[string]string{"PATH": ""}},
			[]string{"HOME=/home/u", "LANG=C.UTF-8", "PATH="}},
		{"pass of a default is harmless", Spec{Pass: []string{"PATH"}},
			[]string{"HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
		{"sorted by name, not by entry", Spec{Set: map[string]string{"A": "1", "AB": "2", "A_": "3"}},
			[]string{"A=1", "AB=2", "A_=3", "HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildFrom(env, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("BuildFrom (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	env := parent(map[string]string{"PATH": "/bin", "LD_PRELOAD": "/tmp/evil.so"})
	tests := []struct {
		name  string
		spec  Spec
		names string // what the error must name
	}{
		{"pass LD_PRELOAD set in parent", Spec{Pass: []string{"LD_PRELOAD"}}, "LD_PRELOAD"},
		{"pass LD_AUDIT not set in parent", Spec{Pass: []string{"LD_AUDIT"}}, "LD_AUDIT"},
		{"set LD_PRELOAD", Spec{Set: map[string]string{"LD_PRELOAD": "x"}}, "LD_PRELOAD"},
		{"set DYLD_", Spec{Set: map[string]string{"DYLD_INSERT_LIBRARIES": "x"}}, "DYLD_INSERT_LIBRARIES"},
		{"set NODE_OPTIONS", Spec{Set: map[string]string{"NODE_OPTIONS": "--require x"}}, "NODE_OPTIONS"},
		{"pass BASH_ENV", Spec{Pass: []string{"BASH_ENV"}}, "BASH_ENV"},
		{"set ENV", Spec{Set: map[string]string{"ENV": "/x"}}, "ENV"},
		{"set invalid name", Spec{Set: map[string]string{"A-B": "x"}}, "A-B"},
		{"pass invalid name", Spec{Pass: []string{"9LIVES"}}, "9LIVES"},
		{"set name with =", Spec{Set: map[string]string{"A=B": "x"}}, "A="},
		{"set NUL in value", Spec{Set: map[string]string{"OK": "a\x00b"}}, "OK"},
		{"set NUL in name", Spec{Set: map[string]string{"O\x00K": "x"}}, `O\x00K`},
		{"good and bad together", Spec{Pass: []string{"HOME"}, Set: map[string]string{"GOOD": "1", "LD_PRELOAD": "x"}}, "LD_PRELOAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildFrom(env, tt.spec)
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("BuildFrom = %q, %v; want ErrRejected", got, err)
			}
			if got != nil {
				t.Errorf("BuildFrom returned %q with its error", got)
			}
			if !strings.Contains(err.Error(), tt.names) {
				t.Errorf("error %q does not name %q", err, tt.names)
			}
		})
	}
}

// TestBuildNeverInheritsParent checks that the parent's LD_PRELOAD and other
// undeclared variables stay behind, and that the result is never nil (which
// os/exec would read as "inherit everything").
func TestBuildNeverInheritsParent(t *testing.T) {
	t.Setenv("ZERO_ENVSCRUB_SECRET", "s3cr3t")
	t.Setenv("LD_PRELOAD", "/nonexistent/evil.so")
	got, err := Build(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		if !contains(Defaults, name) {
			t.Errorf("Build(Spec{}) includes %q, which is not a default", kv)
		}
	}
	empty, err := BuildFrom(parent(nil), Spec{})
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("BuildFrom(empty parent) = %#v, %v; want a non-nil empty slice", empty, err)
	}
	if _, err := BuildFrom(nil, Spec{}); err == nil {
		t.Error("BuildFrom(nil lookup) succeeded")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSecretsCannotSteerCode: a variable whose value whoever approves the
// program never sees may not be one that decides which code runs; the same
// names are fine as Zero's own values (Set), and names that only carry data
// are fine as secrets.
func TestSecretsCannotSteerCode(t *testing.T) {
	steering := []string{"PATH", "path", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_DIRS", "PYTHONPATH", "PYTHONHOME",
		"PYTHONSTARTUP", "NODE_PATH", "PERL5LIB", "RUBYLIB", "GEM_PATH", "GCONV_PATH", "GIT_EXEC_PATH", "GIT_SSH_COMMAND",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_GLOBAL", "npm_config_script_shell", "NPM_CONFIG_REGISTRY",
		"UV_INDEX_URL", "PIP_INDEX_URL", "GOFLAGS", "GOPROXY", "CLASSPATH", "OPENSSL_CONF", "TMPDIR", "SHELL", "EDITOR"}
	for _, name := range steering {
		err := CheckSecret(name, "/home/drafter/evil")
		if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "evil") {
			t.Errorf("CheckSecret(%q) = %v, want a refusal naming it without its value", name, err)
		}
		if _, err := BuildFrom(parent(nil), Spec{Secret: map[string]string{name: "x"}}); !errors.Is(err, ErrRejected) {
			t.Errorf("Build with secret %s = %v, want ErrRejected", name, err)
		}
		if err := Check(name, "x"); err != nil {
			t.Errorf("Check(%q) = %v: Zero's own values may set it", name, err)
		}
	}
	for _, name := range []string{"API_KEY", "GITHUB_TOKEN", "GITLAB_TOKEN", "GOOGLE_API_KEY", "PYTHONUNBUFFERED", "NODE_ENV", "LOG_LEVEL"} {
		if err := CheckSecret(name, "v"); err != nil {
			t.Errorf("CheckSecret(%q) = %v, want nil", name, err)
		}
	}
	if err := CheckSecret("LD_PRELOAD", "x"); !errors.Is(err, ErrRejected) {
		t.Errorf("CheckSecret does not apply Check's rules: %v", err)
	}
	env, err := BuildFrom(parent(map[string]string{"PATH": "/usr/bin"}), Spec{Set: map[string]string{"A": "set"}, Secret: map[string]string{"A": "secret", "B": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A=secret", "B=b", "PATH=/usr/bin"}, env); diff != "" {
		t.Errorf("secrets override Set (-want +got):\n%s", diff)
	}
}
