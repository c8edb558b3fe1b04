package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver"
)

// The tools are the anchor's: spawn_agent, send_input and wait_agent, the
// names Codex uses for its own sub-agents. Each input schema matches the
// struct its handler decodes into (a test checks that they agree).

type spawnArgs struct {
	Name string `json:"name"`
	Task string `json:"task"`
}

func (a *spawnArgs) Validate() error {
	switch {
	case a.Name == "":
		return errors.New("name is required")
	case a.Task == "":
		return errors.New("task is required")
	}
	return nil
}

type sendArgs struct {
	Target    string `json:"target"`
	Message   string `json:"message"`
	Interrupt bool   `json:"interrupt"`
}

func (a *sendArgs) Validate() error {
	switch {
	case a.Target == "":
		return errors.New("target is required")
	case a.Message == "":
		return errors.New("message is required")
	}
	return nil
}

type waitArgs struct {
	Targets   []string `json:"targets"`
	TimeoutMS *int64   `json:"timeout_ms"`
}

func (a *waitArgs) Validate() error {
	switch {
	case len(a.Targets) == 0 || len(a.Targets) > MaxTargets:
		return fmt.Errorf("targets must hold 1 to %d agent ids, not %d", MaxTargets, len(a.Targets))
	case a.TimeoutMS != nil && (*a.TimeoutMS < 0 || *a.TimeoutMS > MaxWait.Milliseconds()):
		return fmt.Errorf("timeout_ms must be between 0 and %d", MaxWait.Milliseconds())
	}
	for i, t := range a.Targets {
		if slices.Contains(a.Targets[:i], t) {
			return fmt.Errorf("targets[%d] repeats %q", i, clip(t, 80))
		}
	}
	return nil
}

const (
	stateSchema = `{"type":"object","properties":{"agent_id":{"type":"string"},"name":{"type":"string"},` +
		`"status":{"type":"string","enum":["running","completed","failed"]},"result":{"type":"string"},"error":{"type":"string"},` +
		`"queued":{"type":"integer","minimum":0}},"required":["agent_id","name","status"],"additionalProperties":false}`
	sendSchema = `{"type":"object","properties":{` +
		`"target":{"type":"string","minLength":1,"description":"The agent_id spawn_agent returned."},` +
		`"message":{"type":"string","minLength":1,"description":"The input for the agent, sent as the user's next message."},` +
		`"interrupt":{"type":"boolean","default":false,"description":"Cancel what the agent is doing first, and send this message before any other waiting."}},` +
		`"required":["target","message"],"additionalProperties":false}`
	waitSchema = `{"type":"object","properties":{` +
		`"targets":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":64,"uniqueItems":true,"description":"The agent_ids to wait for."},` +
		`"timeout_ms":{"type":"integer","minimum":0,"maximum":300000,"default":30000,"description":"How long to wait, in milliseconds, for every target to finish."}},` +
		`"required":["targets"],"additionalProperties":false}`
	waitOutputSchema = `{"type":"object","properties":{"agents":{"type":"array","items":` + stateSchema + `},` +
		`"timed_out":{"type":"boolean"}},"required":["agents","timed_out"],"additionalProperties":false}`
)

// spawnSchema is spawn_agent's input schema, naming the agents.
func spawnSchema(names []string) json.RawMessage {
	name := `"name":{"type":"string","description":"No agent is defined in this workspace."}`
	if len(names) > 0 {
		enum, _ := json.Marshal(names)
		name = `"name":{"type":"string","enum":` + string(enum) + `,"description":"The agent to run."}`
	}
	return json.RawMessage(`{"type":"object","properties":{` + name + `,` +
		`"task":{"type":"string","minLength":1,"description":"What the agent is asked to do: its first user message."}},` +
		`"required":["name","task"],"additionalProperties":false}`)
}

func annotations(title string, readOnly bool) *mcp.ToolAnnotations {
	t, f := true, false
	a := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &t, OpenWorldHint: &t}
	if readOnly {
		a.DestructiveHint, a.OpenWorldHint = &f, &f
	}
	return a
}

func (s *Server) spawnTool(names []string) *mcp.Tool {
	return &mcp.Tool{Name: "spawn_agent", Title: "Spawn Agent",
		Description: "Start an agent of this workspace on a task. It returns the agent_id at once, with status running: " +
			"the agent's tools and its model requests start in the background, and their failures show in wait_agent. " +
			fmt.Sprintf("At most %d agents run at once (capacity_exceeded beyond).", MaxRuns),
		InputSchema: spawnSchema(names), OutputSchema: json.RawMessage(stateSchema),
		Annotations: annotations("Spawn Agent", false)}
}

