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

func openT(t *testing.T, path string) *Log {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// newLog writes a log of n records and returns its path and records.
func newLog(t *testing.T, n int) (string, []Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	var recs []Record
	for i := range n {
		r, err := l.Append(Event{
			Actor:  "user:owner",
			Action: "server.create",
			Target: fmt.Sprintf("srv_%d", i+1),
			Detail: map[string]string{"i": fmt.Sprint(i + 1)},
		})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path, recs
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")[:strings.Count(string(b), "\n")]
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// line returns r as the log writes it.
func line(r Record) string { return string(appendLine(nil, r)) }

func TestAppendAndVerify(t *testing.T) {
	path, recs := newLog(t, 5)
	if n, err := Verify(path); n != 5 || err != nil {
		t.Fatalf("Verify = %d, %v", n, err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("ReadAll (-want +got):\n%s", diff)
	}
	for i, r := range recs {
		if r.Seq != uint64(i+1) {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
		if i > 0 && r.Prev != recs[i-1].Hash {
			t.Errorf("record %d: prev %s, want %s", r.Seq, r.Prev, recs[i-1].Hash)
		}
		if r.Time.Location() != time.UTC || r.Time.IsZero() {
			t.Errorf("record %d: time %v is not UTC", r.Seq, r.Time)
		}
	}
	if recs[0].Prev != "" {
		t.Errorf("first prev = %q", recs[0].Prev)
	}
}

func TestEmptyLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	openT(t, path).Close()
	if n, err := Verify(path); n != 0 || err != nil {
		t.Errorf("Verify = %d, %v", n, err)
	}
	if recs, err := ReadAll(path); len(recs) != 0 || err != nil {
		t.Errorf("ReadAll = %v, %v", recs, err)
	}
	if _, err := Verify(filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Verify of a missing log: %v", err)
	}
}

// wantBad checks that Verify, ReadAll and Open all refuse the log with the
// same error, naming record seq at line.
func wantBad(t *testing.T, path string, kind error, seq uint64, line int) {
	t.Helper()
	_, err := Verify(path)
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("Verify error = %v, want a *VerifyError", err)
	}
	if !errors.Is(err, kind) || ve.Seq != seq || ve.Line != line {
		t.Errorf("Verify error = %v (kind %v, seq %d, line %d), want kind %v, seq %d, line %d", err, ve.Kind, ve.Seq, ve.Line, kind, seq, line)
	}
	if recs, rerr := ReadAll(path); rerr == nil || rerr.Error() != err.Error() || (line > 0 && len(recs) != int(seq)-1) {
		t.Errorf("ReadAll = %d records, %v; want %d and %v", len(recs), rerr, int(seq)-1, err)
	}
	if l, oerr := Open(path); oerr == nil || oerr.Error() != err.Error() {
		if l != nil {
			l.Close()
		}
		t.Errorf("Open error = %v, want %v", oerr, err)
	}
}

// TestTamperedField changes one field of record 3 of 5 and writes the line
// back in the log's own format, so only the hash can tell.
func TestTamperedField(t *testing.T) {
	for name, change := range map[string]func(*Record){
		"seq":          func(r *Record) { r.Seq = 30 },
		"time":         func(r *Record) { r.Time = r.Time.Add(time.Nanosecond) },
		"actor":        func(r *Record) { r.Actor = "user:someone" },
		"action":       func(r *Record) { r.Action = "server.delete" },
		"target":       func(r *Record) { r.Target = "srv_x" },
		"fingerprint":  func(r *Record) { r.Fingerprint = "sha256:ff" },
		"detail value": func(r *Record) { r.Detail["i"] = "4" },
		"detail key":   func(r *Record) { r.Detail = map[string]string{"j": "3"} },
		"detail added": func(r *Record) { r.Detail["k"] = "" },
		"detail gone":  func(r *Record) { r.Detail = nil },
		"prev":         func(r *Record) { r.Prev = "sha256:00" },
		"hash":         func(r *Record) { r.Hash = "sha256:00" },
	} {
		t.Run(name, func(t *testing.T) {
			path, recs := newLog(t, 5)
			lines := readLines(t, path)
			r := recs[2]
			r.Detail = map[string]string{"i": "3"}
			change(&r)
			lines[2] = line(r)
			writeLines(t, path, lines)
			wantBad(t, path, ErrModified, 3, 3)
		})
	}
}

// TestEditedLine changes the bytes of a line without changing what it
// means: the line is no longer what Zero wrote.
func TestEditedLine(t *testing.T) {
	for name, edit := range map[string]func(string) string{
		"space":          func(s string) string { return strings.Replace(s, `,"actor"`, `, "actor"`, 1) },
		"escape":         func(s string) string { return strings.Replace(s, `"server.create"`, `"server\u002ecreate"`, 1) },
		"time offset":    func(s string) string { return strings.Replace(s, `Z"`, `+00:00"`, 1) },
		"unknown member": func(s string) string { return strings.Replace(s, `{"seq"`, `{"x":1,"seq"`, 1) },
		"repeated":       func(s string) string { return strings.Replace(s, `{"seq"`, `{"actor":"user:owner","seq"`, 1) },
		"not JSON":       func(s string) string { return "garbage\n" },
		"empty line":     func(s string) string { return "\n" },
		"CRLF":           func(s string) string { return strings.TrimSuffix(s, "\n") + "\r\n" },
	} {
		t.Run(name, func(t *testing.T) {
			path, _ := newLog(t, 5)
			lines := readLines(t, path)
			lines[2] = edit(lines[2])
			writeLines(t, path, lines)
			wantBad(t, path, ErrModified, 3, 3)
		})
	}
}

func TestRemovedMiddleRecord(t *testing.T) {
	path, _ := newLog(t, 5)
	lines := readLines(t, path)
	writeLines(t, path, append(lines[:2:2], lines[3:]...))
	wantBad(t, path, ErrRemoved, 3, 3)
	_, err := Verify(path)
	want := "audit log " + path + ": record 3 (line 3) removed: record 3 is missing: line 3 holds record 4"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

func TestRemovedFirstRecords(t *testing.T) {
	path, _ := newLog(t, 5)
	writeLines(t, path, readLines(t, path)[2:])
	wantBad(t, path, ErrRemoved, 1, 1)
}

// TestRemovedLastRecords: the chain that is left is sound; only the head
// file shows what is missing.
func TestRemovedLastRecords(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path, _ := newLog(t, 5)
			writeLines(t, path, readLines(t, path)[:5-n])
			wantBad(t, path, ErrRemoved, uint64(5-n+1), 5-n+1)
		})
	}
	path, _ := newLog(t, 5)
	writeLines(t, path, readLines(t, path)[:4])
	_, err := Verify(path)
	want := "audit log " + path + ": record 5 (line 5) removed: the head file names record 5, but the log ends at record 4: record 5 is removed from the end"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

func TestReordered(t *testing.T) {
	path, _ := newLog(t, 5)
	lines := readLines(t, path)
	lines[1], lines[2] = lines[2], lines[1]
	writeLines(t, path, lines)
	wantBad(t, path, ErrReordered, 2, 2)
	_, err := Verify(path)
	if want := "line 2 holds record 3, and record 2 is at line 3"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestInsertedForgedRecord inserts, after record 2, a record whose seq, prev
// and hash are all computed correctly. It verifies on its own; the chain
// breaks at the record after it.
func TestInsertedForgedRecord(t *testing.T) {
	path, recs := newLog(t, 5)
	lines := readLines(t, path)
	forged := Record{Seq: 3, Time: recs[1].Time, Event: Event{Actor: "user:owner", Action: "server.approve", Target: "evil"}, Prev: recs[1].Hash}
	forged.Hash = hashRecord(forged)
	lines = append(lines[:2:2], append([]string{line(forged)}, lines[2:]...)...)
	writeLines(t, path, lines)
	wantBad(t, path, ErrInserted, 4, 4)
	recsBefore, _ := ReadAll(path)
	if len(recsBefore) != 3 || recsBefore[2].Target != "evil" {
		t.Errorf("ReadAll gave %d records before the break", len(recsBefore))
	}
}

// TestReplacedRecord replaces record 3 with a forged one whose hash is
// recomputed: the record after it no longer chains.
func TestReplacedRecord(t *testing.T) {
	path, recs := newLog(t, 5)
	lines := readLines(t, path)
	forged := recs[2]
	forged.Actor = "user:someone"
	forged.Hash = hashRecord(forged)
	lines[2] = line(forged)
	writeLines(t, path, lines)
	wantBad(t, path, ErrModified, 4, 4)
}

// TestReplacedLastRecord: with no record after it, the head file catches a
// forged last record.
func TestReplacedLastRecord(t *testing.T) {
	path, recs := newLog(t, 5)
	lines := readLines(t, path)
	forged := recs[4]
	forged.Actor = "user:someone"
	forged.Hash = hashRecord(forged)
	lines[4] = line(forged)
	writeLines(t, path, lines)
	wantBad(t, path, ErrModified, 5, 5)
}

func TestForgedFirstRecord(t *testing.T) {
	path, recs := newLog(t, 3)
	lines := readLines(t, path)
	forged := recs[0]
	forged.Prev = "sha256:00"
	forged.Hash = hashRecord(forged)
	lines[0] = line(forged)
	writeLines(t, path, lines)
	wantBad(t, path, ErrModified, 1, 1)
}

func TestTruncatedLastLine(t *testing.T) {
	for name, cut := range map[string]int{"half a line": 40, "the newline": 1} {
		t.Run(name, func(t *testing.T) {
			path, _ := newLog(t, 5)
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, b[:len(b)-cut], 0o600); err != nil {
				t.Fatal(err)
			}
			wantBad(t, path, ErrTruncated, 5, 5)
		})
	}
}

func TestHeadFile(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		path, _ := newLog(t, 3)
		os.Remove(path + ".head")
		wantBad(t, path, ErrRemoved, 0, 0)
	})
	t.Run("edited", func(t *testing.T) {
		path, _ := newLog(t, 3)
		b, _ := os.ReadFile(path + ".head")
		os.WriteFile(path+".head", append([]byte(" "), b...), 0o600)
		wantBad(t, path, ErrModified, 0, 0)
	})
	// Two behind, chained from the head's record, is what batched appends
	// leave before their flush: TestCrashWithBatchedRecords accepts it.
	t.Run("two behind, wrong hash", func(t *testing.T) {
		path, _ := newLog(t, 3)
		os.WriteFile(path+".head", appendHead(nil, 1, "sha256:00"), 0o600)
		wantBad(t, path, ErrModified, 1, 1)
	})
	t.Run("none behind, hash", func(t *testing.T) {
		path, _ := newLog(t, 3)
		os.WriteFile(path+".head", appendHead(nil, 0, "sha256:00"), 0o600)
		wantBad(t, path, ErrModified, 0, 0)
	})
	t.Run("one behind, wrong hash", func(t *testing.T) {
		path, _ := newLog(t, 3)
		os.WriteFile(path+".head", appendHead(nil, 2, "sha256:00"), 0o600)
		wantBad(t, path, ErrModified, 2, 2)
	})
	t.Run("records but no head ever", func(t *testing.T) {
		path, _ := newLog(t, 1)
		os.Remove(path + ".head")
		wantBad(t, path, ErrRemoved, 0, 0)
	})
	t.Run("head of an emptied log", func(t *testing.T) {
		path, _ := newLog(t, 2)
		os.WriteFile(path, nil, 0o600)
		wantBad(t, path, ErrRemoved, 1, 1)
	})
}

