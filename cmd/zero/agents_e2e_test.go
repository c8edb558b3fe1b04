package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/runtime/runtimetest"
)

// The agents end-to-end tests: the TypeScript SDK's client (node/tsagents.mjs)
// spawns the real `zero mcp agents` over stdio on a workspace whose
// definitions point at scripted providers (modeltest) of each wire API and
// start real child MCP servers (the runtime's test toolserver, zero mcp
// filesystem, sleep).

const agentKeyVar = "ZERO_E2E_AGENT_KEY"

// requireNode skips the test where the TypeScript SDK is not installed,
// unless ZERO_REQUIRE_NODE is set: then it fails.
func requireNode(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("../../node/node_modules/@modelcontextprotocol/sdk"); err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") != "" {
			t.Fatalf("ZERO_REQUIRE_NODE is set but the npm packages are missing: %v", err)
		}
		t.Skip("npm packages not installed; run: npm ci --prefix node")
	}
}

// ownToolserver copies the test toolserver into a directory of this test,
// so that /proc names its processes by a path no other test runs.
func ownToolserver(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(runtimetest.Toolserver(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "toolserver")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeAgents writes each definition into DIR/.agents/agents/NAME.toml.
func writeAgents(t *testing.T, dir string, defs map[string]string) {
	t.Helper()
	place := filepath.Join(dir, ".agents", "agents")
	if err := os.MkdirAll(place, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, def := range defs {
		if err := os.WriteFile(filepath.Join(place, name+".toml"), []byte(def), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// agentDef is a definition of a custom provider at ms, its key in
// agentKeyVar, with one stdio child "t" running command with args, whose
// tools the selectors name.
func agentDef(name string, ms *modeltest.Server, maxTurns int, command string, args, tools []string) string {
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if args == nil {
		args = []string{}
	}
	return fmt.Sprintf(`name = %s
description = "An agent of the end-to-end test"
model_provider = "custom"
base_url = %s
env_key = %q
wire_api = %q
model = "scripted-1"
max_turns = %d
tools = %s
instructions = "You help the end-to-end test."

[mcp_servers.t]
command = %s
args = %s
`, q(name), q(ms.BaseURL()), agentKeyVar, ms.WireAPI(), maxTurns, q(tools), q(command), q(args))
}

// script answers as the test's agents expect: a task "loop" asks for calls
// forever; an input "hang" is never answered (hung is told); the task asks
// for calls; tool results are answered with their text; any later input
// with what it said and how long the conversation is.
func script(calls func(n int) []model.ToolCall, hung chan<- string) func(model.Request) modeltest.Reply {
	return func(req model.Request) modeltest.Reply {
		n := len(req.Messages)
		last := req.Messages[n-1]
		var task string
		users := 0
		for _, m := range req.Messages {
			if m.Role == model.RoleUser {
				if users == 0 {
					task = m.Content
				}
				users++
			}
		}
		switch {
		case task == "loop":
			return modeltest.Reply{Calls: calls(n)}
		case last.Role == model.RoleUser && last.Content == "hang":
			hung <- last.Content
			return modeltest.Reply{Wait: make(chan struct{})} // until the request ends
		case last.Role == model.RoleTool:
			var said []string
			for i := n - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
				said = append([]string{req.Messages[i].Content}, said...)
			}
			return modeltest.Reply{Text: "the tools said: " + strings.Join(said, "\n")}
		case users == 1:
			return modeltest.Reply{Calls: calls(n)}
		}
		return modeltest.Reply{Text: fmt.Sprintf("you said %q after %d messages", last.Content, n)}
	}
}

// tsAgents is node/tsagents.mjs running `zero mcp agents` on a workspace.
type tsAgents struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

type tsCall struct {
	Result struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Progress []json.RawMessage `json:"progress"`
	raw      string
}

func (c tsCall) text() string {
	var b strings.Builder
	for _, p := range c.Result.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}

type agentState struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Result  string `json:"result"`
	Error   string `json:"error"`
}

func startTSAgents(t *testing.T, dir string, env ...string) *tsAgents {
	t.Helper()
	requireNode(t)
	script, _ := filepath.Abs("../../node/tsagents.mjs")
	zero := zeroBinary(t)
	cmd := exec.Command("node", script, zero, dir)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(zero)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 16<<20)
	return &tsAgents{cmd: cmd, in: in, out: lines}
}

// do sends one request and decodes its answer into v; raw is the answer.
func (c *tsAgents) do(t *testing.T, req map[string]any, v any) (raw string) {
	t.Helper()
	b, _ := json.Marshal(req)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	if !c.out.Scan() {
		t.Fatalf("tsagents.mjs ended without answering %s: %v", b, c.out.Err())
	}
	raw = c.out.Text()
	var ok struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &ok); err != nil || !ok.OK {
		t.Fatalf("tsagents.mjs on %s: %s", b, raw)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatal(err)
	}
	return raw
}

func (c *tsAgents) call(t *testing.T, name string, args map[string]any) tsCall {
	t.Helper()
	var r tsCall
	r.raw = c.do(t, map[string]any{"op": "call", "name": name, "arguments": args}, &r)
	return r
}

func (c *tsAgents) pid(t *testing.T) string {
	t.Helper()
	var r struct{ PID int }
	c.do(t, map[string]any{"op": "pid"}, &r)
	return fmt.Sprint(r.PID)
}

// spawn starts agent name on task and returns its id.
func (c *tsAgents) spawn(t *testing.T, name, task string) string {
	t.Helper()
	r := c.call(t, "spawn_agent", map[string]any{"name": name, "task": task})
	var st agentState
	if r.Result.IsError || json.Unmarshal(r.Result.StructuredContent, &st) != nil || st.Status != "running" || st.Name != name {
		t.Fatalf("spawn_agent %s: %s", name, r.raw)
	}
	return st.AgentID
}

// wait waits for id to finish and returns its state and the call.
func (c *tsAgents) wait(t *testing.T, id string) (agentState, tsCall) {
	t.Helper()
	r := c.call(t, "wait_agent", map[string]any{"targets": []string{id}, "timeout_ms": 60000})
	var w struct {
		Agents   []agentState `json:"agents"`
		TimedOut bool         `json:"timed_out"`
	}
	if r.Result.IsError || json.Unmarshal(r.Result.StructuredContent, &w) != nil || w.TimedOut || len(w.Agents) != 1 {
		t.Fatalf("wait_agent %s: %s", id, r.raw)
	}
	return w.Agents[0], r
}

// close closes the client and returns how zero exited and its stderr.
func (c *tsAgents) close(t *testing.T) (code any, signal any, stderr string) {
	t.Helper()
	var r struct {
		Exit struct {
			Code   any `json:"code"`
			Signal any `json:"signal"`
		} `json:"exit"`
		Stderr string `json:"stderr"`
	}
	c.do(t, map[string]any{"op": "close"}, &r)
	return r.Exit.Code, r.Exit.Signal, r.Stderr
}

// hungWithin receives n inputs from hung, or fails after a minute.
func hungWithin(t *testing.T, hung <-chan string, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for range n {
		select {
		case <-hung:
		case <-timeout:
			t.Fatalf("fewer than %d runs reached the provider", n)
		}
	}
}

// TestAgentsTypeScriptClient: under the TypeScript SDK's client, the real
// zero mcp agents runs one agent per wire API (chat completions, Responses,
// Anthropic Messages), each of whose scripted provider calls two tools of
// a real stdio child and answers with what they returned, which reached
// the provider wrapped as untrusted data; send_input continues a finished
// session with its whole history; the anchor's OpenRouter definition, its
// URL pointed at the local server, runs unchanged with zero mcp
// filesystem as its child. The key env_key names reaches each provider in
// its header and nowhere else: not in an answer, a progress notification,
// zero's stderr or a child's environment. Closing the client ends zero
// and leaves no child.
func TestAgentsTypeScriptClient(t *testing.T) {
	requireNode(t)
	t.Parallel()
	const canary, orCanary = "sk-canary-5f0c1e2d9a", "sk-or-canary-77b3e1"
	toolserver := ownToolserver(t)
	dir := workDir(t)
	defs := map[string]string{}
	servers := map[string]*modeltest.Server{}
	for name, ms := range map[string]*modeltest.Server{"chat": modeltest.New(t), "responses": modeltest.NewResponses(t), "anthropic": modeltest.NewAnthropic(t)} {
		ms.Respond = script(func(n int) []model.ToolCall {
			return []model.ToolCall{
				modeltest.Call(fmt.Sprintf("c%d-1", n), "t__echo", `{"word":"from-`+name+`"}`),
				modeltest.Call(fmt.Sprintf("c%d-2", n), "t__env", `{"name":"`+agentKeyVar+`"}`),
			}
		}, nil)
		servers[name] = ms
		defs[name] = agentDef(name, ms, 4, toolserver, []string{"--env"}, []string{"t/echo", "t/env"})
	}
	// The anchor's example as written, but for its URL.
	or := modeltest.New(t)
	or.Respond = script(func(n int) []model.ToolCall {
		return []model.ToolCall{modeltest.Call(fmt.Sprintf("c%d", n), "files__read_text_file", `{"path":"note.txt"}`)}
	}, nil)
	example, err := os.ReadFile("../../internal/mcpserver/agents/definitions/testdata/openrouter.toml")
	if err != nil {
		t.Fatal(err)
	}
	defs["researcher"] = strings.Replace(string(example), `"https://openrouter.ai/api/v1"`, `"`+or.BaseURL()+`"`, 1)
	if defs["researcher"] == string(example) {
		t.Fatal("the OpenRouter example's base_url moved")
	}
	writeAgents(t, dir, defs)
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("the note of the workspace\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	c := startTSAgents(t, dir, agentKeyVar+"="+canary, "OPENROUTER_API_KEY="+orCanary, "CANARY="+canary)
	var seen []string // every answer and notification the client got
	ids := map[string]string{}
	for _, name := range []string{"anthropic", "chat", "researcher", "responses"} {
		ids[name] = c.spawn(t, name, "use your tools, "+name)
	}
	for _, name := range []string{"chat", "responses", "anthropic"} {
		st, r := c.wait(t, ids[name])
		seen = append(seen, r.raw)
		want := []string{`server="t" tool="echo">` + "\n" + `{"word":"from-` + name + `"}`, agentKeyVar + ": set false, 0 bytes"}
		if st.Status != "completed" || !strings.HasPrefix(st.Result, "the tools said: <tool_output nonce=") ||
			!strings.Contains(st.Result, want[0]) || !strings.Contains(st.Result, want[1]) {
			t.Errorf("%s: %+v, want completed with the tools' wrapped output %q", name, st, want)
		}
		if n := len(r.Progress); n == 0 || !strings.Contains(string(r.Progress[n-1]), `"phase":"completed"`) {
			t.Errorf("%s: wait_agent's progress notifications do not end with its completion: %s", name, r.Progress)
		}
		for _, p := range r.Progress {
			if strings.Contains(string(p), "use your tools") || strings.Contains(string(p), "from-"+name) {
				t.Errorf("%s: a progress notification holds the task or a tool's arguments: %s", name, p)
			}
		}
		ms := servers[name]
		if refused := ms.Refused(); len(refused) > 0 {
			t.Errorf("%s: the provider refused: %v", name, refused)
		}
		header, key := "Authorization", "Bearer "+canary
		if name == "anthropic" {
			header, key = "X-Api-Key", canary
		}
		for i, h := range ms.Headers() {
			if got := h.Get(header); got != key {
				t.Errorf("%s: request %d's %s is %q, want %q", name, i, header, got, key)
			}
		}
	}

	// The anchor's definition read the workspace's note through its child.
	st, r := c.wait(t, ids["researcher"])
	seen = append(seen, r.raw)
	if st.Status != "completed" || !strings.Contains(st.Result, `server="files" tool="read_text_file">`+"\nthe note of the workspace\n") {
		t.Errorf("researcher: %+v", st)
	}
	if hs := or.Headers(); len(hs) != 2 || hs[0].Get("Authorization") != "Bearer "+orCanary {
		t.Errorf("researcher: %d requests, the first with Authorization %q", len(hs), hs[0].Get("Authorization"))
	}

	// send_input continues the finished chat session with its history.
	r = c.call(t, "send_input", map[string]any{"target": ids["chat"], "message": "and once more"})
	seen = append(seen, r.raw)
	if r.Result.IsError {
		t.Fatalf("send_input: %s", r.raw)
	}
	st, r = c.wait(t, ids["chat"])
	seen = append(seen, r.raw)
	// system, task, the calls, two results, the answer, the input.
	if want := `you said "and once more" after 7 messages`; st.Status != "completed" || st.Result != want {
		t.Errorf("continued: %+v, want %q", st, want)
	}
	reqs := servers["chat"].Requests()
	if last := reqs[len(reqs)-1].Messages; len(last) != 7 || last[1].Content != "use your tools, chat" ||
		len(last[2].ToolCalls) != 2 || !strings.Contains(last[3].Content, `{"word":"from-chat"}`) ||
		!strings.HasPrefix(last[5].Content, "the tools said: ") {
		t.Errorf("the continued request's history: %+v", last)
	}

	code, signal, stderr := c.close(t)
	seen = append(seen, stderr)
	if code != float64(0) || signal != nil {
		t.Errorf("zero exited with %v, signal %v; stderr: %s", code, signal, stderr)
	}
	for _, s := range seen {
		if strings.Contains(s, canary) || strings.Contains(s, orCanary) {
			t.Errorf("the key reached the client or stderr: %s", s)
		}
	}
	if left := runningProgram(t, toolserver); left != nil {
		t.Errorf("toolserver processes left after zero ended: %v", left)
	}
}

// TestAgentsTypeScriptLimits: through the real binary, a model that never
// stops answering with tool calls ends at max_turns; a child that never
// speaks MCP fails its run, through wait_agent, with an error naming it;
// the ninth run at once gets capacity_exceeded; send_input with interrupt
// stops a hanging run, which answers the new input and closes its child;
// and closing the client ends zero and every child of the runs still
// hanging, and each child's own child.
func TestAgentsTypeScriptLimits(t *testing.T) {
	requireNode(t)
	t.Parallel()
	toolserver := ownToolserver(t)
	dir := workDir(t)
	hung := make(chan string, 16)
	ms := modeltest.New(t)
	ms.Respond = script(func(n int) []model.ToolCall {
		return []model.ToolCall{modeltest.Call(fmt.Sprintf("c%d", n), "t__echo", `{}`)}
	}, hung)
	writeAgents(t, dir, map[string]string{
		"looper": agentDef("looper", ms, 3, toolserver, nil, []string{"t/echo"}),
		// The toolserver, with a grandchild that outlives it unless its
		// process group is ended.
		"hanger": agentDef("hanger", ms, 3, "sh", []string{"-c", `sleep 1000 </dev/null >/dev/null 2>&1 & exec "$0"`, toolserver}, []string{"t/echo"}),
		"mute":   agentDef("mute", ms, 3, "sleep", []string{"100"}, []string{"t/echo"}),
	})
	c := startTSAgents(t, dir, agentKeyVar+"=sk-limits")
	zero := c.pid(t)

	st, _ := c.wait(t, c.spawn(t, "looper", "loop"))
	if st.Status != "failed" || !strings.HasPrefix(st.Error, "max_turns: ") || len(ms.Requests()) != 3 {
		t.Errorf("looper: %+v after %d requests, want failed with max_turns after 3", st, len(ms.Requests()))
	}

	mute := c.spawn(t, "mute", "say something")
	var hangers []string
	for range 7 {
		hangers = append(hangers, c.spawn(t, "hanger", "hang"))
	}
	hungWithin(t, hung, 7)
	if left := runningProgram(t, toolserver); len(left) != 7 {
		t.Errorf("%d toolservers run for 7 hanging runs: %v", len(left), left)
	}
	r := c.call(t, "spawn_agent", map[string]any{"name": "hanger", "task": "hang"})
	if !r.Result.IsError || !strings.HasPrefix(r.text(), "capacity_exceeded: ") {
		t.Errorf("the ninth run: %s", r.raw)
	}

	r = c.call(t, "send_input", map[string]any{"target": hangers[0], "message": "stop now", "interrupt": true})
	if r.Result.IsError {
		t.Fatalf("send_input interrupt: %s", r.raw)
	}
	st, _ = c.wait(t, hangers[0])
	// system, the hanging input, the one that interrupted it.
	if want := `you said "stop now" after 3 messages`; st.Status != "completed" || st.Result != want {
		t.Errorf("interrupted: %+v, want %q", st, want)
	}
	if left := runningProgram(t, toolserver); len(left) != 6 {
		t.Errorf("%d toolservers run after one of 7 runs was interrupted and finished: %v", len(left), left)
	}

	st, _ = c.wait(t, mute)
	if st.Status != "failed" || !strings.HasPrefix(st.Error, "tools_error: ") || !strings.Contains(st.Error, `child "t"`) ||
		!strings.Contains(st.Error, "did not start within 15s") {
		t.Errorf("mute: %+v, want failed naming its child and the start timeout", st)
	}

	running := descendants(t, zero)
	if len(running) != 12 {
		t.Errorf("zero runs %d processes for 6 hanging runs, each a toolserver and a sleep: %v", len(running), running)
	}
	code, signal, stderr := c.close(t)
	if code != float64(0) || signal != nil {
		t.Errorf("zero exited with %v, signal %v; stderr: %s", code, signal, stderr)
	}
	if _, err := os.Stat("/proc/" + zero); err == nil {
		t.Errorf("zero (%s) still runs after the client closed", zero)
	}
	for _, pid := range append(running, runningProgram(t, toolserver)...) {
		if exe, err := os.Readlink("/proc/" + pid + "/exe"); err == nil {
			t.Errorf("process %s (%s) of a hanging run outlived zero", pid, exe)
			if n, err := strconv.Atoi(pid); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
	}
}
