package servers

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// problem is a problem a test expects: its entry, and words its message
// holds.
type problem struct{ entry, holds string }

func TestParseImport(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []Imported
		notes    []ImportMessage
		problems []problem // nil: no error
	}{
		{
			name: "Claude Desktop",
			in: `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github", ""],
				"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret", "REGION": ""}}}, "globalShortcut": "Ctrl+Space"}`,
			want: []Imported{{
				Config: Config{Name: "github", Kind: KindStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github", ""},
					Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "REGION"}},
				Secrets: Secrets{Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret", "REGION": ""}},
			}},
			notes: []ImportMessage{{Message: `ignored "globalShortcut": only the servers are imported`}},
		},
		{
			name: "Cursor, a remote server, headers canonical",
			in:   "\uFEFF" + `{"mcpServers": {"remote": {"url": " https://mcp.example.com/mcp ", "headers": {"authorization": "Bearer abc", "x-api-key": "k"}}}}`,
			want: []Imported{{
				Config:  Config{Name: "remote", Kind: KindHTTP, URL: "https://mcp.example.com/mcp", Headers: []string{"Authorization", "X-Api-Key"}},
				Secrets: Secrets{Headers: map[string]string{"Authorization": "Bearer abc", "X-Api-Key": "k"}},
			}},
			notes: []ImportMessage{{Entry: "remote", Message: "no type given: imported as a streamable HTTP server; if it speaks the older SSE transport, edit its kind before you approve it"}},
		},
		{
			name: "VS Code, in the text's order, inputs ignored",
			in: `{"inputs": [{"type": "promptString", "id": "k", "password": true}], "servers": {
				"zeta": {"type": "stdio", "command": "node", "args": ["server.js"], "env": null},
				"alpha": {"type": "sse", "url": "https://example.com/sse"},
				"mid": {"type": "http", "url": "https://example.org/mcp", "headers": {"X-Key": "v"}}}}`,
			want: []Imported{
				{Config: Config{Name: "zeta", Kind: KindStdio, Command: "node", Args: []string{"server.js"}}},
				{Config: Config{Name: "alpha", Kind: KindSSE, URL: "https://example.com/sse"}},
				{Config: Config{Name: "mid", Kind: KindHTTP, URL: "https://example.org/mcp", Headers: []string{"X-Key"}},
					Secrets: Secrets{Headers: map[string]string{"X-Key": "v"}}},
			},
			notes: []ImportMessage{{Message: "the inputs list is ignored: Zero prompts for no input; set secret values on each server's Edit page"}},
		},
		{
			name: "placeholders are never expanded: in a value they declare the name, elsewhere they refuse the entry",
			in: `{"servers": {"ok": {"command": "x"},
				"gh": {"type": "stdio", "command": "npx", "args": ["--dir=${workspaceFolder}"], "env": {"TOKEN": "Bearer ${input:gh-token}"}},
				"web": {"url": "https://${env:HOST}/mcp"},
				"vars": {"type": "stdio", "command": "npx", "env": {"TOKEN": "${input:gh-token}", "HOME_DIR": "${env:HOME}", "REGION": "eu"}},
				"auth": {"type": "http", "url": "https://e.com/mcp", "headers": {"authorization": "Bearer ${input:token}"}},
				"named": {"type": "stdio", "command": "x", "env": {"${input:n}": "v"}}}}`,
			want: []Imported{
				{Config: Config{Name: "ok", Kind: KindStdio, Command: "x"}},
				{Config: Config{Name: "vars", Kind: KindStdio, Command: "npx", Env: []string{"TOKEN", "HOME_DIR", "REGION"}},
					Secrets: Secrets{Env: map[string]string{"REGION": "eu"}}},
				{Config: Config{Name: "auth", Kind: KindHTTP, URL: "https://e.com/mcp", Headers: []string{"Authorization"}}},
			},
			notes: []ImportMessage{
				{Entry: "gh", Message: `the value of env "TOKEN" holds the placeholder "${input:gh-token}", which is not expanded: TOKEN is declared without a value; set its whole value on the server's Edit page`},
				{Entry: "web", Message: "no type given: imported as a streamable HTTP server; if it speaks the older SSE transport, edit its kind before you approve it"},
				{Entry: "vars", Message: `the value of env "TOKEN" holds the placeholder "${input:gh-token}", which is not expanded: TOKEN is declared without a value; set its whole value on the server's Edit page`},
				{Entry: "vars", Message: `the value of env "HOME_DIR" holds the placeholder "${env:HOME}", which is not expanded: HOME_DIR is declared without a value; set its whole value on the server's Edit page`},
				{Entry: "auth", Message: `the value of header "Authorization" holds the placeholder "${input:token}", which is not expanded: Authorization is declared without a value; set its whole value on the server's Edit page`},
			},
			problems: []problem{
				{"gh", `args[0] holds the placeholder "${workspaceFolder}", and placeholders are not expanded`},
				{"web", `url holds the placeholder "${env:HOST}"`},
				{"named", `the env name "${input:n}" holds the placeholder "${input:n}"`},
			},
		},
		{
			name:     "an unknown field is refused by name",
			in:       `{"mcpServers": {"a": {"command": "x", "disabled": true, "envFile": ".env"}}}`,
			problems: []problem{{"a", `the field "disabled" is not imported`}, {"a", `the field "envFile" is not imported`}},
		},
		{
			name:     "a trailing comma",
			in:       "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
			problems: []problem{{"", "the text is not JSON: invalid character '}' looking for beginning of object key string (line 3, column 26)"}},
		},
		{
			name:     "VS Code's comments",
			in:       "{\n  // my servers\n  \"servers\": {}\n}",
			problems: []problem{{"", "(line 2, column 3); VS Code's mcp.json may hold comments"}},
		},
		{
			name:     "cut short",
			in:       `{"mcpServers": {"a": {"command": "x"}`,
			problems: []problem{{"", "it ends before the JSON does"}},
		},
		{name: "two values", in: `{"mcpServers": {}} {}`, problems: []problem{{"", "after top-level value (line 1, column 20)"}}},
		{name: "empty", in: " \n", problems: []problem{{"", "the text is empty"}}},
		{name: "not an object", in: `[{"command": "x"}]`, problems: []problem{{"", "want a JSON object holding mcpServers"}}},
		{name: "no list", in: `{"mcp": {}}`, problems: []problem{{"", "holds neither mcpServers"}}},
		{name: "both lists", in: `{"mcpServers": {}, "servers": {}}`, problems: []problem{{"", "both mcpServers and servers"}}},
		{name: "a list twice", in: `{"servers": {"a": {"command": "x"}}, "servers": {}}`, problems: []problem{{"", `the field servers appears twice`}}},
		{name: "no servers", in: `{"mcpServers": {}}`, problems: []problem{{"", "mcpServers lists no servers"}}},
		{name: "a list that is no object", in: `{"mcpServers": ["a"]}`, problems: []problem{{"", "mcpServers: want an object of servers by name"}}},
		{
			name:     "a name twice refuses both entries, whichever was meant",
			in:       `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "a": {"command": "z"}, "a": {"command": "w"}}}`,
			want:     []Imported{{Config: Config{Name: "b", Kind: KindStdio, Command: "y"}}},
			problems: []problem{{"a", "the name appears 3 times in mcpServers, so none of them is imported"}},
		},
		{
			name: "duplicates inside an entry",
			in:   `{"mcpServers": {"a": {"command": "x", "command": "y", "env": {"K": "1", "K": "2"}}, "b": {"url": "https://e.com", "headers": {"x-key": "1", "X-Key": "2"}}}}`,
			problems: []problem{{"a", `the field "command" appears twice`}, {"a", `env "K" appears twice`},
				{"b", `header "X-Key" appears twice`}},
			notes: []ImportMessage{{Entry: "b", Message: "no type given: imported as a streamable HTTP server; if it speaks the older SSE transport, edit its kind before you approve it"}},
		},
		{
			name:     "a name the workspace refuses",
			in:       `{"mcpServers": {"my server": {"command": "x"}, "-x": {"command": "x"}}}`,
			problems: []problem{{"my server", "the name is not one a server may have"}, {"-x", "the name is not one a server may have"}},
		},
		{
			name: "wrong kinds of value",
			in:   `{"mcpServers": {"a": {"command": 5, "args": "-y", "env": {"PORT": 8080}}, "b": "npx", "c": {"url": "https://e.com", "headers": ["X"]}}}`,
			problems: []problem{{"a", "command: want a string"}, {"a", "args: want an array of strings"}, {"a", "command is empty"},
				{"a", `env "PORT": want a string value`}, {"b", "want an object with type, command"}, {"c", "headers: want an object of names and their values"}},
			notes: []ImportMessage{{Entry: "c", Message: "no type given: imported as a streamable HTTP server; if it speaks the older SSE transport, edit its kind before you approve it"}},
		},
		{
			name: "kinds that do not fit",
			in: `{"servers": {"both": {"command": "x", "url": "https://e.com"}, "neither": {"args": []}, "none": {},
				"ws": {"type": "websocket", "url": "wss://e.com"}, "s": {"type": "stdio", "command": "x", "headers": {"A": "b"}},
				"h": {"type": "http", "url": "https://e.com", "env": {"A": "b"}}, "nocmd": {"type": "stdio"}}}`,
			problems: []problem{{"both", "both a program"}, {"neither", "command is empty"}, {"none", "neither command"},
				{"ws", `type "websocket": want stdio, http or sse`}, {"s", "a stdio entry has no url or headers"},
				{"h", "an http entry has no command, args or env"}, {"nocmd", "command is empty"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, notes, err := ParseImport([]byte(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			checkProblems(t, err, tc.problems)
		})
	}
}

func checkProblems(t *testing.T, err error, want []problem) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var ie *ImportError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v, want an *ImportError", err)
	}
	if len(ie.Problems) != len(want) {
		t.Fatalf("%d problems, want %d: %q", len(ie.Problems), len(want), ie.Problems)
	}
	for i, p := range ie.Problems {
		if p.Entry != want[i].entry || !strings.Contains(p.Message, want[i].holds) {
			t.Errorf("problem %d: %q: %s; want %q: ...%s...", i, p.Entry, p.Message, want[i].entry, want[i].holds)
		}
	}
}

