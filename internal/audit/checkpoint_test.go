package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openEvery opens the log at path with a checkpoint every `every` records;
// its batched records wait for Flush or Close.
func openEvery(t *testing.T, path string, every uint64) *Log {
	t.Helper()
	l, err := open(path, every)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.wait = time.Hour
	return l
}

// grow opens the log at path with a checkpoint every `every` records,
// appends n records as one batch, flushes them (which moves the
// checkpoint if it is due) and closes the log, which waits for the move.
// Record i's target is "srv_i".
func grow(t *testing.T, path string, every uint64, n int) []Record {
	t.Helper()
	l := openEvery(t, path, every)
	var recs []Record
	for range n {
		seq := l.seq + 1
		r, err := l.AppendBatched(Event{Actor: "user:owner", Action: "server.create", Target: fmt.Sprintf("srv_%d", seq),
			Detail: map[string]string{"i": fmt.Sprint(seq)}})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkpointed returns the path of a log of 30 records, whose head names
// record 30 and whose checkpoint names record 20, and its records.
func checkpointed(t *testing.T) (string, []Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	recs := grow(t, path, 10, 20)
	recs = append(recs, grow(t, path, 100, 10)...)
	if cp, err := readCheckpoint(path); err != nil || cp.seq != 20 || cp.hash != recs[19].Hash {
		t.Fatalf("checkpoint %+v, %v; want record 20", cp, err)
	}
	return path, recs
}

func offsetOf(t *testing.T, path string, seq int) int64 {
	t.Helper()
	return int64(len(strings.Join(readLines(t, path)[:seq-1], "")))
}

// problem is what a start or a verification says is wrong.
type problem struct {
	Kind error
	Seq  uint64
	File string
}

func problemOf(t *testing.T, err error) problem {
	t.Helper()
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v, want a *VerifyError", err)
	}
	return problem{ve.Kind, ve.Seq, ve.File}
}

// TestCheckpointTampered: each change to a checkpointed log that a start
// can see fails the start (Open), with a *VerifyError naming what it
// found, and fails Verify, which reads the whole log; where Verify, which
// reads every record, finds an earlier or more precise problem, it says
// that one.
func TestCheckpointTampered(t *testing.T) {
	errorsAs := cmp.Comparer(func(a, b error) bool { return a == b })
	for _, c := range []struct {
		name         string
		tamper       func(t *testing.T, path string, recs []Record)
		open, verify problem
	}{
		{"the log cut before the checkpoint's record", func(t *testing.T, path string, _ []Record) {
			writeLines(t, path, readLines(t, path)[:15])
		}, problem{ErrRemoved, 20, ""}, problem{ErrRemoved, 16, ""}},
		{"the log cut at the checkpoint's record", func(t *testing.T, path string, _ []Record) {
			writeLines(t, path, readLines(t, path)[:19])
		}, problem{ErrRemoved, 20, ""}, problem{ErrRemoved, 20, ""}},
		{"the checkpoint's record cut short", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			writeLines(t, path, append(lines[:19:19], lines[19][:40]))
		}, problem{ErrTruncated, 20, ""}, problem{ErrTruncated, 20, ""}},
		{"the log emptied", func(t *testing.T, path string, _ []Record) {
			writeLines(t, path, nil)
		}, problem{ErrRemoved, 20, ""}, problem{ErrRemoved, 1, ""}},
		{"the log emptied and its head removed", func(t *testing.T, path string, _ []Record) {
			writeLines(t, path, nil)
			os.Remove(path + ".head")
		}, problem{ErrRemoved, 20, ""}, problem{ErrRemoved, 1, ""}},
		{"a record before it removed", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			writeLines(t, path, append(lines[:4:4], lines[5:]...))
		}, problem{ErrModified, 20, ""}, problem{ErrRemoved, 5, ""}},
		{"a record before it lengthened", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			lines[4] = strings.Replace(lines[4], `"srv_5"`, `"srv_5x"`, 1)
			writeLines(t, path, lines)
		}, problem{ErrModified, 20, ""}, problem{ErrModified, 5, ""}},
		{"a record inserted before it", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			writeLines(t, path, append(lines[:5:5], lines[4:]...))
		}, problem{ErrModified, 20, ""}, problem{ErrInserted, 6, ""}},
		{"the checkpoint's record changed", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			lines[19] = strings.Replace(lines[19], `"srv_20"`, `"srv_2x"`, 1)
			writeLines(t, path, lines)
		}, problem{ErrModified, 20, ""}, problem{ErrModified, 20, ""}},
		{"the checkpoint's record forged, its hash recomputed", func(t *testing.T, path string, recs []Record) {
			lines := readLines(t, path)
			r := recs[19]
			r.Target = "srv_2x"
			r.Hash = hashRecord(r)
			lines[19] = line(r)
			writeLines(t, path, lines)
		}, problem{ErrModified, 20, ""}, problem{ErrModified, 20, ""}},
		{"a record after it changed", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			lines[24] = strings.Replace(lines[24], `"srv_25"`, `"srv_2x"`, 1)
			writeLines(t, path, lines)
		}, problem{ErrModified, 25, ""}, problem{ErrModified, 25, ""}},
		{"a record after it removed", func(t *testing.T, path string, _ []Record) {
			lines := readLines(t, path)
			writeLines(t, path, append(lines[:24:24], lines[25:]...))
		}, problem{ErrRemoved, 25, ""}, problem{ErrRemoved, 25, ""}},
		{"the last record removed", func(t *testing.T, path string, _ []Record) {
			writeLines(t, path, readLines(t, path)[:29])
		}, problem{ErrRemoved, 30, ""}, problem{ErrRemoved, 30, ""}},
		{"checkpoint file: another record number", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{21, offsetOf(t, path, 20), recs[19].Hash}), 0o600)
		}, problem{ErrModified, 21, ""}, problem{ErrModified, 21, ""}},
		{"checkpoint file: another byte", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{20, offsetOf(t, path, 20) + 1, recs[19].Hash}), 0o600)
		}, problem{ErrModified, 20, ""}, problem{ErrModified, 20, ""}},
		{"checkpoint file: the byte of another record", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{20, offsetOf(t, path, 19), recs[19].Hash}), 0o600)
		}, problem{ErrModified, 20, ""}, problem{ErrModified, 20, ""}},
		{"checkpoint file: another hash", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{20, offsetOf(t, path, 20), recs[18].Hash}), 0o600)
		}, problem{ErrModified, 20, ""}, problem{ErrModified, 20, ""}},
		{"checkpoint file: past the log", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{40, 1 << 20, recs[19].Hash}), 0o600)
		}, problem{ErrModified, 0, "head"}, problem{ErrModified, 0, "head"}},
		{"checkpoint file: not as Zero writes it", func(t *testing.T, path string, _ []Record) {
			b, _ := os.ReadFile(path + ".checkpoint")
			os.WriteFile(path+".checkpoint", append([]byte(" "), b...), 0o600)
		}, problem{ErrModified, 0, "checkpoint"}, problem{ErrModified, 0, "checkpoint"}},
		{"checkpoint file: no record", func(t *testing.T, path string, _ []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{0, 0, ""}), 0o600)
		}, problem{ErrModified, 0, "checkpoint"}, problem{ErrModified, 0, "checkpoint"}},
		{"checkpoint file: a negative byte", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".checkpoint", appendCheckpoint(nil, checkpoint{20, -1, recs[19].Hash}), 0o600)
		}, problem{ErrModified, 0, "checkpoint"}, problem{ErrModified, 0, "checkpoint"}},
		{"an older head", func(t *testing.T, path string, recs []Record) {
			os.WriteFile(path+".head", appendHead(nil, 10, recs[9].Hash), 0o600)
		}, problem{ErrModified, 0, "head"}, problem{ErrModified, 0, "head"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, recs := checkpointed(t)
			c.tamper(t, path, recs)
			l, err := Open(path)
			if err == nil {
				l.Close()
				t.Fatal("Open accepted the log")
			}
			if diff := cmp.Diff(c.open, problemOf(t, err), errorsAs); diff != "" {
				t.Errorf("Open: %v\n(-want +got):\n%s", err, diff)
			}
			_, verr := Verify(path)
			if diff := cmp.Diff(c.verify, problemOf(t, verr), errorsAs); diff != "" {
				t.Errorf("Verify: %v\n(-want +got):\n%s", verr, diff)
			}
			if _, rerr := ReadAll(path); rerr == nil || rerr.Error() != verr.Error() {
				t.Errorf("ReadAll: %v; want %v", rerr, verr)
			}
		})
	}
}

