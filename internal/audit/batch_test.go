package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openHeld opens a log whose batched records wait for Flush, Append or
// Close: the timer is set past any test's end.
func openHeld(t *testing.T, path string) *Log {
	t.Helper()
	l := openT(t, path)
	l.wait = time.Hour
	return l
}

func batched(t *testing.T, l *Log, n int, action string) []Record {
	t.Helper()
	var recs []Record
	for i := range n {
		r, err := l.AppendBatched(Event{Actor: "token:abc", Action: action, Target: "server:1", Detail: map[string]string{"i": fmt.Sprint(i)}})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

func inspect(t *testing.T, path string) Report {
	t.Helper()
	rep, err := Inspect(path)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return rep
}

func TestAppendBatchedFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openHeld(t, path)
	recs := batched(t, l, 5, "tool.call")
	if diff := cmp.Diff(Report{Records: 5, Head: 0, Beyond: 5}, inspect(t, path)); diff != "" {
		t.Errorf("before Flush (-want +got):\n%s", diff)
	}
	got, err := l.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("ReadAll before Flush (-want +got):\n%s", diff)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Report{Records: 5, Head: 5}, inspect(t, path)); diff != "" {
		t.Errorf("after Flush (-want +got):\n%s", diff)
	}
	if err := l.Flush(); err != nil { // nothing to do
		t.Fatal(err)
	}
	if got, err := ReadAll(path); err != nil || !cmp.Equal(recs, got) {
		t.Errorf("ReadAll after Flush = %v, %v", got, err)
	}
	for i, r := range recs {
		if r.Seq != uint64(i+1) || (i > 0 && r.Prev != recs[i-1].Hash) {
			t.Errorf("record %d: seq %d prev %s", i, r.Seq, r.Prev)
		}
	}
}

func TestAppendBatchedClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openHeld(t, path)
	recs := batched(t, l, 3, "tool.call")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Report{Records: 3, Head: 3}, inspect(t, path)); diff != "" {
		t.Errorf("after Close (-want +got):\n%s", diff)
	}
	if _, err := l.AppendBatched(Event{}); !errors.Is(err, ErrClosed) {
		t.Errorf("AppendBatched after Close: %v", err)
	}
	if err := l.Flush(); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
	l = openT(t, path)
	r, err := l.AppendBatched(Event{Action: "after"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 4 || r.Prev != recs[2].Hash {
		t.Errorf("after reopening: seq %d prev %s, want 4 and %s", r.Seq, r.Prev, recs[2].Hash)
	}
	l.Close()
	if n, err := Verify(path); n != 4 || err != nil {
		t.Errorf("Verify = %d, %v", n, err)
	}
}

// TestAppendBatchedInBackground: with nothing else to flush them, batched
// records reach the head within the interval.
func TestAppendBatchedInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	start := time.Now()
	batched(t, l, 3, "tool.call")
	for inspect(t, path).Head != 3 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the batched records were not flushed")
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("flushed %v after the first record", time.Since(start))
	l.mu.Lock()
	pending := l.timer != nil
	l.mu.Unlock()
	if pending {
		t.Error("a flush is still pending with nothing to flush")
	}
	// A second batch starts a new timer.
	batched(t, l, 2, "tool.call")
	for inspect(t, path).Head != 5 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the second batch was not flushed")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAppendInterleaved: Append syncs the batched records before it too,
// and the chain is the order of the calls, whichever way each appends.
func TestAppendInterleaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openHeld(t, path)
	var recs []Record
	for i, kind := range "bbAbAAbbb" {
		var r Record
		var err error
		if kind == 'A' {
			r, err = l.Append(Event{Action: "server.approve", Target: fmt.Sprint(i)})
		} else {
			r, err = l.AppendBatched(Event{Action: "tool.call", Target: fmt.Sprint(i)})
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		rep := inspect(t, path)
		if kind == 'A' && (rep.Head != r.Seq || rep.Beyond != 0) {
			t.Errorf("after Append of record %d: %+v", r.Seq, rep)
		}
		if kind == 'b' && rep.Records != i+1 {
			t.Errorf("after AppendBatched of record %d: %+v", r.Seq, rep)
		}
	}
	if diff := cmp.Diff(Report{Records: 9, Head: 6, Beyond: 3}, inspect(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	l.Close()
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("ReadAll (-want +got):\n%s", diff)
	}
}

func TestAppendInterleavedConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	l.wait = time.Millisecond // flushes run while appends go on
	const workers, each = 8, 100
	var wg sync.WaitGroup
	var mu sync.Mutex
	returned := map[uint64]Record{}
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				e := Event{Actor: fmt.Sprintf("token:%d", w), Action: "tool.call", Target: fmt.Sprint(i)}
				var r Record
				var err error
				if i%10 == 0 {
					e.Action = "server.approve"
					r, err = l.Append(e)
					if err == nil {
						// Everything appended before it is synced, so the
						// head names this record or a later one.
						if rep, ierr := inspectLog(l); ierr != nil || rep.Head < r.Seq {
							t.Errorf("after Append of record %d: %+v, %v", r.Seq, rep, ierr)
						}
					}
				} else {
					r, err = l.AppendBatched(e)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				returned[r.Seq] = r
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != workers*each {
		t.Fatalf("%d records, want %d", len(got), workers*each)
	}
	for _, r := range got {
		if diff := cmp.Diff(returned[r.Seq], r); diff != "" {
			t.Errorf("record %d is not the one returned (-returned +log):\n%s", r.Seq, diff)
		}
	}
	if rep := inspect(t, path); rep.Beyond != 0 || rep.Head != workers*each {
		t.Errorf("after Close: %+v", rep)
	}
}

// inspectLog inspects l's files without racing its appends.
func inspectLog(l *Log) (Report, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Inspect(l.path)
}

// crashCopy copies a log and its head, as a crash would leave them (the
// files of a process that is killed are what its writes made them), into a
// new directory, and returns the copy's path.
func crashCopy(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, suffix := range []string{"", ".head"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestCrashWithBatchedRecords: a crash before the flush leaves records
// after the head's. They verify and are reported; Open adopts them, and the
// chain continues from the last.
func TestCrashWithBatchedRecords(t *testing.T) {
	for _, synced := range []int{0, 2} {
		t.Run(fmt.Sprintf("%d synced", synced), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			l := openHeld(t, path)
			for range synced {
				if _, err := l.Append(Event{Action: "server.approve"}); err != nil {
					t.Fatal(err)
				}
			}
			recs := batched(t, l, 3, "tool.call")
			crashed := crashCopy(t, path)
			l.Close()

			rep := inspect(t, crashed)
			if diff := cmp.Diff(Report{Records: synced + 3, Head: uint64(synced), Beyond: 3}, rep); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			want := fmt.Sprintf("%d records, chain intact; the head file names record %d, and records %d to %d after it chain from it: written by batched appends, not yet flushed",
				synced+3, synced, synced+1, synced+3)
			if !strings.HasPrefix(rep.String(), want) {
				t.Errorf("report %q\ndoes not start %q", rep, want)
			}
			l = openT(t, crashed)
			if diff := cmp.Diff(Report{Records: synced + 3, Head: uint64(synced + 3)}, inspect(t, crashed)); diff != "" {
				t.Errorf("after Open (-want +got):\n%s", diff)
			}
			r, err := l.Append(Event{Action: "after"})
			if err != nil {
				t.Fatal(err)
			}
			if last := recs[2]; r.Seq != last.Seq+1 || r.Prev != last.Hash {
				t.Errorf("after reopening: seq %d prev %s, want %d and %s", r.Seq, r.Prev, last.Seq+1, last.Hash)
			}
			l.Close()
			if n, err := Verify(crashed); n != synced+4 || err != nil {
				t.Errorf("Verify = %d, %v", n, err)
			}
		})
	}
}

// TestCrashMidWrite: a crash that cuts the last batched record short
// leaves an incomplete line after the head's record. It verifies, and Open
// cuts it off.
func TestCrashMidWrite(t *testing.T) {
	for name, tc := range map[string]struct {
		flushed bool // the head names the record before the cut one
		cut     int  // bytes cut from the end
	}{
		"after unflushed records": {cut: 40},
		"right after the head":    {flushed: true, cut: 40},
		"only the newline":        {cut: 1},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			l := openHeld(t, path)
			if _, err := l.Append(Event{Action: "server.approve"}); err != nil {
				t.Fatal(err)
			}
			recs := batched(t, l, 3, "tool.call")
			if tc.flushed {
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			batched(t, l, 1, "tool.call")
			crashed := crashCopy(t, path)
			l.Close()
			b, _ := os.ReadFile(crashed)
			whole := len(b) - len(readLines(t, crashed)[4])
			os.WriteFile(crashed, b[:len(b)-tc.cut], 0o600)

			head := uint64(1)
			if tc.flushed {
				head = 4
			}
			torn := len(b) - tc.cut - whole
			if diff := cmp.Diff(Report{Records: 4, Head: head, Beyond: int(4 - head), Torn: torn}, inspect(t, crashed)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got, err := ReadAll(crashed); err != nil || len(got) != 4 {
				t.Errorf("ReadAll = %d records, %v", len(got), err)
			}
			l = openT(t, crashed)
			if fi, _ := os.Stat(crashed); fi.Size() != int64(whole) {
				t.Errorf("after Open the log has %d bytes, want the %d of its whole lines", fi.Size(), whole)
			}
			r, err := l.Append(Event{Action: "after"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Seq != 5 || r.Prev != recs[2].Hash {
				t.Errorf("after reopening: seq %d prev %s", r.Seq, r.Prev)
			}
			l.Close()
			if diff := cmp.Diff(Report{Records: 5, Head: 5}, inspect(t, crashed)); diff != "" {
				t.Errorf("after Open and Append (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBeyondHeadMustChain: records after the head's are accepted only as
// a chain from the head's record.
func TestBeyondHeadMustChain(t *testing.T) {
	// A log of 6 records whose head names record 2.
	setup := func(t *testing.T) (string, []Record) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		l := openHeld(t, path)
		var recs []Record
		for range 2 {
			r, err := l.Append(Event{Action: "server.approve"})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
		recs = append(recs, batched(t, l, 4, "tool.call")...)
		crashed := crashCopy(t, path)
		l.Close()
		return crashed, recs
	}
	t.Run("modified", func(t *testing.T) {
		path, recs := setup(t)
		lines := readLines(t, path)
		r := recs[3]
		r.Actor = "token:other"
		lines[3] = line(r)
		writeLines(t, path, lines)
		wantBad(t, path, ErrModified, 4, 4)
	})
	t.Run("replaced", func(t *testing.T) {
		path, recs := setup(t)
		lines := readLines(t, path)
		r := recs[3]
		r.Actor = "token:other"
		r.Hash = hashRecord(r)
		lines[3] = line(r)
		writeLines(t, path, lines)
		wantBad(t, path, ErrModified, 5, 5)
	})
	t.Run("removed between", func(t *testing.T) {
		path, _ := setup(t)
		lines := readLines(t, path)
		writeLines(t, path, append(lines[:3:3], lines[4:]...))
		wantBad(t, path, ErrRemoved, 4, 4)
	})
	t.Run("not from the head's record", func(t *testing.T) {
		// Record 3 claims a record 2 other than the head's.
		path, recs := setup(t)
		lines := readLines(t, path)
		forged := Record{Seq: 3, Time: recs[2].Time, Event: Event{Action: "tool.call"}, Prev: "sha256:00"}
		forged.Hash = hashRecord(forged)
		writeLines(t, path, append(lines[:2:2], line(forged)))
		wantBad(t, path, ErrModified, 3, 3)
	})
	t.Run("head hash wrong", func(t *testing.T) {
		path, _ := setup(t)
		os.WriteFile(path+".head", appendHead(nil, 2, "sha256:00"), 0o600)
		wantBad(t, path, ErrModified, 2, 2)
	})
}

// TestTruncatedBelowHead: cutting records the head names is tampering,
// with or without records after the head, exactly as without batches.
func TestTruncatedBelowHead(t *testing.T) {
	setup := func(t *testing.T, flushed bool) string {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		l := openHeld(t, path)
		batched(t, l, 3, "tool.call")
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		if !flushed {
			batched(t, l, 2, "tool.call") // records 4 and 5, after the head
		}
		crashed := crashCopy(t, path)
		l.Close()
		return crashed
	}
	for _, flushed := range []bool{true, false} {
		t.Run(fmt.Sprintf("flushed %v", flushed), func(t *testing.T) {
			t.Run("records", func(t *testing.T) {
				path := setup(t, flushed)
				writeLines(t, path, readLines(t, path)[:2])
				wantBad(t, path, ErrRemoved, 3, 3)
				_, err := Verify(path)
				want := "audit log " + path + ": record 3 (line 3) removed: the head file names record 3, but the log ends at record 2: record 3 is removed from the end"
				if err.Error() != want {
					t.Errorf("error:\n%s\nwant:\n%s", err, want)
				}
			})
			t.Run("cut short", func(t *testing.T) {
				// The head's record itself cut short.
				path := setup(t, flushed)
				lines := readLines(t, path)
				writeLines(t, path, append(lines[:2:2], lines[2][:40]))
				wantBad(t, path, ErrTruncated, 3, 3)
			})
			t.Run("everything", func(t *testing.T) {
				path := setup(t, flushed)
				writeLines(t, path, nil)
				wantBad(t, path, ErrRemoved, 1, 1)
			})
		})
	}
}

// TestFlusherErrorPoisons: a background flush that fails stops the log,
// and the records it could not sync survive a reopen.
func TestFlusherErrorPoisons(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	l.wait = time.Millisecond
	if _, err := l.Append(Event{Action: "server.approve"}); err != nil {
		t.Fatal(err)
	}
	head, _ := os.ReadFile(path + ".head")
	// A directory where the head file was: replacing it fails, whoever
	// runs the test.
	if err := os.Remove(path + ".head"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path+".head", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendBatched(Event{Action: "tool.call"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		l.mu.Lock()
		err := l.err
		l.mu.Unlock()
		if err != nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the background flush did not fail")
		}
		time.Sleep(time.Millisecond)
	}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Append", func() error { _, err := l.Append(Event{}); return err }},
		{"AppendBatched", func() error { _, err := l.AppendBatched(Event{}); return err }},
		{"Flush", l.Flush},
		{"Close", l.Close}, // reports records that may be missing
	} {
		err := c.call()
		if err == nil {
			t.Errorf("%s after a failed flush: no error", c.name)
			continue
		}
		for _, want := range []string{"an earlier write or sync failed", "records after 1 may not be on disk", "reopen", "write audit head"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\ndoes not say %q", c.name, err, want)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// Put the head back: the record the flush could not name is after it.
	os.Remove(path + ".head")
	os.WriteFile(path+".head", head, 0o600)
	if diff := cmp.Diff(Report{Records: 2, Head: 1, Beyond: 1}, inspect(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	l = openT(t, path)
	if _, err := l.Append(Event{Action: "after"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if diff := cmp.Diff(Report{Records: 3, Head: 3}, inspect(t, path)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
}