func (s *Server) addTools(names []string) {
	s.names = names
	addTool(s.mcp, s.spawnTool(names), s.spawnAgent)
	addTool(s.mcp, &mcp.Tool{Name: "send_input", Title: "Send Input",
		Description: fmt.Sprintf("Send an agent more input. A running agent answers it after what it is doing (at most %d wait; "+
			"queue_full beyond), or at once with interrupt, which cancels what it is doing; a finished agent goes on "+
			"with its whole conversation so far.", MaxQueued),
		InputSchema: json.RawMessage(sendSchema), OutputSchema: json.RawMessage(stateSchema),
		Annotations: annotations("Send Input", false)}, s.sendInputTool)
	addTool(s.mcp, &mcp.Tool{Name: "wait_agent", Title: "Wait for Agents",
		Description: "Wait until every target agent has finished, or timeout_ms passes (default 30000, at most 300000), " +
			"and return each one's status (running, completed or failed) with its result or error; timed_out says " +
			"whether the wait ended before they all finished. Progress notifications tell each agent's phase.",
		InputSchema: json.RawMessage(waitSchema), OutputSchema: json.RawMessage(waitOutputSchema),
		Annotations: annotations("Wait for Agents", true)}, s.waitAgent)
}

// refreshNames registers spawn_agent again when the catalog's names
// changed, which tells clients the tool list changed.
func (s *Server) refreshNames(names []string) {
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	if slices.Equal(s.names, names) {
		return
	}
	s.names = names
	addTool(s.mcp, s.spawnTool(names), s.spawnAgent)
}

// addTool registers a tool whose arguments decode strictly into In and pass
// its Validate; a refusal is an invalid_arguments tool error.
func addTool[In any, PIn interface {
	*In
	Validate() error
}](srv *mcp.Server, t *mcp.Tool, h func(ctx context.Context, req *mcp.CallToolRequest, in *In) (any, error)) {
	srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		err := mcpserver.DecodeArgs(req.Params.Arguments, &in)
		if err == nil {
			err = PIn(&in).Validate()
		}
		if err != nil {
			return mcpserver.ErrorResult(errorf(CodeInvalid, "%s: %v", t.Name, err)), nil
		}
		out, err := h(ctx, req, &in)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return mcpserver.ErrorResult(err), nil
		}
		text, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: out}, nil
	})
}

func (s *Server) spawnAgent(_ context.Context, _ *mcp.CallToolRequest, in *spawnArgs) (any, error) {
	st, err := s.spawn(in.Name, in.Task)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Server) sendInputTool(_ context.Context, _ *mcp.CallToolRequest, in *sendArgs) (any, error) {
	st, err := s.sendInput(in.Target, in.Message, in.Interrupt)
	if err != nil {
		return nil, err
	}
	return st, nil
}

type waitResult struct {
	Agents   []state `json:"agents"`
	TimedOut bool    `json:"timed_out"`
}

// waitAgent waits until no target runs, the timeout passes or the client
// cancels; a cancel leaves the sessions running. It sends a progress
// notification, when the client asked for them, for each change of a
// target's phase: never a prompt, model text or a tool's arguments.
func (s *Server) waitAgent(ctx context.Context, req *mcp.CallToolRequest, in *waitArgs) (any, error) {
	timeout := DefaultWait
	if in.TimeoutMS != nil {
		timeout = time.Duration(*in.TimeoutMS) * time.Millisecond
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	token := req.Params.GetProgressToken()
	states := make([]state, len(in.Targets))
	seen := make([]uint64, len(in.Targets))
	s.mu.Lock()
	for i, id := range in.Targets {
		ss, err := s.lookupLocked(id)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.touchLocked(ss)
		seen[i] = ss.seq - 1 // the phase it is in now is told first
	}
	s.mu.Unlock()
	var progress float64
	for {
		var notes []*mcp.ProgressNotificationParams
		s.mu.Lock()
		running := false
		for i, id := range in.Targets {
			if ss, ok := s.sessions[id]; ok { // an evicted one keeps its last state
				states[i] = ss.stateLocked()
				for _, e := range ss.events {
					if e.seq > seen[i] && token != nil {
						progress++
						notes = append(notes, ss.progress(e, token, progress))
					}
				}
				seen[i] = ss.seq
			}
			running = running || states[i].Status == StatusRunning
		}
		changed := s.changed
		s.mu.Unlock()
		for _, n := range notes {
			req.Session.NotifyProgress(ctx, n) // a client that left is seen below
		}
		if !running {
			return waitResult{states, false}, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return waitResult{states, true}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// progress is the notification of e, a change of s's phase. It names the
// phase, the tool being run (one the toolbox offers), the turn and the time
// since the run started, and nothing the model or the client wrote.
func (s *session) progress(e event, token any, progress float64) *mcp.ProgressNotificationParams {
	elapsed := e.elapsed.Milliseconds()
	summary := fmt.Sprintf("agent %s (%s): %s", s.id, s.agent.Name, e.phase)
	switch {
	case e.phase == "tool":
		summary += fmt.Sprintf(" %s, turn %d", e.tool, e.turn)
	case e.phase == "model":
		summary += fmt.Sprintf(", turn %d", e.turn)
	}
	summary += fmt.Sprintf(", %d ms", elapsed)
	meta := mcp.Meta{"target": s.id, "name": s.agent.Name, "phase": e.phase, "summary": summary, "elapsed_ms": elapsed}
	if e.tool != "" {
		meta["tool"] = e.tool
	}
	if e.turn > 0 {
		meta["turn"] = e.turn
	}
	return &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: summary, Meta: meta}
}