// TestCheckpointErrors: what a start says, for a person.
func TestCheckpointErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, path string)
		want   string
	}{
		{"a record before it lengthened", func(t *testing.T, path string) {
			lines := readLines(t, path)
			lines[4] = strings.Replace(lines[4], `"srv_5"`, `"srv_5x"`, 1)
			writeLines(t, path, lines)
		}, "record 20 (line 20) modified: the checkpoint file names this record at byte %d, which does not start a line: the records before it were changed"},
		{"the log cut", func(t *testing.T, path string) {
			writeLines(t, path, readLines(t, path)[:15])
		}, "record 20 (line 20) removed: the log ends before byte %d, where the checkpoint file says this record starts: records were removed from the end"},
		{"an older head", func(t *testing.T, path string) {
			os.WriteFile(path+".head", appendHead(nil, 10, "sha256:00"), 0o600)
		}, "head file modified: it names record 10, before record 20, which the checkpoint file names, though a head is always written first: the head was replaced with an older one, or the checkpoint file was edited"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, _ := checkpointed(t)
			want := "audit log " + path + ": " + c.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, offsetOf(t, path, 20))
			}
			c.tamper(t, path)
			if l, err := Open(path); err == nil || err.Error() != want {
				if l != nil {
					l.Close()
				}
				t.Errorf("Open error:\n%v\nwant:\n%s", err, want)
			}
		})
	}
}