// TestParseImportBounds: the text's size and its number of servers are
// bounded, and so is what one entry's problems add up to.
func TestParseImportBounds(t *testing.T) {
	entry := `"a": {"command": "x"}`
	big := `{"mcpServers": {` + entry + `}, "pad": "` + strings.Repeat("x", MaxImportSize) + `"}`
	_, _, err := ParseImport([]byte(big))
	checkProblems(t, err, []problem{{"", fmt.Sprintf("an import takes at most %d (1 MiB)", MaxImportSize)}})

	var entries []string
	for i := range MaxImportEntries + 1 {
		entries = append(entries, fmt.Sprintf(`"s%d": {"command": "x"}`, i))
	}
	_, _, err = ParseImport([]byte(`{"mcpServers": {` + strings.Join(entries, ",") + `}}`))
	checkProblems(t, err, []problem{{"", "mcpServers lists 101 servers; an import takes at most 100"}})
	got, _, err := ParseImport([]byte(`{"mcpServers": {` + strings.Join(entries[:MaxImportEntries], ",") + `}}`))
	if err != nil || len(got) != MaxImportEntries {
		t.Errorf("%d servers: %d imported, %v", MaxImportEntries, len(got), err)
	}

	var fields []string
	for i := range 50 {
		fields = append(fields, fmt.Sprintf(`"f%d": 1`, i))
	}
	_, _, err = ParseImport([]byte(`{"mcpServers": {"a": {"command": "x", ` + strings.Join(fields, ",") + `}}}`))
	var ie *ImportError
	if !errors.As(err, &ie) || len(ie.Problems) != maxEntryProblems+1 || ie.Problems[maxEntryProblems].Message != "and 40 more problems" {
		t.Errorf("50 unknown fields: %v", err)
	}
	long := strings.Repeat("n", 1000)
	_, _, err = ParseImport([]byte(`{"mcpServers": {"` + long + `": {"command": "x"}}}`))
	if !errors.As(err, &ie) || len(ie.Problems[0].Entry) > maxShown+3 || len(err.Error()) > 400 {
		t.Errorf("a long name is quoted unbounded: %v", err)
	}
}

