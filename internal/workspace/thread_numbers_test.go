package workspace

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/workspace/threads"
)

// TestNumberThread: a thread's messages are numbered 1, 2, 3 in order, the
// system prompt aside, whatever events the page does not show lie between
// them; its runs 1, 2 in the order its events name them, whatever their
// ids in the workspace.
func TestNumberThread(t *testing.T) {
	var events []threads.Event
	add := func(kind string, body any) {
		data, _ := json.Marshal(body)
		events = append(events, threads.Event{Seq: int64(len(events) + 1), Kind: kind, Body: data})
	}
	msg := func(role string) map[string]string { return map[string]string{"role": role, "content": "x"} }
	add(threads.KindMessage, msg("system"))                                       // 1
	add(threads.KindMessage, msg("user"))                                         // 2: #1
	add(threads.KindRun, map[string]any{"run": 17, "status": "waiting_approval"}) // 3
	add(threads.KindApproval, map[string]any{"approval": 4, "run": 17})           // 4
	add(threads.KindApproval, map[string]any{"approval": 4, "run": 17})           // 5
	add(threads.KindMessage, msg("tool"))                                         // 6: #2
	add(threads.KindMessage, msg("assistant"))                                    // 7: #3
	add("usage", map[string]any{"prompt_tokens": 1})                              // 8
	add(threads.KindRun, map[string]any{"run": 17, "status": "completed"})        // 9: run 1
	add(threads.KindMessage, msg("user"))                                         // 10: #4
	add(threads.KindMessage, "not a message")                                     // 11: #5
	add(threads.KindRun, map[string]any{"run": 18, "status": "failed"})           // 12: run 2

	n := numberThread(events)
	if n.Messages != 5 || n.Runs != 2 || n.LastRunID != 18 {
		t.Errorf("counts: %d messages, %d runs, the last run %d", n.Messages, n.Runs, n.LastRunID)
	}
	items := threadItems(events)
	n.number(items)
	var got []int
	for _, it := range items {
		if it.Role != "system" && (it.Kind == "message" || it.Kind == "run") {
			got = append(got, it.N)
		}
	}
	if diff := cmp.Diff([]int{1, 2, 3, 1, 4, 5, 2}, got); diff != "" {
		t.Errorf("the numbers shown (-want +got):\n%s", diff)
	}
}
