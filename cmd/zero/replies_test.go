package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/mcpserver"
)

// A replyRow is what node/replies.mjs reports of one call.
type replyRow struct {
	Server, Label string
	Bytes         int
	IsError       bool
	Text, TextEnd string
	TextLength    int
	Structured    map[string]any
	Ping          bool
	Error         string
	Tools         *int // in the last row of a server: how many tools it lists after its calls
}

type plannedServer struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Args    []string      `json:"args"`
	Calls   []plannedCall `json:"calls"`
	budget  int
	checks  map[string]func(replyRow) error
	tools   int
}

type plannedCall struct {
	Label     string         `json:"label"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Follow    string         `json:"follow,omitempty"`
}

// add plans a call and what its answer must hold.
func (s *plannedServer) add(label, tool string, args map[string]any, check func(replyRow) error) {
	s.Calls = append(s.Calls, plannedCall{Label: label, Tool: tool, Arguments: args})
	s.checks[label] = check
}

// follow plans a call made again from where each answer says the rest
// begins; check applies to every answer.
func (s *plannedServer) follow(label, tool, by string, args map[string]any, check func(replyRow) error) {
	s.Calls = append(s.Calls, plannedCall{Label: label, Tool: tool, Arguments: args, Follow: by})
	s.checks[label] = check
}

// runReplies runs the plan through node/replies.mjs, the official
// TypeScript SDK client, and returns its rows.
func runReplies(t *testing.T, servers []*plannedServer) []replyRow {
	t.Helper()
	script, _ := filepath.Abs("../../node/replies.mjs")
	if _, err := os.Stat("../../node/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
	plan, _ := json.Marshal(map[string]any{"servers": servers})
	cmd := exec.Command("node", script)
	cmd.Stdin = bytes.NewReader(plan)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var rows []replyRow
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r replyRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("replies.mjs: %v: %.300s", err, sc.Text())
		}
		rows = append(rows, r)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("replies.mjs: %v\n%s", err, stderr.String())
	}
	return rows
}

// contains checks that the text holds each of want.
func contains(isError bool, want ...string) func(replyRow) error {
	return func(r replyRow) error {
		if r.IsError != isError {
			return fmt.Errorf("isError %v, want %v", r.IsError, isError)
		}
		for _, w := range want {
			if !strings.Contains(r.Text+r.TextEnd, w) {
				return fmt.Errorf("the text lacks %q", w)
			}
		}
		return nil
	}
}

// TestRepliesFitTypeScriptClient sends every tool its worst case, among them
// each case the issue measured, through the official TypeScript SDK client
// (which ends the session when a message passes 10 MiB) against the real
// binary: every reply fits the server's budget (8 MiB by default, or what
// --max-reply says), the session answers a ping after each call, and after
// all of them lists its tools; each answer is the one its case needs.
func TestRepliesFitTypeScriptClient(t *testing.T) {
	bin := zeroBinary(t)
	dir := workDir(t)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lt := write("lt.txt", bytes.Repeat([]byte("<"), 1<<20))
	write("huge.txt", bytes.Repeat([]byte(strings.Repeat("a line of text ", 4)+"\n"), 100_000)) // 6.1 MB
	write("media.png", bytes.Repeat([]byte{0x89}, 8<<20))
	quotes := bytes.Repeat([]byte(`"`+"\n"), 1<<20)
	write("edit.txt", quotes)
	for d := range 35 {
		for e := range 35 {
			for f := range 35 {
				write(fmt.Sprintf("tree/directory-%02d/subdirectory-%02d/a-file-with-a-fairly-long-name-%02d.txt", d, e, f), nil)
			}
		}
	}
	for f := range 20_000 {
		write(fmt.Sprintf("flat/a-file-with-a-fairly-long-name-%05d.txt", f), nil)
	}

	const mib8 = mcpserver.DefaultReplyBudget
	budget := "8388608"
	newServer := func(name string, budget int, args ...string) *plannedServer {
		return &plannedServer{Name: name, Command: bin, Args: args, budget: budget, checks: map[string]func(replyRow) error{}}
	}
	fs := newServer("filesystem", mib8, "mcp", "filesystem", dir)
	fs.tools = 14
	fs.add("read_text_file of 1 MiB of <", "read_text_file", map[string]any{"path": lt}, func(r replyRow) error {
		if r.IsError || r.TextLength != 1<<20 || r.Bytes > 2_200_000 {
			return fmt.Errorf("isError %v, %d characters in %d bytes", r.IsError, r.TextLength, r.Bytes)
		}
		return nil
	})
	fs.add("read_text_file of 6 MB", "read_text_file", map[string]any{"path": "huge.txt"}, contains(true, budget, "read it in parts with head or tail: head "))
	fs.add("read_file of 6 MB", "read_file", map[string]any{"path": "huge.txt"}, contains(true, budget, "head "))
	fs.add("read_text_file head of 6 MB", "read_text_file", map[string]any{"path": "huge.txt", "head": 60_000}, contains(false, "a line of text"))
	fs.add("read_media_file of 8 MiB", "read_media_file", map[string]any{"path": "media.png"}, contains(true, budget, "this tool returns files of at most about"))
	fs.add("read_multiple_files of 7 MB", "read_multiple_files", map[string]any{"paths": []string{lt, "huge.txt", "hello.txt"}},
		contains(false, "lt.txt:\n<<<", "huge.txt: Error - skipped: with it, the reply would pass", "hello.txt:\nhello\n"))
	fs.add("write_file of 5 MiB", "write_file", map[string]any{"path": "written.txt", "content": strings.Repeat("<&>\"\\", 1<<20)}, contains(false, "Successfully wrote"))
	fs.add("edit_file with a diff of 8 MiB", "edit_file", map[string]any{"path": "edit.txt", "edits": []any{map[string]any{"oldText": string(quotes), "newText": strings.Repeat("'\n", 1<<20)}}},
		contains(true, budget, "the call itself was carried out, only its answer is left out"))
	fs.add("create_directory", "create_directory", map[string]any{"path": "made"}, contains(false, "Successfully created"))
	fs.add("move_file", "move_file", map[string]any{"source": "written.txt", "destination": "made/written.txt"}, contains(false, "Successfully moved"))
	fs.add("get_file_info", "get_file_info", map[string]any{"path": "made/written.txt"}, contains(false, "size: 5242880"))
	fs.add("list_allowed_directories", "list_allowed_directories", map[string]any{}, contains(false, dir))
	fs.add("list_directory of 20,000 entries", "list_directory", map[string]any{"path": "flat"}, contains(false, "[FILE] a-file-with-a-fairly-long-name-19999.txt"))
	fs.add("list_directory_with_sizes of 20,000 entries", "list_directory_with_sizes", map[string]any{"path": "flat"}, contains(false, "Total: 20000 files"))
	fs.add("directory_tree of 44,135 entries", "directory_tree", map[string]any{"path": "tree"},
		contains(true, budget, "ask for the tree of a subdirectory of tree, or leave parts out with excludePatterns"))
	fs.add("directory_tree of a subdirectory", "directory_tree", map[string]any{"path": "tree/directory-07"}, contains(false, `"name": "subdirectory-00"`, `"name": "a-file-with-a-fairly-long-name-34.txt"`))
	fs.add("search_files of 44,135 entries", "search_files", map[string]any{"path": dir, "pattern": "**"}, contains(true, budget, "narrow the pattern"))

	low := newServer("filesystem --max-reply 100000", 100_000, "mcp", "filesystem", "--max-reply", "100000", dir)
	low.tools = 14
	low.add("read_text_file of 1 MiB of <", "read_text_file", map[string]any{"path": lt}, contains(true, "reply budget of 100000 bytes (--max-reply)", "not even its first or last line fits"))
	low.add("read_text_file of 6 MB", "read_text_file", map[string]any{"path": "huge.txt"}, contains(true, "100000", "head 801 fits, and so does tail 801"))
	low.add("read_text_file head 801", "read_text_file", map[string]any{"path": "huge.txt", "head": 801}, contains(false, "a line of text"))
	low.add("directory_tree of a subdirectory", "directory_tree", map[string]any{"path": "tree/directory-07"}, contains(true, "100000", "excludePatterns"))
	low.add("directory_tree of a smaller one", "directory_tree", map[string]any{"path": "tree/directory-07/subdirectory-01"}, contains(false, "a-file-with"))

	shell := newServer("shell", mib8, "mcp", "shell", dir)
	shell.tools = 1
	shell.add("execute_command with 1 MiB of control bytes", "execute_command", map[string]any{"program": "sh", "args": []string{"-c", `head -c 1048576 /dev/zero | tr '\0' '\1'`}},
		func(r replyRow) error {
			if r.IsError || r.Bytes > 1_500_000 || !strings.Contains(r.Text, "1048576 bytes that are not text, as base64") || r.Structured["stdout_base64"] == nil {
				return fmt.Errorf("isError %v, %d bytes, %q", r.IsError, r.Bytes, r.Text)
			}
			return nil
		})
	shell.add("execute_command with 2 MiB of quotes and backslashes", "execute_command",
		map[string]any{"program": "sh", "args": []string{"-c", `head -c 1048576 /dev/zero | tr '\0' '"'; head -c 1048576 /dev/zero | tr '\0' '\\' >&2`}},
		func(r replyRow) error {
			if r.IsError || r.Bytes < mib8*3/4 || r.Structured["stdout_truncated"] != true || !strings.Contains(r.Text, "to fit this server's reply budget of 8388608 bytes") {
				return fmt.Errorf("isError %v, %d bytes, %v, %q", r.IsError, r.Bytes, r.Structured["stdout_truncated"], r.Text)
			}
			return nil
		})
	shell.add("execute_command with ANSI colours", "execute_command", map[string]any{"program": "printf", "args": []string{`\033[31mred\033[0m`}},
		contains(false, "exit code: 0\n--- stdout: 12 bytes ---\n(terminal escape sequences are left out here", "\nred\n--- stderr: empty ---"))
	lowShell := newServer("shell --max-reply 100000", 100_000, "mcp", "shell", "--max-reply", "100000", dir)
	lowShell.tools = 1
	lowShell.add("execute_command with 1 MiB of control bytes", "execute_command", map[string]any{"program": "sh", "args": []string{"-c", `head -c 1048576 /dev/zero | tr '\0' '\1'`}},
		contains(false, "cut from 1048576 bytes to fit this server's reply budget of 100000 bytes"))

	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch r.URL.Path {
		case "/lt":
			io.WriteString(w, strings.Repeat("<", 1_000_000))
		case "/control":
			io.WriteString(w, strings.Repeat("\x01", 1_500_000))
		}
	}))
	defer web.Close()
	fetch := newServer("fetch", mib8, "mcp", "fetch")
	fetch.tools = 1
	fetch.add("fetch max_length 999999 of <", "fetch", map[string]any{"url": web.URL + "/lt", "max_length": 999999}, func(r replyRow) error {
		if r.IsError || r.Bytes > 2_200_000 || !strings.HasSuffix(r.TextEnd, "start_index of 999999 to get more content.</error>") {
			return fmt.Errorf("isError %v, %d bytes, %q", r.IsError, r.Bytes, r.TextEnd)
		}
		return nil
	})
	fetch.follow("fetch max_length 999999 of control bytes", "fetch", "start_index", map[string]any{"url": web.URL + "/control", "max_length": 999999}, contains(false, "Contents of"))
	lowFetch := newServer("fetch --max-reply 100000", 100_000, "mcp", "fetch", "--max-reply", "100000")
	lowFetch.tools = 1
	lowFetch.follow("fetch of 1,000,000 <", "fetch", "start_index", map[string]any{"url": web.URL + "/lt", "max_length": 999999}, contains(false, "Contents of"))

	ws := filepath.Join(dir, "ws")
	skill := func(name, body string) {
		write(filepath.Join("ws", ".zero", "skills", name, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: A large skill.\n---\n"+body))
	}
	skill("angles", strings.Repeat("<", 1_000_000))
	skill("controls", strings.Repeat("\x01", 1_000_000))
	write(filepath.Join("ws", ".zero", "skills", "angles", "ref.txt"), bytes.Repeat([]byte("\x02"), 1<<20))
	skills := newServer("skills", mib8, "mcp", "skills", "--workspace", ws)
	skills.tools = 3
	skills.add("list_skills", "list_skills", map[string]any{}, contains(false, "angles", "controls"))
	skills.add("activate_skill of a 1 MB SKILL.md of <", "activate_skill", map[string]any{"name": "angles"}, func(r replyRow) error {
		if r.IsError || r.Bytes > 2_200_000 {
			return fmt.Errorf("isError %v, %d bytes: %.300q", r.IsError, r.Bytes, r.Text)
		}
		return nil
	})
	skills.add("activate_skill of a 1 MB SKILL.md of control characters", "activate_skill", map[string]any{"name": "controls"},
		contains(true, budget, `read its SKILL.md in parts with read_skill_resource (name "controls", path "SKILL.md", and offset)`))
	skills.follow("read_skill_resource of 1 MiB of control characters", "read_skill_resource", "offset", map[string]any{"name": "angles", "path": "ref.txt"}, contains(false))
	skills.follow("read_skill_resource of SKILL.md", "read_skill_resource", "offset", map[string]any{"name": "controls", "path": "SKILL.md"}, contains(false))

	graph := filepath.Join(dir, "memory.jsonl")
	var g strings.Builder
	for i := 0; g.Len() < 4_900_000; i++ {
		fmt.Fprintf(&g, `{"type":"entity","name":"entity %d","entityType":"thing","observations":["an observation <of> some length & more, number %d"]}`+"\n", i, i)
	}
	os.WriteFile(graph, []byte(g.String()), 0o644)
	memory := newServer("memory", mib8, "mcp", "memory", "--memory-file", graph)
	memory.tools = 9
	memory.add("read_graph of a 4.9 MB file", "read_graph", map[string]any{}, nil)
	memory.add("search_nodes of every entity", "search_nodes", map[string]any{"query": "entity"}, nil)
	memory.add("open_nodes", "open_nodes", map[string]any{"names": []string{"entity 1", "entity 2"}}, contains(false, "entity 2"))
	var many []any
	for i := range 20_000 {
		many = append(many, map[string]any{"name": fmt.Sprintf("new %d", i), "entityType": "t", "observations": []string{strings.Repeat("<\"&", 60)}})
	}
	memory.add("create_entities of 20,000", "create_entities", map[string]any{"entities": many}, nil)
	memory.add("create_relations", "create_relations", map[string]any{"relations": []any{map[string]any{"from": "entity 1", "to": "entity 2", "relationType": "knows"}}}, nil)
	memory.add("add_observations", "add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "entity 1", "contents": []string{"more"}}}}, nil)
	memory.add("delete_observations", "delete_observations", map[string]any{"deletions": []any{map[string]any{"entityName": "entity 1", "observations": []string{"more"}}}}, nil)
	memory.add("delete_relations", "delete_relations", map[string]any{"relations": []any{map[string]any{"from": "entity 1", "to": "entity 2", "relationType": "knows"}}}, nil)
	memory.add("delete_entities", "delete_entities", map[string]any{"entityNames": []string{"entity 3"}}, nil)

	servers := []*plannedServer{fs, low, shell, lowShell, fetch, lowFetch, skills, memory}
	byName := map[string]*plannedServer{}
	for _, s := range servers {
		byName[s.Name] = s
	}
	began := time.Now()
	rows := runReplies(t, servers)
	t.Logf("%d answers in %v", len(rows), time.Since(began))
	seen := map[string]int{}
	for _, r := range rows {
		s := byName[r.Server]
		if r.Tools != nil {
			if *r.Tools != s.tools {
				t.Errorf("%s: after its calls, tools/list gives %d tools, want %d", r.Server, *r.Tools, s.tools)
			}
			seen[r.Server+" tools"]++
			continue
		}
		label, _, _ := strings.Cut(r.Label, "#")
		seen[r.Server+": "+label]++
		t.Logf("%s: %s: %d bytes, isError %v", r.Server, r.Label, r.Bytes, r.IsError)
		if r.Error != "" || !r.Ping || r.Bytes == 0 || r.Bytes > s.budget {
			t.Errorf("%s: %s: a reply of %d bytes (budget %d); error %q; the session answered a ping after: %v", r.Server, r.Label, r.Bytes, s.budget, r.Error, r.Ping)
			continue
		}
		if check := s.checks[label]; check != nil {
			if err := check(r); err != nil {
				t.Errorf("%s: %s: %v; text %.300q ... %.300q", r.Server, r.Label, err, r.Text, r.TextEnd)
			}
		}
	}
	for _, s := range servers {
		if seen[s.Name+" tools"] != 1 {
			t.Errorf("%s: no tools/list after the calls", s.Name)
		}
		for _, c := range s.Calls {
			n := seen[s.Name+": "+c.Label]
			if n == 0 || c.Follow == "" && n != 1 || c.Follow != "" && n < 2 {
				t.Errorf("%s: %s: %d answers", s.Name, c.Label, n)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "edit.txt")); !bytes.Equal(b, bytes.Repeat([]byte("'\n"), 1<<20)) {
		t.Error("edit_file, whose answer was left out, did not edit the file")
	}
}

// TestTextMatchesReferenceBytes reads text full of characters JSON may
// escape (`<`, `>`, `&`, quotes, backslashes, control characters, non-ASCII)
// from the reference filesystem server and from the real binary, over raw
// stdio, and requires the same bytes on the wire for the text content and
// the structured content: small texts, large ones (which take Zero's
// splicing shortcut), and file names in listings.
func TestTextMatchesReferenceBytes(t *testing.T) {
	ref, _ := filepath.Abs("../../node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, err := os.Stat(ref); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the reference server is missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
	dir := workDir(t)
	text := "a <b> & c </script>&amp; \"quoted\" back\\slash \\u003c\n\ttab \x01\x1f é 😀\r\n"
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "large.txt"), []byte(strings.Repeat(text, 1000)), 0o644)
	os.Mkdir(filepath.Join(dir, "names"), 0o755)
	os.WriteFile(filepath.Join(dir, "names", `a<b>&"c".txt`), nil, 0o644)
	calls := []string{
		`{"name":"read_text_file","arguments":{"path":"` + filepath.Join(dir, "small.txt") + `"}}`,
		`{"name":"read_text_file","arguments":{"path":"` + filepath.Join(dir, "large.txt") + `"}}`,
		`{"name":"read_multiple_files","arguments":{"paths":["` + filepath.Join(dir, "small.txt") + `"]}}`,
		`{"name":"list_directory","arguments":{"path":"` + filepath.Join(dir, "names") + `"}}`,
		`{"name":"directory_tree","arguments":{"path":"` + filepath.Join(dir, "names") + `"}}`,
		`{"name":"search_files","arguments":{"path":"` + filepath.Join(dir, "names") + `","pattern":"*.txt"}}`,
	}
	zero := rawReplies(t, exec.Command(zeroBinary(t), "mcp", "filesystem", dir), calls)
	reference := rawReplies(t, exec.Command("node", ref, dir), calls)
	for i := range calls {
		z, r := textValues(t, zero[i]), textValues(t, reference[i])
		if z != r {
			t.Errorf("call %d, %s: the text's bytes differ:\nzero      %.400s\nreference %.400s", i, calls[i], z, r)
		}
		if !strings.Contains(z, "<") || strings.Contains(z, `\u003c`) && !strings.Contains(z, `\\u003c`) {
			t.Errorf("call %d: %.200s", i, z)
		}
	}
}

// rawReplies sends initialize and each tools/call to the server cmd starts,
// and returns the lines it answers the calls with.
func rawReplies(t *testing.T, cmd *exec.Cmd, calls []string) []string {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	read := func() string {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", cmd.Path, err)
		}
		return line
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	read()
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	var out []string
	for i, c := range calls {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", i+1, c)
		out = append(out, read())
	}
	return out
}

// textValues returns the raw bytes, as written, of a reply's text content
// and of its structured content's text.
func textValues(t *testing.T, line string) string {
	t.Helper()
	var reply struct {
		Result struct {
			Content []struct {
				Text json.RawMessage `json:"text"`
			} `json:"content"`
			StructuredContent struct {
				Content json.RawMessage `json:"content"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &reply); err != nil || len(reply.Result.Content) != 1 {
		t.Fatalf("reply %.300s: %v", line, err)
	}
	return string(reply.Result.Content[0].Text) + " " + string(reply.Result.StructuredContent.Content)
}

// TestMaxReplyBounds checks that every server takes --max-reply, and
// refuses, before serving, a budget under 4096 bytes or over the default.
func TestMaxReplyBounds(t *testing.T) {
	dir := workDir(t)
	for _, server := range [][]string{{"filesystem", dir}, {"fetch"}, {"memory", "--memory-file", filepath.Join(dir, "m.jsonl")}, {"shell", dir}, {"skills", "--workspace", dir}} {
		for _, value := range []string{"4095", "8388609", "lots"} {
			cmd := exec.Command(zeroBinary(t), append([]string{"mcp", server[0], "--max-reply", value}, server[1:]...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "-max-reply") {
				t.Errorf("%s --max-reply %s: exit %d (%v), stdout %q, stderr %q", server[0], value, code, err, stdout.String(), stderr.String())
			}
		}
		cmd := exec.Command(zeroBinary(t), append([]string{"mcp", server[0], "--max-reply", "4096"}, server[1:]...)...)
		cmd.Stdin = strings.NewReader("")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s --max-reply 4096: %v %s", server[0], err, out)
		}
	}
}