// TestParseImportNeverQuotesValues: whatever is wrong with an entry, its
// problems never hold an env or header value.
func TestParseImportNeverQuotesValues(t *testing.T) {
	const secret = "imp0rt-s3cret-canary"
	for _, in := range []string{
		`{"mcpServers": {"a": {"command": "x", "env": {"K": "` + secret + `"}, "bogus": 1}}}`,
		`{"mcpServers": {"a": {"url": "https://e.com", "headers": {"A": "` + secret + ` ${input:x}"}, "b": 1}}}`,
		`{"mcpServers": {"a b": {"command": "x", "env": {"K": "` + secret + `", "K": "` + secret + `"}}}}`,
		`{"mcpServers": {"a": {"command": "x", "env": {"K": "` + secret + `"}}}, "servers": {}}`,
		`{"mcpServers": {"a": {"command": "x", "env": {"K": "` + secret + `",}}}}`,
	} {
		got, notes, err := ParseImport([]byte(in))
		if err == nil || len(got) != 0 {
			t.Fatalf("%s: %v, %d entries", in, err, len(got))
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprint(notes), secret) {
			t.Errorf("a problem quotes the value: %v", err)
		}
	}
}

// FuzzParseImport: ParseImport never panics, and what it accepts is
// bounded, named as a server may be, and free of placeholders; a value is
// given only for a name declared. What it neither accepts nor refuses is
// nothing.
func FuzzParseImport(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["1"], "env": {"K": "v"}}}}`))
	f.Add([]byte(`{"servers": {"b": {"type": "sse", "url": "https://e.com", "headers": {"h": "v"}}}, "inputs": []}`))
	f.Add([]byte(`{"servers": {"c": {"command": "${input:x}"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, err := ParseImport(data)
		if len(got) > MaxImportEntries {
			t.Fatalf("%d entries", len(got))
		}
		for _, e := range got {
			c := e.Config
			if !nameRE().MatchString(c.Name) || (c.Kind != KindStdio && c.Kind != KindHTTP && c.Kind != KindSSE) {
				t.Fatalf("accepted %+v", c)
			}
			for _, v := range append(append([]string{c.Command, c.URL}, c.Args...), secretValues(e.Secrets)...) {
				if placeholderRE().MatchString(v) {
					t.Fatalf("accepted a placeholder in %q", v)
				}
			}
			for name := range e.Secrets.Env {
				if !slices.Contains(c.Env, name) {
					t.Fatalf("a value for the undeclared %q: %+v", name, e)
				}
			}
			for name := range e.Secrets.Headers {
				if !slices.Contains(c.Headers, name) {
					t.Fatalf("a value for the undeclared %q: %+v", name, e)
				}
			}
			for _, n := range append(slices.Clone(c.Env), c.Headers...) {
				if placeholderRE().MatchString(n) {
					t.Fatalf("accepted a placeholder in the name %q", n)
				}
			}
		}
		if err == nil && len(got) == 0 {
			t.Fatal("nothing imported, and no error")
		}
	})
}

func secretValues(s Secrets) []string {
	var out []string
	for _, v := range s.Env {
		out = append(out, v)
	}
	for _, v := range s.Headers {
		out = append(out, v)
	}
	return out
}
