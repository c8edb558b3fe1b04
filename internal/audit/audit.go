// Package audit owns Zero's audit trail: an append-only log of who did what,
// shared by the workspace and Agent Zero, kept apart from operational logs.
//
// A log is a JSONL file, one [Record] a line. Each record carries a sequence
// number, the time (UTC), the [Event], the hash of the record before it
// (Prev) and its own hash: the SHA-256 of a frozen encoding of every other
// field. Records therefore form a hash chain, and a head file next to the log
// (the log's path plus ".head") holds the sequence number and hash of the
// last record synced, replaced atomically when the log is synced. [Verify]
// walks the chain and compares it with the head, so it detects a record that
// was modified, removed (from the middle, or from the end up to the head's
// record), reordered or inserted, and a last line cut short that the head
// says was synced, and names the first bad record.
//
// A checkpoint file beside them (the log's path plus ".checkpoint") names
// a record whose place and hash were checked with every record before it,
// by the byte its line starts at. [Open] reads the log from there on,
// not from the start, so that opening a log costs the records since the
// checkpoint (at most about [CheckpointEvery]), not all of them; [Verify]
// and [Inspect] still read every record, and check the checkpoint too. A
// record before the checkpoint's changed in place, its line's length kept,
// is therefore found by Verify, not by Open (see [Open]).
//
// [Log.Append] syncs the log and replaces the head before it returns.
// [Log.AppendBatched], for records that come too often for that (a tool
// call each), writes its record at once, in the same chain, and leaves the
// sync and the head to a group commit at most [FlushInterval] later. A
// crash may therefore lose the records of the last interval, or leave them
// after the head's record, chained from it; [Verify] accepts and reports
// such records, and [Open] adopts them (see [Inspect]).
//
// This is tamper-evident, not tamper-proof. The chain is not signed or
// keyed: anyone who can rewrite both the log and its head file can forge a
// consistent log, and anyone who can append to both can add records that
// verify. Records after the head's are guarded by the chain alone: anyone
// who can write the log can add ones that verify, or remove them, and
// [Inspect] reports them apart for that reason. It catches accidents,
// partial edits and deletions, and it tells an honest reader when the file
// is not what Zero wrote; guarding the files themselves (permissions, copies
// shipped elsewhere) is the operator's part.
//
// The record encoding, the JSON line, the head file and the checkpoint file
// are frozen formats with golden tests: changing one is a breaking change,
// since every existing log would stop verifying.
package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is what happened: who did what to which thing.
type Event struct {
	Actor       string            `json:"actor"`            // "user:owner", "token:abc", "agent:run-12"
	Action      string            `json:"action"`           // "server.create", "skill.install"
	Target      string            `json:"target"`           // what was acted on, such as a server ID
	Fingerprint string            `json:"fingerprint"`      // the approval fingerprint involved, if any
	Detail      map[string]string `json:"detail,omitempty"` // more context; never secret values
}

// Record is one line of the log: an [Event] with its place in the chain.
type Record struct {
	Seq  uint64    `json:"seq"`  // 1 for the first record, then one more for each
	Time time.Time `json:"time"` // when it was appended, in UTC
	Event
	Prev string `json:"prev"` // the Hash of the record before, "" for the first
	Hash string `json:"hash"` // "sha256:" and the hex SHA-256 of the record's encoding
}

// FlushInterval bounds how long a record from [Log.AppendBatched] stays
// unsynced: the flush that syncs the log and replaces its head starts at most
// this long after the first record that is not yet synced (or, if a flush is
// under way then, as soon as it ends). At 50 ms a crash loses at most a
// twentieth of a second of batched records (about 50 tool calls at 1000 a
// second), while the flush, three fsyncs (the log, the new head, the
// directory), runs at most 20 times a second off the callers' path, a load
// any disk carries; a longer interval would save little and lose more.
const FlushInterval = 50 * time.Millisecond

// ErrClosed is returned by [Log.Append] and [Log.AppendBatched] after
// [Log.Close].
var ErrClosed = errors.New("audit log closed")

