package threads

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Bounds of a stream of a thread's events.
const (
	// Heartbeat is how often a stream with nothing to send sends a comment,
	// so that proxies and browsers keep it open.
	Heartbeat = 15 * time.Second
	// streamBuffer bounds what waits for one slow stream: past it the
	// stream ends, and its client comes back with Last-Event-ID.
	streamBuffer = 256
)

// KindDelta names a streamed piece of the answer a model is writing. It is
// sent to streams only, never stored: the finished message replaces it.
const KindDelta = "delta"

// An update is what a stream is sent: a stored event, a delta, or a
// wake: events up to Seq upTo (all there are, for 0) are stored, which
// the stream reads from the database if it has not had them.
type update struct {
	event *Event
	delta string
	wake  bool
	upTo  int64
}

// hub hands the updates of each thread to its streams.
type hub struct {
	mu   sync.Mutex
	subs map[int64]map[chan update]bool
}

func (h *hub) subscribe(id int64) chan update {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int64]map[chan update]bool{}
	}
	if h.subs[id] == nil {
		h.subs[id] = map[chan update]bool{}
	}
	ch := make(chan update, streamBuffer)
	h.subs[id][ch] = true
	return ch
}

func (h *hub) unsubscribe(id int64, ch chan update) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id][ch] {
		delete(h.subs[id], ch)
		close(ch)
	}
	if len(h.subs[id]) == 0 {
		delete(h.subs, id)
	}
}

// publish hands u to thread id's streams; one whose buffer is full is
// ended, never waited for.
func (h *hub) publish(id int64, u update) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[id] {
		select {
		case ch <- u:
		default:
			delete(h.subs[id], ch)
			close(ch)
		}
	}
}

// wakeAll wakes every stream, to read what it has not had: after the
// LISTEN connection dropped, when notifications may have been lost.
func (h *hub) wakeAll() {
	h.mu.Lock()
	ids := slices.Collect(maps.Keys(h.subs))
	h.mu.Unlock()
	for _, id := range ids {
		h.publish(id, update{wake: true})
	}
}

// Delta sends text, a piece of the answer being written in thread id, to
// the thread's streams. It is not stored.
func (s *Store) Delta(id int64, text string) {
	s.hub.publish(id, update{delta: text})
}

// ServeEvents streams thread id's events to w as server-sent events: each
// stored event with its Seq as the id and its kind as the event name, then
// every event stored after, as it is, and deltas (named KindDelta, with
// the id of the last event sent) as they come. A client that sends
// Last-Event-ID gets the events after it: none is lost and none is sent
// twice; without it, ?after=SEQ does the same. A comment is sent every
// Heartbeat. On PostgreSQL, where another replica may append them, the
// events are read from the database when a NOTIFY (see Runner.Listen)
// says there are new ones, and at every heartbeat, whichever comes first:
// each is sent once, in order. It returns when the client goes
// (or ctx ends), or when the client reads too slowly to keep up; the
// client then comes back with Last-Event-ID.
func (s *Store) ServeEvents(w http.ResponseWriter, r *http.Request, id int64) error {
	after := int64(0)
	v, from := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		// A page that showed the events up to a Seq starts after it (an
		// EventSource sends Last-Event-ID only when it reconnects).
		v, from = r.URL.Query().Get("after"), "after"
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %s %q is not an event's number", ErrInvalid, from, v)
		}
		after = n
	}
	// Subscribe first, then read what is stored: an event stored in
	// between is in both, and sent once (by its Seq).
	ch := s.hub.subscribe(id)
	defer s.hub.unsubscribe(id, ch)
	stored, err := s.Events(r.Context(), id, after)
	if err != nil {
		return err
	}
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sent := after
	send := func(e *Event) error {
		if e.Seq <= sent {
			return nil
		}
		data, err := marshal(e)
		if err != nil {
			return err
		}
		sent = e.Seq
		_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Kind, data)
		return err
	}
	ctx := r.Context()
	// catchUp sends what is stored after the last event sent.
	catchUp := func() error {
		events, err := s.Events(ctx, id, sent)
		if err != nil {
			return err
		}
		for i := range events {
			if err := send(&events[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range stored {
		if err := send(&stored[i]); err != nil {
			return nil
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	tick := time.NewTicker(s.beat)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if s.pg {
				if err := catchUp(); err != nil {
					return nil
				}
			}
			_, err = fmt.Fprint(w, ": heartbeat\n\n")
		case u, ok := <-ch:
			switch {
			case !ok:
				return nil // too slow: the client comes back with Last-Event-ID
			case u.wake:
				if u.upTo == 0 || u.upTo > sent {
					err = catchUp()
				}
			case u.event != nil && u.event.Seq > sent+1:
				err = catchUp() // one stored elsewhere came first: in order from the database
			case u.event != nil:
				err = send(u.event)
			default:
				data, _ := marshal(map[string]string{"text": u.delta})
				_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", sent, KindDelta, data)
			}
		}
		if err != nil {
			return nil
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}