// TestOpenReadsFromCheckpoint: a start reads the log from the checkpoint's
// record on, and nothing before it; Verify reads all of it.
func TestOpenReadsFromCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	grow(t, path, 100, 1000) // the checkpoint moves to record 1000
	recs := grow(t, path, 1000, 50)
	size := fileSize(t, path)
	cpAt := offsetOf(t, path, 1000)
	l := openEvery(t, path, 1000)
	// One byte before the checkpoint's record (the newline that ends the
	// line before) and every byte from there on.
	if got, want := l.opened.read, size-cpAt+1; l.opened.checked != 51 || got != want {
		t.Errorf("Open read %d records and %d bytes, want 51 and %d", l.opened.checked, got, want)
	}
	if last := recs[49]; l.seq != last.Seq || l.hash != last.Hash || l.end != size {
		t.Errorf("Open ends at record %d (%s), byte %d; want %d (%s), %d", l.seq, l.hash, l.end, last.Seq, last.Hash, size)
	}
	l.Close()

	st, err := verify(path, false, nil)
	if err != nil || st.checked != 1050 || st.read != size {
		t.Errorf("verify read %d records and %d bytes (%v), want 1050 and %d", st.checked, st.read, err, size)
	}
	if diff := cmp.Diff(Report{Records: 1050, Head: 1050, Checkpoint: 1000}, inspect(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOpenDoesNotReadBeforeCheckpoint: a record before the checkpoint's,
// changed in place with its line's length kept, is not found by a start,
// which does not read it, but is by Verify, and by a start once the
// checkpoint file is removed.
func TestOpenDoesNotReadBeforeCheckpoint(t *testing.T) {
	path, _ := checkpointed(t)
	lines := readLines(t, path)
	lines[4] = strings.Replace(lines[4], `"srv_5"`, `"srv_X"`, 1)
	writeLines(t, path, lines)

	l, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if l.opened.checked != 11 {
		t.Errorf("Open read %d records, want the checkpoint's and the 10 after it", l.opened.checked)
	}
	l.Close()
	if _, err := Verify(path); !errors.Is(err, ErrModified) || problemOf(t, err).Seq != 5 {
		t.Errorf("Verify: %v, want record 5 modified", err)
	}
	os.Remove(path + ".checkpoint")
	if l, err := Open(path); !errors.Is(err, ErrModified) || problemOf(t, err).Seq != 5 {
		if l != nil {
			l.Close()
		}
		t.Errorf("Open without the checkpoint file: %v, want record 5 modified", err)
	}
}

// TestCheckpointRemoved: without its checkpoint file a start reads the
// whole log, as before checkpoints, and writes one naming the last record
// when it read CheckpointEvery records or more.
func TestCheckpointRemoved(t *testing.T) {
	path, recs := checkpointed(t)
	os.Remove(path + ".checkpoint")
	l := openEvery(t, path, 100)
	if l.opened.checked != 30 || l.opened.read != fileSize(t, path) {
		t.Errorf("Open read %d records and %d bytes, want all 30", l.opened.checked, l.opened.read)
	}
	l.Close()
	if _, err := os.Stat(path + ".checkpoint"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a checkpoint after reading 30 records, with one every 100: %v", err)
	}

	l = openEvery(t, path, 30)
	l.Close()
	want := checkpoint{30, offsetOf(t, path, 30), recs[29].Hash}
	if cp, err := readCheckpoint(path); err != nil || cp != want {
		t.Errorf("checkpoint %+v, %v; want %+v", cp, err, want)
	}
	l = openEvery(t, path, 30)
	if l.opened.checked != 1 {
		t.Errorf("the next Open read %d records, want 1", l.opened.checked)
	}
}

// TestCheckpointMovesWhileOpen: the writer moves the checkpoint forward
// as records are flushed, once it is `every` records behind, after
// reading them back; the chain's first checkpoint is moved from the start,
// and Close moves it when it is due.
func TestCheckpointMovesWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openEvery(t, path, 10)
	var want checkpoint
	for i, c := range []struct {
		appends int
		moved   bool
	}{{9, false}, {1, true}, {5, false}, {4, false}, {1, true}, {12, true}} {
		for range c.appends {
			if _, err := l.AppendBatched(Event{Action: "tool.call"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		l.moves.Wait() // no flush is under way
		if c.moved {
			want = checkpoint{l.seq, l.at, l.hash}
		}
		got, err := readCheckpoint(path)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil || got != want || l.cp != want {
			t.Errorf("step %d: checkpoint file %+v (%v), the Log's %+v; want %+v", i, got, err, l.cp, want)
		}
	}
	if want.seq != 32 || want.offset != offsetOf(t, path, 32) {
		t.Errorf("last checkpoint %+v", want)
	}
	// Close moves it when it is due, without a flush to start the move.
	batched(t, l, 10, "tool.call")
	want = checkpoint{l.seq, l.at, l.hash}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := readCheckpoint(path); err != nil || got != want || want.seq != 42 {
		t.Errorf("after Close: checkpoint file %+v (%v), want record 42: %+v", got, err, want)
	}
}

// TestCheckpointMoveReadsFile: the writer moves the checkpoint over the
// records Open read and those it wrote since, once it has read them back
// from the file; a record among them changed in the file while the log is
// open, its length kept, stops the move, and the next start finds it.
func TestCheckpointMoveReadsFile(t *testing.T) {
	for _, c := range []struct {
		name     string
		line     int // the line changed, or 0
		from, to string
	}{
		{"nothing changed", 0, "", ""},
		{"a record Open read", 25, `"srv_25"`, `"srv_2x"`},
		{"a record written since", 31, `"server:1"`, `"server:2"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, _ := checkpointed(t) // 30 records, the checkpoint at 20
			l := openEvery(t, path, 15)
			for range 2 {
				if _, err := l.Append(Event{Action: "server.approve", Target: "server:1"}); err != nil {
					t.Fatal(err)
				}
			}
			if c.line > 0 {
				lines := readLines(t, path)
				lines[c.line-1] = strings.Replace(lines[c.line-1], c.from, c.to, 1)
				writeLines(t, path, lines) // same length: the offsets still hold
			}
			batched(t, l, 3, "tool.call")
			want := checkpoint{l.seq, l.at, l.hash} // record 35, 15 after the checkpoint
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			cp, err := readCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.line == 0 {
				if l.stuck != nil || cp != want {
					t.Errorf("checkpoint %+v (%v), want %+v", cp, l.stuck, want)
				}
				return
			}
			if l.stuck == nil || !strings.Contains(l.stuck.Error(), "the log was changed while open") || cp.seq != 20 {
				t.Errorf("moving the checkpoint: %v; checkpoint %+v; want the log changed, the checkpoint at 20", l.stuck, cp)
			}
			if l, err := Open(path); !errors.Is(err, ErrModified) || problemOf(t, err).Seq != uint64(c.line) {
				if l != nil {
					l.Close()
				}
				t.Errorf("Open: %v, want record %d modified", err, c.line)
			}
		})
	}
}

// TestCheckpointAfterCrash: a crash leaves records after the head's; a
// start reads them from the checkpoint on, adopts them, and moves the
// checkpoint to the last when they are enough.
func TestCheckpointAfterCrash(t *testing.T) {
	path, _ := checkpointed(t)
	l := openEvery(t, path, 1000)
	recs := batched(t, l, 12, "tool.call")
	crashed := crashCopy(t, path)
	if b, err := os.ReadFile(path + ".checkpoint"); err != nil || os.WriteFile(crashed+".checkpoint", b, 0o600) != nil {
		t.Fatal(err)
	}
	l.Close()
	if diff := cmp.Diff(Report{Records: 42, Head: 30, Beyond: 12, Checkpoint: 20}, inspect(t, crashed)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	l = openEvery(t, crashed, 20)
	if l.opened.checked != 23 {
		t.Errorf("Open read %d records, want 23", l.opened.checked)
	}
	l.Close()
	if diff := cmp.Diff(Report{Records: 42, Head: 42, Checkpoint: 42}, inspect(t, crashed)); diff != "" {
		t.Errorf("after Open (-want +got):\n%s", diff)
	}
	if cp, _ := readCheckpoint(crashed); cp.hash != recs[11].Hash {
		t.Errorf("checkpoint %+v, want record 42's hash %s", cp, recs[11].Hash)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