// Log appends records to one log file. It is safe for concurrent use. Only
// one Log may have a file open at a time; a second [Open], from this process
// or another, fails while the first is open.
//
// Records are written to the file in the order they are appended, by
// [Log.Append] and [Log.AppendBatched] alike, and that order is the chain's.
// What differs is when they are synced: Append syncs the log and replaces
// the head before it returns, AppendBatched leaves both to a flush at most
// [FlushInterval] later, to the next Append or [Log.Flush], or to
// [Log.Close], whichever comes first.
type Log struct {
	flushMu sync.Mutex // held while syncing the log and replacing the head; taken before mu
	mu      sync.Mutex // held while writing a record and reading or changing the fields below
	path    string
	f       *os.File
	seq     uint64      // of the last record written
	hash    string      // of the last record written
	at      int64       // the byte the last record written starts at
	end     int64       // the bytes of the records written: where the next one starts
	headSeq uint64      // of the record the head file names: the last one known to be synced
	timer   *time.Timer // the flush pending for batched records, or nil
	err     error       // set when a write or sync failed; the log takes no more records
	now     func() time.Time
	wait    time.Duration // FlushInterval, but in tests
	table   *Table        // the chain's table, for a Log OpenInTable opened; then the fields above are unused

	cp      checkpoint     // the checkpoint file's; none (seq 0) before the first
	every   uint64         // CheckpointEvery, but in tests
	sum     hash.Hash      // SHA-256 of the lines from sumFrom on: read and checked by Open, or written
	sumFrom int64          // the end of the checkpoint's line (or of the record a move under way moves it to)
	moving  bool           // a goroutine is moving the checkpoint forward
	stuck   error          // why moving the checkpoint failed: it is not tried again
	moves   sync.WaitGroup // the goroutine moving the checkpoint
	opened  state          // what Open read
}

// OpenInTable returns a Log whose records are in db's audit table (see
// [Table]), which the replicas of a workspace, or Agent Zero's workers,
// share: each append, batched or not, is committed before it returns, and
// takes at most TableAppendTimeout, whatever its caller's context.
func OpenInTable(ctx context.Context, db *sql.DB) (*Log, error) {
	t, err := OpenTable(ctx, db)
	if err != nil {
		return nil, err
	}
	return &Log{table: t}, nil
}

// TableAppendTimeout bounds one append to a table: a record is written
// even after the work it records was cancelled, never for longer than
// this.
const TableAppendTimeout = 30 * time.Second

// appendTable appends e to l's table.
func (l *Log) appendTable(e Event) (Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), TableAppendTimeout)
	defer cancel()
	return l.table.Append(ctx, e)
}

// Open opens the log at path for appending, creating it (mode 0600) and its
// head file if neither exists. An existing log is verified first and
// refused with the error [Inspect] would give if it does not verify.
//
// Open verifies what [Inspect] does, but from the checkpoint on, when the
// log has a checkpoint file: that the record the checkpoint names is
// where it says, a whole line right after the end of another, with the
// hash it says (recomputed from the record); that every record after it
// is whole and chains from it; and the head file, as Inspect does. The
// records before the checkpoint's are not read: a change to them that
// keeps the checkpoint's record at its byte (an edit that keeps a line's
// length) is found by Inspect, not by Open. Without a checkpoint file,
// Open reads the whole log. When it has read [CheckpointEvery] records or
// more, Open writes a checkpoint naming the last, so that the next Open
// starts there. While the log is open, the writer moves the checkpoint
// forward (see [CheckpointEvery]) once the file's bytes after it read back
// as the records Open checked and those written since. A checkpoint is
// never moved past a record that was not so checked, and one that does not
// match the log is an error, never passed over.
//
// A log that verifies may end past its head: records appended after the
// record the head names, which chain from it, and perhaps an incomplete
// last line after them. That is what a crash leaves when batched records
// were not yet flushed (or when an Append stopped between syncing its
// record and replacing the head). Open keeps those records, cuts off the
// incomplete line, syncs the log and names the last record in the head.
// An incomplete line that the head says was synced is not cut off: Open
// refuses the log with [ErrTruncated], and a person should look at it.
func Open(path string) (*Log, error) {
	return open(path, CheckpointEvery)
}

