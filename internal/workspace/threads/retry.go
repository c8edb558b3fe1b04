package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zero-dev/zero/internal/model"
)

// ErrNothingToRetry reports a retry of a thread whose branch ends with
// the model's answer, or holds no message: there is nothing to answer.
var ErrNothingToRetry = errors.New("nothing to run again")

// Retryable says whether a run of thread id may start with no new prompt
// (Start.Retry), and if not, why (ErrNothingToRetry): see RetryableEvents.
func (s *Store) Retryable(ctx context.Context, id int64) error {
	events, err := s.Events(ctx, id, 0)
	if err != nil {
		return err
	}
	return RetryableEvents(events)
}

// RetryableEvents is Retryable on a thread's events, all of them, as
// Events returns them: the last message of the branch that ends at the
// last event must be a person's message or a call's result, or a model's
// answer with calls, which get their placeholders. So a run that failed
// or was interrupted can be run again from where it ended, and a fork
// made to answer again can be run; a run that completed cannot (its
// branch ends with the answer).
func RetryableEvents(events []Event) error {
	for at := int64(len(events)); at > 0; at = events[at-1].Parent {
		e := events[at-1]
		if e.Kind != KindMessage {
			continue
		}
		var m model.Message
		if err := json.Unmarshal(e.Body, &m); err != nil {
			return fmt.Errorf("event %d is not a message: %w", e.Seq, err)
		}
		if m.Role == model.RoleAssistant && len(m.ToolCalls) == 0 {
			return fmt.Errorf("%w: the thread ends with the model's answer: send a message, or regenerate the answer", ErrNothingToRetry)
		}
		return nil
	}
	return fmt.Errorf("%w: the thread has no message: send one", ErrNothingToRetry)
}

// ForkBefore makes a fork of thread id that ends just before its event
// seq, which must be a message of role: for a user's message, to send it
// again edited; for the model's answer, to have it answered again. The
// fork holds the branch up to the event's parent (none, for the first
// event) and nothing after; thread id keeps all it had.
func (s *Store) ForkBefore(ctx context.Context, id, seq int64, role string) (Thread, error) {
	path, err := s.Path(ctx, id, seq)
	if err != nil {
		return Thread{}, err
	}
	e := path[len(path)-1]
	var m model.Message
	if e.Kind == KindMessage {
		json.Unmarshal(e.Body, &m)
	}
	if m.Role != role {
		return Thread{}, fmt.Errorf("%w: event %d of thread %d is not a message of role %s", ErrInvalid, seq, id, role)
	}
	return s.fork(ctx, id, e.Parent, path[:len(path)-1])
}
