package agents

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/guard/redact"
	"github.com/zero-dev/zero/internal/model"
)

// Session states.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// A codeError is a tool error or a session's error: a code from the list
// above, then what happened.
type codeError struct{ code, msg string }

func (e *codeError) Error() string { return e.code + ": " + e.msg }

func errorf(code, format string, args ...any) error {
	return &codeError{code, fmt.Sprintf(format, args...)}
}

// A session is one spawned agent: its conversation and its state. The
// server's mutex guards every field but history and size, which only the
// session's one run goroutine touches (runs of a session follow one
// another, ordered by the mutex).
type session struct {
	id       string
	agent    Agent
	redactor *redact.Redactor // the agent's key

	status      string
	result, err string
	queue       []string           // inputs not yet sent
	cancelInput context.CancelFunc // the input being answered; nil between inputs
	used        uint64             // the server's clock at the last use

	// progress, as notifications tell it
	phase, tool string
	turn        int
	started     time.Time // of the run
	seq         uint64    // bumped on every change of the above
	events      []event   // the last maxEvents changes

	history []model.Message // without the system message
	size    int             // historySize(history)
}

// An event is one change of a run's phase.
type event struct {
	seq         uint64
	phase, tool string
	turn        int
	elapsed     time.Duration
}

// maxEvents bounds the changes a session keeps for waiters.
const maxEvents = 64

// noteLocked records a change of s's phase and wakes every waiter;
// srv.mu is held.
func (srv *Server) noteLocked(s *session) {
	s.seq++
	if len(s.events) == maxEvents {
		s.events = append(s.events[:0], s.events[1:]...)
	}
	s.events = append(s.events, event{s.seq, s.phase, s.tool, s.turn, time.Since(s.started)})
	srv.changedLocked()
}

// newID returns a random version 4 UUID.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// A state is what wait_agent reports of one session.
type state struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Result  string `json:"result,omitempty"`
	Error   string `json:"error,omitempty"`
	Queued  int    `json:"queued,omitempty"`
}

// stateLocked returns s's state; s.mu is held.
func (s *session) stateLocked() state {
	return state{AgentID: s.id, Name: s.agent.Name, Status: s.status, Result: s.result, Error: s.err, Queued: len(s.queue)}
}

// changedLocked wakes every waiter; s.mu is held.
func (srv *Server) changedLocked() {
	close(srv.changed)
	srv.changed = make(chan struct{})
}

// touchLocked marks s used now; srv.mu is held.
func (srv *Server) touchLocked(s *session) {
	srv.clock++
	s.used = srv.clock
}

// lookupLocked returns the session id names, or unknown_agent; srv.mu is
// held.
func (srv *Server) lookupLocked(id string) (*session, error) {
	s, ok := srv.sessions[id]
	if !ok {
		return nil, errorf(CodeUnknown, "no session %q: never spawned, or evicted (the %d least recently used finished sessions are kept)", clip(id, 80), MaxRetained)
	}
	return s, nil
}

// startLocked starts a run of s on its queue, counted against MaxRuns;
// srv.mu is held.
func (srv *Server) startLocked(s *session) error {
	switch {
	case srv.closed:
		return errorf(CodeClosed, "the server is closing")
	case srv.running >= MaxRuns:
		return errorf(CodeCapacity, "%d agents are running, the most at once; wait for one to finish (wait_agent) and try again", MaxRuns)
	}
	srv.running++
	s.status, s.result, s.err = StatusRunning, "", ""
	s.started = time.Now()
	s.phase, s.tool, s.turn = "starting", "", 0
	srv.touchLocked(s)
	srv.runs.Add(1)
	go srv.run(s)
	srv.noteLocked(s)
	return nil
}

// spawn starts a session of the catalog's agent name on task.
func (srv *Server) spawn(name, task string) (state, error) {
	list, err := srv.o.Catalog()
	if err != nil {
		return state{}, fmt.Errorf("agents catalog: %w", err)
	}
	srv.refreshNames(names(list))
	var agent *Agent
	for i := range list {
		if list[i].Name == name {
			agent = &list[i]
			break
		}
	}
	if agent == nil {
		return state{}, errorf(CodeUnknown, "no agent named %q; the agents are: %s", clip(name, 80), strings.Join(names(list), ", "))
	}
	if len(task) > MaxHistory {
		return state{}, errorf(CodeContextLimit, "the task is %d bytes, over the %d-byte history budget", len(task), MaxHistory)
	}
	s := &session{
		id:       newID(),
		agent:    *agent,
		redactor: redact.New(map[string]string{"API key": agent.Model.APIKey}),
		queue:    []string{task},
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if err := srv.startLocked(s); err != nil {
		return state{}, err
	}
	srv.sessions[s.id] = s
	return s.stateLocked(), nil
}

// sendInput queues message for session id, starting a run if it is
// finished; interrupt cancels the input being answered first, and message
// goes before the others waiting.
func (srv *Server) sendInput(id, message string, interrupt bool) (state, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s, err := srv.lookupLocked(id)
	if err != nil {
		return state{}, err
	}
	srv.touchLocked(s)
	if len(s.queue) >= MaxQueued {
		return state{}, errorf(CodeQueueFull, "%d inputs are already waiting for session %s; wait for it (wait_agent) first", MaxQueued, s.id)
	}
	if s.status != StatusRunning && s.size+len(message) > MaxHistory {
		// A running session's history is checked as its run goes on.
		return state{}, errorf(CodeContextLimit, "session %s's history (%d bytes) and the message (%d) would pass the %d-byte budget; it is never summarised: spawn a new agent", s.id, s.size, len(message), MaxHistory)
	}
	if interrupt {
		s.queue = append([]string{message}, s.queue...)
		if s.cancelInput != nil {
			s.cancelInput()
		}
	} else {
		s.queue = append(s.queue, message)
	}
	if s.status != StatusRunning {
		if err := srv.startLocked(s); err != nil {
			s.queue = s.queue[:0]
			return state{}, err
		}
	}
	srv.changedLocked()
	return s.stateLocked(), nil
}

// finishLocked ends s's run with its result or error and evicts the least
// recently used finished sessions past MaxRetained; srv.mu is held.
func (srv *Server) finishLocked(s *session, result string, err error) {
	srv.running--
	s.cancelInput = nil
	s.tool = ""
	if err != nil {
		s.status, s.phase = StatusFailed, StatusFailed
		s.err = s.redactor.String(err.Error())
		if n := len(s.queue); n > 0 {
			s.err += fmt.Sprintf(" (%d queued inputs were not sent)", n)
			s.queue = nil
		}
	} else {
		s.status, s.phase = StatusCompleted, StatusCompleted
		s.result = s.redactor.String(result)
	}
	srv.noteLocked(s)
	srv.touchLocked(s) // a result just in is not the first to go
	finished := 0
	var lru *session
	for _, o := range srv.sessions {
		if o.status != StatusRunning {
			finished++
			if lru == nil || o.used < lru.used {
				lru = o
			}
		}
	}
	if finished > MaxRetained {
		delete(srv.sessions, lru.id)
	}
}

// setPhase records a run's progress.
func (srv *Server) setPhase(s *session, phase, tool string, turn int) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s.phase, s.tool, s.turn = phase, tool, turn
	srv.noteLocked(s)
}

// clip shortens s, from the client or the model, to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