// open is Open with a checkpoint every so many records.
func open(path string, every uint64) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open audit log %s: in use by another writer: %w", path, err)
	}
	l := &Log{path: path, f: f, now: time.Now, wait: FlushInterval, every: every, sum: sha256.New()}
	st, err := verify(path, true, nil)
	l.opened = st
	if errors.Is(err, errNoHead) {
		// A new log, or one whose creation stopped before the head was
		// written: an empty log needs nothing more than its head.
		err = l.writeHead(0, "")
	} else if err == nil {
		l.seq, l.hash, l.at, l.end, l.cp = st.lastSeq, st.lastHash, st.lastAt, st.size, st.cp
		l.sum, l.sumFrom = st.sum, st.sumFrom
		err = l.finish(st)
		if err == nil && l.seq-l.cp.seq >= every {
			// Read and checked just now, and named in the head by finish.
			l.cp = checkpoint{l.seq, l.at, l.hash}
			l.sum, l.sumFrom = sha256.New(), l.end
			err = writeCheckpoint(path, l.cp)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	l.headSeq = l.seq
	return l, nil
}

// finish brings a log that ends past its head up to date: it cuts off an
// incomplete last line, syncs the records the head does not name (they may
// never have reached the disk) and then names the last of them in the head.
func (l *Log) finish(st state) error {
	if st.torn == 0 && st.beyond == 0 {
		return nil
	}
	if st.torn > 0 {
		if err := l.f.Truncate(st.size); err != nil {
			return fmt.Errorf("open audit log: cut off its incomplete last line: %w", err)
		}
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync audit log: %w", err)
	}
	return l.writeHead(l.seq, l.hash)
}

// Append adds a record for e to the log and returns it. The record, and
// every record appended before it, is synced to disk, and the head file
// replaced, before Append returns. Strings that are not valid UTF-8 are
// stored with U+FFFD in place of the bad bytes, so the record always reads
// back as it was hashed.
func (l *Log) Append(e Event) (Record, error) {
	if l.table != nil {
		return l.appendTable(e)
	}
	r, err := l.write(e, false)
	if err != nil {
		return Record{}, err
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if err := l.flush(r.Seq); err != nil {
		return Record{}, err
	}
	return r, nil
}

// AppendBatched adds a record for e to the log, as [Log.Append] does, and
// returns it once it is written, before it is synced: the log is synced
// and the head replaced by a flush that starts at most [FlushInterval]
// later. Until then a crash of the machine may lose the record, and a crash
// of the process leaves it past the head, where [Open] and [Inspect] accept
// it. A write or sync that fails in that flush makes every later call fail,
// as a failed Append does.
//
// Use it for records that come too often to sync one by one, such as tool
// calls; use Append for what must not be lost, such as an approval.
func (l *Log) AppendBatched(e Event) (Record, error) {
	if l.table != nil {
		return l.appendTable(e)
	}
	return l.write(e, true)
}

// Flush syncs every record appended so far and names the last in the head
// file, as Append does for its own record.
func (l *Log) Flush() error {
	if l.table != nil {
		return nil
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	seq := l.seq
	l.mu.Unlock()
	return l.flush(seq)
}

// write hashes a record for e into the chain and writes it to the file,
// not synced. A batched record starts the timer of the next flush, unless
// one is pending.
func (l *Log) write(e Event, batched bool) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Record{}, ErrClosed
	}
	if l.err != nil {
		return Record{}, l.poisoned()
	}
	r := Record{
		Seq:   l.seq + 1,
		Time:  l.now().UTC().Round(0),
		Event: cleanEvent(e),
		Prev:  l.hash,
	}
	r.Hash = hashRecord(r)
	line := appendLine(nil, r)
	if _, err := l.f.Write(line); err != nil {
		l.err = fmt.Errorf("append to audit log: %w", err)
		return Record{}, l.err
	}
	l.seq, l.hash, l.at = r.Seq, r.Hash, l.end
	l.end += int64(len(line))
	l.sum.Write(line)
	if batched && l.timer == nil {
		l.timer = time.AfterFunc(l.wait, l.flushPending)
	}
	return r, nil
}

// flushPending is the timer's flush of batched records. An error is kept
// in l.err, where the next append reports it.
func (l *Log) flushPending() {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	seq := l.seq
	l.mu.Unlock()
	l.flush(seq)
}

// flush makes sure that the records up to seq are synced and named in the
// head: unless a flush since they were written did it already, it syncs
// the log, with every record written so far, and replaces the head, without
// holding mu, so that appends go on meanwhile. Then it starts moving the
// checkpoint forward to the last of those records, if that is due. The
// caller holds flushMu, which keeps flushes one at a time and the file open.
func (l *Log) flush(seq uint64) error {
	l.mu.Lock()
	switch {
	case l.headSeq >= seq: // on disk, whatever failed since
		l.mu.Unlock()
		return nil
	case l.f == nil:
		l.mu.Unlock()
		return ErrClosed
	case l.err != nil:
		err := l.poisoned()
		l.mu.Unlock()
		return err
	}
	if l.timer != nil { // this flush covers the records it was set for
		l.timer.Stop()
		l.timer = nil
	}
	f, seq, hash := l.f, l.seq, l.hash
	m := l.nextMove(checkpoint{l.seq, l.at, l.hash}, l.end)
	l.mu.Unlock()

	err := f.Sync()
	if err != nil {
		err = fmt.Errorf("sync audit log: %w", err)
	} else {
		err = l.writeHead(seq, hash)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// The records past the head may or may not be on disk, and a sync
		// that failed once is not to be retried (the kernel may have
		// dropped the pages it could not write): take no more.
		l.err = err
		if m != nil {
			l.moving = false
		}
		return err
	}
	l.headSeq = seq
	if m != nil {
		l.moves.Go(func() {
			err := m.run(l.path)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.done(m, err)
		})
	}
	return nil
}

// poisoned is the error of an append or flush after l.err was set. The
// caller holds mu.
func (l *Log) poisoned() error {
	return fmt.Errorf("audit log %s: an earlier write or sync failed, so records after %d may not be on disk; reopen the log: %w", l.path, l.headSeq, l.err)
}

// ReadAll verifies the log and returns its records, as the function
// [ReadAll] does, without racing this Log's appends. Records appended in a
// batch and not yet flushed are among them.
func (l *Log) ReadAll() ([]Record, error) {
	if l.table != nil {
		return ReadTable(context.Background(), l.table.db)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return ReadAll(l.path)
}

// Verify checks the log, as the function [Verify] does for a file and
// [VerifyTable] for a table.
func (l *Log) Verify() error {
	if l.table != nil {
		_, err := VerifyTable(context.Background(), l.table.db)
		return err
	}
	_, err := Verify(l.path)
	return err
}

// Close flushes the log, as [Log.Flush] does, moves the checkpoint to the
// last record if it is due (see [CheckpointEvery]), and closes the log.
// Appending after Close returns [ErrClosed]. Close reports a flush that
// fails, now or earlier in the background, since records may then be
// missing.
func (l *Log) Close() error {
	if l.table != nil {
		return nil
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.moves.Wait() // none starts without flushMu
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	var err error
	if l.err == nil && l.seq > l.headSeq {
		// Synced while holding mu: the log is closing, nothing may append.
		if err = l.f.Sync(); err != nil {
			err = fmt.Errorf("sync audit log: %w", err)
		} else if err = l.writeHead(l.seq, l.hash); err == nil {
			l.headSeq = l.seq
		}
		if err != nil {
			l.err = err
		}
	} else if l.err != nil && l.seq > l.headSeq {
		err = l.poisoned()
	}
	if err == nil && l.err == nil {
		// The move a flush would start, made now, so that the next start
		// reads fewer records than l.every.
		if m := l.nextMove(checkpoint{l.seq, l.at, l.hash}, l.end); m != nil {
			l.done(m, m.run(l.path))
		}
	}
	cerr := l.f.Close()
	l.f = nil
	return errors.Join(err, cerr)
}

// writeHead replaces the head file with one naming record seq, whose hash
// is hash.
func (l *Log) writeHead(seq uint64, hash string) error {
	if err := replaceFile(l.path+".head", appendHead(nil, seq, hash)); err != nil {
		return fmt.Errorf("write audit head: %w", err)
	}
	return nil
}

// replaceFile replaces the file at path with one holding data (mode 0600):
// a temporary file in the same directory, synced, renamed over it, and the
// directory synced.
func replaceFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// cleanEvent copies e with every string made valid UTF-8 and an empty
// Detail made nil.
func cleanEvent(e Event) Event {
	fix := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	out := Event{Actor: fix(e.Actor), Action: fix(e.Action), Target: fix(e.Target), Fingerprint: fix(e.Fingerprint)}
	if len(e.Detail) > 0 {
		out.Detail = make(map[string]string, len(e.Detail))
		// In key order, so that two keys that clean to the same key keep
		// the same value every time.
		for _, k := range slices.Sorted(maps.Keys(e.Detail)) {
			out.Detail[fix(k)] = fix(e.Detail[k])
		}
	}
	return out
}

// recordVersion is the first line of the encoding a record's hash covers.
const recordVersion = "zero-audit-record-v1\n"

// encodeRecord returns the frozen encoding of every field of r but Hash:
//
//	zero-audit-record-v1
//	seq <decimal>
//	time <len>:<RFC 3339 time in UTC, nanoseconds without trailing zeros>
//	actor <len>:<Actor>
//	action <len>:<Action>
//	target <len>:<Target>
//	fingerprint <len>:<Fingerprint>
//	detail <count>
//	<len>:<key>             then the value, one pair per entry,
//	<len>:<value>           sorted by the bytes of the key
//	prev <len>:<Prev>
//
// Every line ends in "\n" and <len> is a decimal count of bytes.
func encodeRecord(r Record) []byte {
	b := make([]byte, 0, 256)
	b = append(b, recordVersion...)
	b = append(b, "seq "...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, '\n')
	b = appendField(b, "time", formatTime(r.Time))
	b = appendField(b, "actor", r.Actor)
	b = appendField(b, "action", r.Action)
	b = appendField(b, "target", r.Target)
	b = appendField(b, "fingerprint", r.Fingerprint)
	keys := slices.Sorted(maps.Keys(r.Detail))
	b = append(b, "detail "...)
	b = strconv.AppendInt(b, int64(len(keys)), 10)
	b = append(b, '\n')
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, r.Detail[k])
	}
	b = appendField(b, "prev", r.Prev)
	return b
}

func hashRecord(r Record) string {
	sum := sha256.Sum256(encodeRecord(r))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ' ')
	return appendString(b, value)
}

