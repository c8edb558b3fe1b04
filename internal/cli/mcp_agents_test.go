package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver/agents"
	"github.com/zero-dev/zero/internal/mcpserver/agents/children"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
)

// TestMCPAgentsServes: with a setup, the command serves the agents over
// stdio for the workspace --workspace names, reads env_key through its
// getenv, and ends when the client closes stdin.
func TestMCPAgentsServes(t *testing.T) {
	m := modeltest.New(t)
	m.Push(modeltest.Reply{Text: "hello from the agent"})
	dir := t.TempDir()
	var gotWorkspace string
	setup := func(ws *fsroot.Set, getenv func(string) string, _ io.Writer) (agents.Options, error) {
		gotWorkspace = ws.Roots()[0].Given
		return agents.Options{Catalog: func() ([]agents.Agent, error) {
			return []agents.Agent{{Name: "greeter", Model: model.Config{BaseURL: m.BaseURL(), Model: "scripted-1", APIKey: getenv("ZERO_TEST_AGENT_KEY")}}}, nil
		}}, nil
	}
	cmd := agentsCommand(setup)
	if err := cmd.Flag.Parse([]string{"--workspace", dir}); err != nil {
		t.Fatal(err)
	}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- cmd.Run(context.Background(), Stdio{In: serverIn, Out: serverOut, Err: &stderr}, cmd.Flag.Args())
		serverOut.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := mcptest.Call(t, cs, "spawn_agent", map[string]any{"name": "greeter", "task": "hi"})
	var st struct {
		AgentID string `json:"agent_id"`
	}
	if isErr || json.Unmarshal([]byte(text), &st) != nil {
		t.Fatalf("spawn_agent: %s", text)
	}
	text, isErr = mcptest.Call(t, cs, "wait_agent", map[string]any{"targets": []string{st.AgentID}})
	if isErr || !strings.Contains(text, `"result":"hello from the agent"`) {
		t.Fatalf("wait_agent: %s", text)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v (stderr %s)", err, stderr.String())
	}
	if gotWorkspace != dir {
		t.Fatalf("workspace %q, want %q", gotWorkspace, dir)
	}
}

// TestMCPAgentsRefusesAsAChild: an agents server started as an agent's
// child server (children.AgentChildEnv set) refuses to run: agents cannot
// spawn agents through their children.
func TestMCPAgentsRefusesAsAChild(t *testing.T) {
	t.Setenv(children.AgentChildEnv, "1")
	cmd := mcpAgentsCommand()
	if err := cmd.Flag.Parse([]string{"--workspace", t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := cmd.Run(context.Background(), Stdio{In: io.NopCloser(strings.NewReader("")), Out: io.Discard, Err: &stderr}, cmd.Flag.Args())
	if err == nil || !strings.Contains(err.Error(), "agents cannot spawn agents") {
		t.Fatalf("run as a child: %v", err)
	}
}
