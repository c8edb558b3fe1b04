package workspace

import (
	"strconv"
	"testing"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/providers"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// TestThreadRunOnEachWire: a thread on a provider of each of OpenAI's
// Responses and Anthropic's Messages wires, streamed and not, calls a
// tool (after the owner's approval) and completes; the scripted server,
// which refuses a history its provider would refuse, took every request.
func TestThreadRunOnEachWire(t *testing.T) {
	for _, wire := range []struct {
		name  string
		start func(testing.TB) *modeltest.Server
	}{{model.WireResponses, modeltest.NewResponses}, {model.WireAnthropic, modeltest.NewAnthropic}} {
		for _, stream := range []bool{true, false} {
			t.Run(wire.name+"/stream="+strconv.FormatBool(stream), func(t *testing.T) {
				ts := start(t, Options{})
				f := threadFixtureWith(ts, stream, wire.start(t))
				var list []providers.Provider
				ts.browser.must("GET", "/api/providers", nil, 200, &list)
				if len(list) != 1 || list[0].WireAPI != wire.name {
					t.Fatalf("providers: %+v", list)
				}
				f.ms.Push(modeltest.Reply{Text: "Let me echo.", Calls: []model.ToolCall{modeltest.Call("call_1", "drifter__echo", `{"x": 1}`)}},
					modeltest.Reply{Text: "It said x is 1."})
				f.run("Echo x=1, please.")
				a := f.pending(0)
				ts.browser.must("POST", "/api/approvals/"+itoa(a.Approval), map[string]string{"answer": "once"}, 200, nil)
				g := f.ended()
				if g.Run.Status != threads.Completed {
					t.Fatalf("run: %+v (refused: %q)", g.Run, f.ms.Refused())
				}
				msgs := messagesOf(g)
				if len(msgs) != 4 || msgs[2].Role != model.RoleTool || msgs[2].ToolCallID != "call_1" || msgs[3].Content != "It said x is 1." {
					t.Fatalf("messages: %+v", msgs)
				}
				reqs := f.ms.Requests()
				if len(reqs) != 2 || len(f.ms.Refused()) != 0 || reqs[1].Messages[len(reqs[1].Messages)-1].ToolCallID != "call_1" {
					t.Fatalf("%d requests, refused %q", len(reqs), f.ms.Refused())
				}
			})
		}
	}
}

// TestProviderWireAPIRefused: the API refuses a wire API it does not
// speak, saying which it does.
func TestProviderWireAPIRefused(t *testing.T) {
	ts := start(t, Options{})
	st, data := ts.browser.do("POST", "/api/providers", map[string]any{"name": "x", "base_url": "http://127.0.0.1:1/v1", "wire_api": "anthropic"})
	if st != 400 || errorCode(data) != "invalid_provider" {
		t.Errorf("answer %d %s, want 400 invalid_provider", st, data)
	}
}
