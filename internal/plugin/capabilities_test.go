package plugin

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestCheck: Check refuses, on capabilities built in Go, what Parse
// refuses in a manifest, and what no manifest can hold (invalid UTF-8).
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps Capabilities
		want []string // what the error says; none for valid capabilities
	}{
		{"nothing", Capabilities{}, nil},
		{"everything", Capabilities{FSRead: []string{".git", "a b/c"}, FSWrite: []string{"out"}, NetworkHosts: []string{"localhost:8080", "[2001:db8::1]:443", "10.0.0.1:22"},
			Process: true, Secrets: []string{"GITHUB_TOKEN", "api_key"}, Limits: &Limits{TimeoutMS: 100, MemoryMiB: 4096, Processes: 16}}, nil},
		{"zero limits", Capabilities{Limits: &Limits{}}, nil},
		{"invalid UTF-8 in a path", Capabilities{FSRead: []string{"a\xffb"}}, []string{`fs.read "a\xffb" is not valid UTF-8`}},
		{"a NUL in a path", Capabilities{FSWrite: []string{"a\x00b"}}, []string{`fs.write "a\x00b" holds the control or invisible character U+0000`}},
		{"a zero-width space in a path", Capabilities{FSRead: []string{"no\u200btes"}}, []string{"U+200B"}},
		{"a NUL in a secret", Capabilities{Secrets: []string{"A\x00"}}, []string{`secrets: environment variable rejected: "A\x00" contains a NUL byte`}},
		{"a secret steering git", Capabilities{Secrets: []string{"GIT_SSH_COMMAND"}}, []string{`"GIT_SSH_COMMAND" configures git`}},
		{"a secret in lower case that the loader reads", Capabilities{Secrets: []string{"ld_preload"}}, []string{`"ld_preload" changes how the dynamic loader`}},
		{"a node secret in lower case", Capabilities{Secrets: []string{"node_debug"}}, []string{`"node_debug": NODE_* variables`}},
		{"a host with a path", Capabilities{NetworkHosts: []string{"a.example/x:443"}}, []string{`network.hosts "a.example/x:443" is not a valid host`}},
		{"a URL for a host", Capabilities{NetworkHosts: []string{"https://a.example:443"}}, []string{`network.hosts "https://a.example:443" is a URL: write only host:port`}},
		{"a host with user info", Capabilities{NetworkHosts: []string{"u@a.example:443"}}, []string{`is not a valid host`}},
		{"a label too long", Capabilities{NetworkHosts: []string{strings.Repeat("a", 64) + ".example:443"}}, []string{`is not a host name`}},
		{"every problem at once", Capabilities{FSRead: []string{"/"}, NetworkHosts: []string{"x"}, Secrets: []string{"PATH"}, Limits: &Limits{Processes: -1}},
			[]string{`fs.read "/" is absolute`, `network.hosts "x" has no port`, `secrets: "PATH"`, `limits.processes is -1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.caps.Check()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrCapabilities) {
				t.Fatalf("Check = %v, want an error wrapping ErrCapabilities", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestBeyond(t *testing.T) {
	outer := Capabilities{FSRead: []string{"notes"}, FSWrite: []string{"out/a"}, NetworkHosts: []string{"a.example:443"},
		Secrets: []string{"K"}, Limits: &Limits{TimeoutMS: 60_000}}
	for _, tc := range []struct {
		name  string
		inner Capabilities
		outer Capabilities
		want  []string
	}{
		{"nothing", Capabilities{}, outer, nil},
		{"the same", outer, outer, nil},
		{"paths under granted ones", Capabilities{FSRead: []string{"notes/x/y", "out/a/b"}, FSWrite: []string{"out/a/c"}}, outer, nil},
		{"the whole workspace holds every path", Capabilities{FSRead: []string{"a"}, FSWrite: []string{"b/c", "."}}, Capabilities{FSWrite: []string{"."}}, nil},
		{"reading the whole workspace", Capabilities{FSRead: []string{"."}}, outer, []string{`fs.read "."`}},
		{"a folder of a granted path", Capabilities{FSRead: []string{"out"}}, outer, []string{`fs.read "out"`}},
		{"a name that shares a prefix", Capabilities{FSRead: []string{"notes-old", "out/ab"}}, outer, []string{`fs.read "notes-old"`, `fs.read "out/ab"`}},
		{"writing what is only read", Capabilities{FSWrite: []string{"notes"}}, outer, []string{`fs.write "notes"`}},
		{"another host, another port", Capabilities{NetworkHosts: []string{"b.example:443", "a.example:80", "a.example:443"}}, outer,
			[]string{`network.hosts "b.example:443"`, `network.hosts "a.example:80"`}},
		{"a process", Capabilities{Process: true}, outer, []string{"process"}},
		{"a process where one is allowed", Capabilities{Process: true}, Capabilities{Process: true}, nil},
		{"another secret", Capabilities{Secrets: []string{"K", "k"}}, outer, []string{`secrets "k"`}},
		{"a longer timeout", Capabilities{Limits: &Limits{TimeoutMS: 60_001}}, outer, []string{"limits.timeout_ms 60001"}},
		{"the defaults against lower limits", Capabilities{}, Capabilities{Limits: &Limits{TimeoutMS: 1000, MemoryMiB: 64, Processes: 16}},
			[]string{"limits.timeout_ms 30000", "limits.memory_mib 256", "limits.processes 32"}},
		{"lower limits against the defaults", Capabilities{Limits: &Limits{TimeoutMS: 1000, MemoryMiB: 64, Processes: 16}}, Capabilities{}, nil},
		{"more memory and processes", Capabilities{Limits: &Limits{MemoryMiB: 257, Processes: 33}}, Capabilities{},
			[]string{"limits.memory_mib 257", "limits.processes 33"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.inner.Beyond(tc.outer), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Beyond (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps Capabilities
		want []string
	}{
		{"nothing", Capabilities{}, []string{"reads no files of the thread workspace, connects nowhere, starts no other programs and receives no secrets"}},
		{"limits are not access", Capabilities{Limits: &Limits{MemoryMiB: 64}}, []string{"reads no files of the thread workspace, connects nowhere, starts no other programs and receives no secrets"}},
		{"everything", Capabilities{FSRead: []string{"notes", "."}, FSWrite: []string{"out/a b", "."}, NetworkHosts: []string{"api.example.com:443", "[::1]:8080"},
			Process: true, Secrets: []string{"API_KEY", "B"}},
			[]string{
				"reads files under notes/",
				"reads every file in the thread workspace",
				"reads and writes files under out/a b/",
				"reads and writes every file in the thread workspace",
				"connects to api.example.com:443",
				"connects to [::1]:8080",
				"starts other programs",
				"receives the secret API_KEY",
				"receives the secret B",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.caps.Words()); diff != "" {
				t.Errorf("Words (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		caps      Capabilities
		effective Limits
		timeout   time.Duration
		words     []string
	}{
		{"the defaults", Capabilities{}, Limits{TimeoutMS: 30_000, MemoryMiB: 256, Processes: 32}, 30 * time.Second,
			[]string{"stops a call after 30 s", "at most 256 MiB of memory", "at most 32 processes and threads"}},
		{"zero limits are the defaults", Capabilities{Limits: &Limits{}}, Limits{TimeoutMS: 30_000, MemoryMiB: 256, Processes: 32}, 30 * time.Second,
			[]string{"stops a call after 30 s", "at most 256 MiB of memory", "at most 32 processes and threads"}},
		{"some set", Capabilities{Limits: &Limits{TimeoutMS: 1500, Processes: 16}}, Limits{TimeoutMS: 1500, MemoryMiB: 256, Processes: 16}, 1500 * time.Millisecond,
			[]string{"stops a call after 1.5 s", "at most 256 MiB of memory", "at most 16 processes and threads"}},
		{"all set", Capabilities{Limits: &Limits{TimeoutMS: 100, MemoryMiB: 4096, Processes: 1024}}, Limits{TimeoutMS: 100, MemoryMiB: 4096, Processes: 1024}, 100 * time.Millisecond,
			[]string{"stops a call after 0.1 s", "at most 4096 MiB of memory", "at most 1024 processes and threads"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.caps.EffectiveLimits()
			if diff := cmp.Diff(tc.effective, l); diff != "" {
				t.Errorf("EffectiveLimits (-want +got):\n%s", diff)
			}
			if l.Timeout() != tc.timeout {
				t.Errorf("Timeout = %v, want %v", l.Timeout(), tc.timeout)
			}
			if tc.caps.Limits != nil {
				if diff := cmp.Diff(tc.words, tc.caps.Limits.Words()); diff != "" {
					t.Errorf("Words (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.words, l.Words()); diff != "" {
				t.Errorf("Words of the effective limits (-want +got):\n%s", diff)
			}
		})
	}
}