// TestCrashBeforeHead: a record synced but the head not yet replaced (a
// crash in between) verifies, and Open brings the head up to date.
func TestCrashBeforeHead(t *testing.T) {
	for _, n := range []int{1, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path, _ := newLog(t, n-1)
			oldHead, _ := os.ReadFile(path + ".head")
			l := openT(t, path)
			if _, err := l.Append(Event{Action: "last"}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			os.WriteFile(path+".head", oldHead, 0o600)
			if got, err := Verify(path); got != n || err != nil {
				t.Fatalf("Verify = %d, %v", got, err)
			}
			l = openT(t, path)
			if _, err := l.Append(Event{Action: "after"}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			if got, err := Verify(path); got != n+1 || err != nil {
				t.Fatalf("Verify after reopening = %d, %v", got, err)
			}
		})
	}
}

func TestConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := l.Append(Event{Actor: fmt.Sprintf("token:%d", i), Action: "tool.call"}); err != nil {
				errs <- err
			}
			if i%10 == 0 { // readers in the same process see whole records
				if _, err := l.ReadAll(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs, err := l.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	actors := map[string]bool{}
	for _, r := range recs {
		actors[r.Actor] = true
	}
	if len(recs) != n || len(actors) != n {
		t.Errorf("%d records from %d actors, want %d", len(recs), len(actors), n)
	}
}

func TestReopenContinuesChain(t *testing.T) {
	path, recs := newLog(t, 2)
	l := openT(t, path)
	r, err := l.Append(Event{Action: "third"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 3 || r.Prev != recs[1].Hash {
		t.Errorf("after reopening: seq %d prev %s, want 3 and %s", r.Seq, r.Prev, recs[1].Hash)
	}
	l.Close()
	if n, err := Verify(path); n != 3 || err != nil {
		t.Errorf("Verify = %d, %v", n, err)
	}
}

func TestOneWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	if l2, err := Open(path); err == nil {
		l2.Close()
		t.Fatal("a second Open of the same log succeeded")
	}
	l.Close()
	openT(t, path).Close()
}

func TestAppendAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(Event{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestInvalidUTF8 is stored as U+FFFD, the way it reads back, so the record
// still verifies.
func TestInvalidUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	r, err := l.Append(Event{Actor: "a\xffb", Detail: map[string]string{"k\xfe": "v\xfd", "": ""}})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	want := Event{Actor: "a\uFFFDb", Detail: map[string]string{"k\uFFFD": "v\uFFFD", "": ""}}
	if diff := cmp.Diff(want, r.Event); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	recs, err := ReadAll(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("ReadAll = %v, %v", recs, err)
	}
	if diff := cmp.Diff(r, recs[0]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAppendCopiesDetail: changing the caller's map afterwards changes
// nothing.
func TestAppendCopiesDetail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openT(t, path)
	d := map[string]string{"a": "1"}
	r, err := l.Append(Event{Detail: d})
	if err != nil {
		t.Fatal(err)
	}
	d["a"] = "2"
	if r.Detail["a"] != "1" {
		t.Error("record shares the caller's map")
	}
}

func TestFileMode(t *testing.T) {
	path, _ := newLog(t, 1)
	for _, p := range []string{path, path + ".head"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", p, fi.Mode())
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("directory holds %d files, want the log and its head", len(entries))
	}
}
