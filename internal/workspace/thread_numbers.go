package workspace

import (
	"encoding/json"

	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// threadNumbers are the numbers a thread's page shows, each counted from 1
// within the thread (event seqs and run ids are not: a thread's events
// include some the page does not show, and run ids are the workspace's).
// Messages are numbered in order, but for the system prompt; runs in the
// order the thread's events first name them. thread.js goes on counting
// from Messages and Runs.
type threadNumbers struct {
	message   map[int64]int // by event seq
	run       map[int64]int // by run id
	Messages  int           // the messages numbered
	Runs      int           // the runs numbered
	LastRunID int64         // the last run numbered, 0 for none
}

// numberThread numbers the messages and runs of a thread's events, all of
// them from the first.
func numberThread(events []threads.Event) threadNumbers {
	n := threadNumbers{message: map[int64]int{}, run: map[int64]int{}}
	for _, e := range events {
		var b struct {
			Role string `json:"role"`
			Run  int64  `json:"run"`
		}
		json.Unmarshal(e.Body, &b) // a body that does not parse is shown as a message of its own, and numbered
		switch e.Kind {
		case threads.KindMessage:
			if b.Role != model.RoleSystem {
				n.Messages++
				n.message[e.Seq] = n.Messages
			}
		case threads.KindRun, threads.KindApproval:
			if _, ok := n.run[b.Run]; b.Run != 0 && !ok {
				n.Runs++
				n.run[b.Run], n.LastRunID = n.Runs, b.Run
			}
		}
	}
	return n
}

// number sets the number each item shows: a message's, or its run's for a
// run's end.
func (n threadNumbers) number(items []threadItem) {
	for i := range items {
		switch it := &items[i]; {
		case it.Run != nil:
			it.N = n.run[it.Run.ID]
		default:
			it.N = n.message[it.Seq]
		}
	}
}