func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, '\n')
}

// appendLine appends r as one line of the log, ending in "\n":
//
//	{"seq":1,"time":"...","actor":"...","action":"...","target":"...","fingerprint":"...","detail":{...},"prev":"...","hash":"..."}
//
// Every member is always written, in this order; detail members are sorted
// by key; strings are escaped as [appendJSONString] says.
func appendLine(b []byte, r Record) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, `,"time":`...)
	b = appendJSONString(b, formatTime(r.Time))
	for _, m := range []struct{ name, value string }{
		{"actor", r.Actor}, {"action", r.Action}, {"target", r.Target}, {"fingerprint", r.Fingerprint},
	} {
		b = append(b, `,"`...)
		b = append(b, m.name...)
		b = append(b, `":`...)
		b = appendJSONString(b, m.value)
	}
	b = append(b, `,"detail":{`...)
	for i, k := range slices.Sorted(maps.Keys(r.Detail)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, r.Detail[k])
	}
	b = append(b, `},"prev":`...)
	b = appendJSONString(b, r.Prev)
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, r.Hash)
	return append(b, "}\n"...)
}

// appendHead appends the head file's one line:
//
//	{"seq":12,"hash":"sha256:..."}
func appendHead(b []byte, seq uint64, hash string) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, hash)
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string with the fewest escapes: '"',
// '\\' and U+0000 to U+001F (as \b, \f, \n, \r, \t or \u00xx); everything
// else, HTML characters and U+2028 included, is written as it is. s is valid
// UTF-8.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// isCanonicalLine reports whether line (without its "\n") is exactly how
// appendLine writes r.
func isCanonicalLine(line []byte, r Record) bool {
	want := appendLine(nil, r)
	return bytes.Equal(line, want[:len(want)-1])
}
