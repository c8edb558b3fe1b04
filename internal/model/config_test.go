package model

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// env returns a getenv over vars that records the names asked for.
func env(vars map[string]string, asked *[]string) func(string) string {
	return func(name string) string {
		*asked = append(*asked, name)
		return vars[name]
	}
}

func TestFromEnv(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	tests := []struct {
		name   string
		prefix string
		vars   map[string]string
		want   Config // compared when wantErr is empty
		// wantErr is a piece of the error; the error must also wrap ErrConfig.
		wantErr string
	}{
		{
			name:   "agent zero prefix",
			prefix: "AGENT_ZERO",
			vars: map[string]string{
				"AGENT_ZERO_MODEL_BASE_URL": "https://api.example.com/v1",
				"AGENT_ZERO_MODEL_API_KEY":  key,
				"AGENT_ZERO_MODEL":          "gpt-test",
				"ZERO_MODEL":                "not this one",
			},
			want: Config{BaseURL: "https://api.example.com/v1", APIKey: key, Model: "gpt-test"},
		},
		{
			name:   "zero prefix, no key, loopback http",
			prefix: "ZERO",
			vars: map[string]string{
				"ZERO_MODEL_BASE_URL":       " http://127.0.0.1:8080/v1/\n",
				"ZERO_MODEL":                "llama",
				"AGENT_ZERO_MODEL_API_KEY":  key,
				"AGENT_ZERO_MODEL_BASE_URL": "https://other.example/v1",
			},
			want: Config{BaseURL: "http://127.0.0.1:8080/v1/", Model: "llama"},
		},
		{
			name:   "http to localhost",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "http://localhost:11434/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "http://localhost:11434/v1", Model: "m"},
		},
		{
			name:   "http to ::1",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "http://[::1]:8080/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "http://[::1]:8080/v1", Model: "m"},
		},
		{
			name:   "http to 127.0.0.0/8",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "http://127.3.2.1/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "http://127.3.2.1/v1", Model: "m"},
		},
		{
			name:   "http to a numeric spelling of loopback",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "http://0x7f000001:8080/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "http://127.0.0.1:8080/v1", Model: "m"},
		},
		{
			name:   "http to a decimal spelling of loopback",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "http://2130706433/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "http://127.0.0.1/v1", Model: "m"},
		},
		{
			name:   "http to IPv4-mapped loopback",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "http://[::ffff:127.0.0.1]/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "http://[::ffff:7f00:1]/v1", Model: "m"},
		},
		{
			name:   "https host canonical",
			prefix: "ZERO",
			vars:   map[string]string{"ZERO_MODEL_BASE_URL": "https://API.Example.COM/v1", "ZERO_MODEL": "m"},
			want:   Config{BaseURL: "https://api.example.com/v1", Model: "m"},
		},
		{
			name:    "http to a hex spelling of a private address",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "http://0xc0a80105/v1", "ZERO_MODEL": "m"},
			wantErr: `plain http is allowed only to a loopback host (127.0.0.0/8, ::1, localhost), not "192.168.1.5"`,
		},
		{
			name:    "http to a name under .localhost",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "http://app.localhost/v1", "ZERO_MODEL": "m"},
			wantErr: "plain http is allowed only to a loopback host",
		},
		{
			name:    "a host the URL standard refuses",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https://1.2.3.09/v1", "ZERO_MODEL": "m"},
			wantErr: "not an IPv4 address",
		},
		{name: "unknown prefix", prefix: "OPENAI", wantErr: "unknown prefix"},
		{name: "empty prefix", prefix: "", wantErr: "unknown prefix"},
		{name: "lower-case prefix", prefix: "zero", wantErr: "unknown prefix"},
		{
			name:    "missing base URL",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL": "m"},
			wantErr: "ZERO_MODEL_BASE_URL is not set",
		},
		{
			name:    "missing model",
			prefix:  "AGENT_ZERO",
			vars:    map[string]string{"AGENT_ZERO_MODEL_BASE_URL": "https://api.example.com/v1"},
			wantErr: "AGENT_ZERO_MODEL is not set",
		},
		{
			name:    "http to a public host",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "http://api.example.com/v1", "ZERO_MODEL": "m"},
			wantErr: "plain http is allowed only to a loopback host",
		},
		{
			name:    "http to a private address",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "http://192.168.1.5:8080/v1", "ZERO_MODEL": "m"},
			wantErr: "plain http is allowed only to a loopback host",
		},
		{
			name:    "http to a name under localhost",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "http://localhost.example.com/v1", "ZERO_MODEL": "m"},
			wantErr: "plain http is allowed only to a loopback host",
		},
		{
			name:    "userinfo",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https://user:" + key + "@api.example.com/v1", "ZERO_MODEL": "m"},
			wantErr: "credentials",
		},
		{
			name:    "query",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https://api.example.com/v1?key=" + key, "ZERO_MODEL": "m"},
			wantErr: "query or fragment",
		},
		{
			name:    "empty query",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https://api.example.com/v1?", "ZERO_MODEL": "m"},
			wantErr: "query or fragment",
		},
		{
			name:    "fragment",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https://api.example.com/v1#x", "ZERO_MODEL": "m"},
			wantErr: "query or fragment",
		},
		{
			name:    "other scheme",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "ftp://api.example.com/v1", "ZERO_MODEL": "m"},
			wantErr: "scheme",
		},
		{
			name:    "no host",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https:///v1", "ZERO_MODEL": "m"},
			wantErr: "no host",
		},
		{
			name:    "relative",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "api.example.com/v1", "ZERO_MODEL": "m"},
			wantErr: "no scheme",
		},
		{
			name:    "control character in model",
			prefix:  "ZERO",
			vars:    map[string]string{"ZERO_MODEL_BASE_URL": "https://api.example.com/v1", "ZERO_MODEL": "m\n"},
			wantErr: "ZERO_MODEL holds a control character",
		},
		{
			name:   "newline in key",
			prefix: "ZERO",
			vars: map[string]string{
				"ZERO_MODEL_BASE_URL": "https://api.example.com/v1",
				"ZERO_MODEL":          "m",
				"ZERO_MODEL_API_KEY":  key + "\r\nX-Injected: 1",
			},
			wantErr: "ZERO_MODEL_API_KEY holds a control character",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			got, err := FromEnv(tt.prefix, env(tt.vars, &asked))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("FromEnv = %+v, want an error holding %q", got, tt.wantErr)
				}
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("FromEnv error = %v, want ErrConfig holding %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), key) {
					t.Fatalf("FromEnv error %q holds the key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFromEnvReadsOnlyFixedNames checks that FromEnv asks getenv for the six
// fixed names and nothing else, and for no name at all given an unknown
// prefix.
func TestFromEnvReadsOnlyFixedNames(t *testing.T) {
	vars := map[string]string{
		"AGENT_ZERO_MODEL_BASE_URL": "https://api.example.com/v1",
		"AGENT_ZERO_MODEL":          "m",
		"ZERO_MODEL_BASE_URL":       "https://api.example.com/v1",
		"ZERO_MODEL":                "m",
	}
	var asked []string
	for _, prefix := range []string{"AGENT_ZERO", "ZERO", "OPENAI", "ZERO_", "AGENT"} {
		FromEnv(prefix, env(vars, &asked))
	}
	slices.Sort(asked)
	asked = slices.Compact(asked)
	want := []string{
		"AGENT_ZERO_MODEL", "AGENT_ZERO_MODEL_API_KEY", "AGENT_ZERO_MODEL_BASE_URL",
		"ZERO_MODEL", "ZERO_MODEL_API_KEY", "ZERO_MODEL_BASE_URL",
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("names asked (-want +got):\n%s", diff)
	}
}

// TestNewChecksConfig checks that a Config built by hand meets the same
// rules: every call fails, before any request, and without the key.
func TestNewChecksConfig(t *testing.T) {
	const key = "sk-hand-made-key-42"
	srv := newFakeServer(t, reply{body: answerBody("hi")})
	for _, cfg := range []Config{
		{BaseURL: "http://api.example.com/v1", APIKey: key, Model: "m"},
		{BaseURL: srv.URL + "/v1?k=" + key, APIKey: key, Model: "m"},
		{BaseURL: srv.URL + "/v1", APIKey: key},
		{Model: "m"},
	} {
		c := New(cfg, srv.Client())
		_, err := c.Chat(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
		if !errors.Is(err, ErrConfig) {
			t.Errorf("Chat with %+v: error %v, want ErrConfig", cfg, err)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("error %q holds the key", err)
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

// TestNewSendsCanonicalHost checks that a base URL with a numeric spelling
// of loopback is sent to 127.0.0.1 by address, even by a caller's client
// that would otherwise hand the spelling to the system resolver.
func TestNewSendsCanonicalHost(t *testing.T) {
	srv := newFakeServer(t, reply{body: answerBody("ok")})
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	var dialled []string
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	c := New(Config{BaseURL: "http://0x7f000001:" + port + "/v1", Model: "m"}, hc)
	if res, err := c.Chat(t.Context(), Request{Messages: userSays("hi")}); err != nil || res.Message.Content != "ok" {
		t.Fatalf("Chat = %+v, %v", res, err)
	}
	if want := []string{"127.0.0.1:" + port}; !slices.Equal(dialled, want) {
		t.Errorf("dialled %q, want %q", dialled, want)
	}
}
