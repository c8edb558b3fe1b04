package threads

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zero-dev/zero/internal/database"
)

// Channel is the PostgreSQL channel the replicas of a workspace tell each
// other of its threads' changes on. A payload is one of
//
//	e:THREAD:SEQ  thread THREAD's events up to SEQ are stored
//	a:APPROVAL    approval APPROVAL was answered
//	c:THREAD:WHO  WHO cancelled thread THREAD's run
//
// A NOTIFY only wakes: what it says of is read from the database.
const Channel = "zero_threads"

// listenRetry is how long a dropped LISTEN connection waits before it is
// made again.
const listenRetry = time.Second

func eventsNote(thread, seq int64) string {
	return "e:" + strconv.FormatInt(thread, 10) + ":" + strconv.FormatInt(seq, 10)
}

func approvalNote(id int64) string { return "a:" + strconv.FormatInt(id, 10) }

func cancelNote(thread int64, actor string) string {
	return "c:" + strconv.FormatInt(thread, 10) + ":" + actor
}

// notify sends payload on Channel, on PostgreSQL; on SQLite, which one
// process owns, it does nothing.
func (s *Store) notify(ctx context.Context, payload string) error {
	if !s.pg {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `SELECT pg_notify(?, ?)`, Channel, payload)
	return err
}

// Listen has r hear, on PostgreSQL, what the workspace's other replicas
// do to its threads, until r closes: an event another replica appends
// wakes this replica's streams of its thread (each reads from the database
// what it has not had), and an answer given on another replica wakes the
// run here that waits for it. When the connection drops, every stream and
// every waiting run reads again once it is back (a NOTIFY sent meanwhile
// is lost, never what it told of). Without it (or where a pooler breaks
// LISTEN), streams read at every heartbeat and waiting runs check their
// approval as often.
func (r *Runner) Listen(pool *database.Pool) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		database.Listen(r.life, pool, Channel, r.retry, r.wakeAll, r.heard)
	}()
}

// heard acts on one notification.
func (r *Runner) heard(payload string) {
	kind, rest, _ := strings.Cut(payload, ":")
	switch kind {
	case "e":
		t, s, _ := strings.Cut(rest, ":")
		thread, err1 := strconv.ParseInt(t, 10, 64)
		seq, err2 := strconv.ParseInt(s, 10, 64)
		if err1 == nil && err2 == nil {
			r.store.hub.publish(thread, update{wake: true, upTo: seq})
		}
	case "a":
		if id, err := strconv.ParseInt(rest, 10, 64); err == nil {
			r.wake(id)
		}
	case "c":
		t, actor, _ := strings.Cut(rest, ":")
		if thread, err := strconv.ParseInt(t, 10, 64); err == nil {
			r.cancel(thread, actor)
		}
	}
}

// wake wakes the run of this workspace that waits for approval id, if
// one does.
func (r *Runner) wake(id int64) {
	r.mu.Lock()
	ch := r.waiting[id]
	r.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// wakeAll wakes every stream and every waiting run, to read again.
func (r *Runner) wakeAll() {
	r.store.hub.wakeAll()
	r.mu.Lock()
	ids := slices.Collect(maps.Keys(r.waiting))
	r.mu.Unlock()
	for _, id := range ids {
		r.wake(id)
	}
}
