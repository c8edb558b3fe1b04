package threads

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// streamed is one event a client read.
type streamed struct {
	id    int64
	event string
	data  string
}

// openStream requests the stream at url, sending lastID if not empty.
func openStream(t *testing.T, ctx context.Context, url, lastID string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readStream reads events from a stream of thread id, sending lastID (if
// not empty), until stop says so; comments count in beats.
func readStream(t *testing.T, base string, id int64, lastID string, stop func(streamed) bool) (got []streamed, beats int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := openStream(t, ctx, base+"/"+strconv.FormatInt(id, 10), lastID)
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	var cur streamed
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event == "" {
				continue
			}
			got = append(got, cur)
			if stop(cur) {
				return got, beats
			}
			cur = streamed{}
		case strings.HasPrefix(line, ":"):
			beats++
			if stop(streamed{event: "heartbeat"}) {
				return got, beats
			}
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	t.Fatalf("the stream ended: %v", sc.Err())
	return nil, 0
}

func streamServer(t *testing.T, s *Store) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/"), 10, 64)
		if err := s.ServeEvents(w, r, id); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStreamReplay: a client that leaves in the middle of a run's events
// and comes back with Last-Event-ID gets every event after the last it
// saw, once each, in order, while events go on being stored.
func TestStreamReplay(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "t"})
	say(t, s, th.ID, 0, "one", "two", "three")
	base := streamServer(t, s)
	const total = 3 + 200
	done := make(chan error, 1)
	go func() {
		for i := range 200 {
			if _, err := s.Append(ctx, th.ID, Last, KindMessage, msg("assistant", fmt.Sprint("m", i))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	first, _ := readStream(t, base, th.ID, "", func(e streamed) bool { return e.id >= 40 })
	last := first[len(first)-1].id
	rest, _ := readStream(t, base, th.ID, strconv.FormatInt(last, 10), func(e streamed) bool { return e.id == total })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	all := append(first, rest...)
	if len(all) != total {
		t.Fatalf("%d events read, want %d", len(all), total)
	}
	for i, e := range all {
		var ev Event
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil || e.id != int64(i+1) || ev.Seq != e.id || e.event != KindMessage {
			t.Fatalf("event %d: id %d, %s %q %v", i+1, e.id, e.event, e.data, err)
		}
	}
}

// TestStreamDeltasAndHeartbeats: a delta reaches the stream, with the id
// of the last event sent, and is never stored; an idle stream gets
// heartbeats; a Last-Event-ID that is not a number is refused.
func TestStreamDeltasAndHeartbeats(t *testing.T) {
	s := newStore(t)
	s.beat = 20 * time.Millisecond
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "t"})
	say(t, s, th.ID, 0, "one", "two")
	base := streamServer(t, s)
	// The delta is sent once the idle stream has had a heartbeat, however
	// long a loaded machine takes to send one.
	sent := false
	got, beats := readStream(t, base, th.ID, "1", func(e streamed) bool {
		if e.event == "heartbeat" && !sent {
			sent = true
			s.Delta(th.ID, "Hel")
		}
		return e.event == KindDelta
	})
	if len(got) != 2 || got[0].id != 2 || got[1].id != 2 || got[1].data != `{"text":"Hel"}` {
		t.Errorf("after 1: %+v", got)
	}
	if beats == 0 {
		t.Error("no heartbeat before the delta")
	}
	if events, _ := s.Events(ctx, th.ID, 0); len(events) != 2 {
		t.Errorf("a delta was stored: %d events", len(events))
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/"+strconv.FormatInt(th.ID, 10), nil)
	req.Header.Set("Last-Event-ID", "x1")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad Last-Event-ID: %v %v", res.StatusCode, err)
	}
}

// TestStreamAfter: without Last-Event-ID, ?after=SEQ starts the stream
// after that event (a page that showed them); Last-Event-ID, which a
// reconnecting EventSource sends, wins over it; a bad one is refused.
func TestStreamAfter(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	th, _ := s.Create(ctx, Thread{Title: "t"})
	say(t, s, th.ID, 0, "one", "two", "three")
	base := streamServer(t, s)
	first := func(query, lastID string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res := openStream(t, ctx, base+"/"+strconv.FormatInt(th.ID, 10)+query, lastID)
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return res.StatusCode, ""
		}
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				return res.StatusCode, id
			}
		}
		return res.StatusCode, ""
	}
	if status, id := first("?after=2", ""); status != 200 || id != "3" {
		t.Errorf("after=2: %d, first id %q", status, id)
	}
	if status, id := first("?after=0", "1"); status != 200 || id != "2" {
		t.Errorf("Last-Event-ID 1 with after=0: %d, first id %q", status, id)
	}
	if status, _ := first("?after=-1", ""); status != http.StatusBadRequest {
		t.Errorf("after=-1: %d", status)
	}
}
