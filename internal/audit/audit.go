// Package audit owns Zero's audit trail: an append-only log of who did what,
// shared by the workspace and Agent Zero, kept apart from operational logs.
//
// A log is a JSONL file, one [Record] a line. Each record carries a sequence
// number, the time (UTC), the [Event], the hash of the record before it
// (Prev) and its own hash: the SHA-256 of a frozen encoding of every other
// field. Records therefore form a hash chain, and a head file next to the log
// (the log's path plus ".head") holds the sequence number and hash of the
// last record, replaced atomically after each append. [Verify] walks the
// chain and compares its end with the head, so it detects a record that was
// modified, removed (from the middle or from the end), reordered or inserted,
// and a last line that was cut short, and names the first bad record.
//
// This is tamper-evident, not tamper-proof. The chain is not signed or
// keyed: anyone who can rewrite both the log and its head file can forge a
// consistent log, and anyone who can append to both can add records that
// verify. It catches accidents, partial edits and deletions, and it tells an
// honest reader when the file is not what Zero wrote; guarding the files
// themselves (permissions, copies shipped elsewhere) is the operator's part.
//
// The record encoding, the JSON line and the head file are frozen formats
// with golden tests: changing one is a breaking change, since every existing
// log would stop verifying.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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

// ErrClosed is returned by [Log.Append] after [Log.Close].
var ErrClosed = errors.New("audit log closed")

// Log appends records to one log file. It is safe for concurrent use. Only
// one Log may have a file open at a time; a second [Open], from this process
// or another, fails while the first is open.
type Log struct {
	mu   sync.Mutex
	path string
	f    *os.File
	seq  uint64 // of the last record
	hash string // of the last record
	err  error  // set when a write failed part way; the log takes no more records
	now  func() time.Time
}

// Open opens the log at path for appending, creating it (mode 0600) and its
// head file if neither exists. An existing log is verified first, as
// [Verify] does, and refused with its error if it does not verify. That
// includes a last line cut short by a crash in the middle of an append: the
// record was never acknowledged, but Open does not cut it off on its own; a
// person should look at the log first.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open audit log %s: in use by another writer: %w", path, err)
	}
	l := &Log{path: path, f: f, now: time.Now}
	st, err := verify(path, nil)
	if errors.Is(err, errNoHead) {
		// A new log, or one whose creation stopped before the head was
		// written: an empty log needs nothing more than its head.
		err = l.writeHead()
	} else if err == nil {
		l.seq, l.hash = st.lastSeq, st.lastHash
		if st.headLag {
			// The last append stopped after its record was synced but before
			// the head was replaced: finish it.
			err = l.writeHead()
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Append adds a record for e to the log and returns it. The record is synced
// to disk, and the head file replaced, before Append returns. Strings that
// are not valid UTF-8 are stored with U+FFFD in place of the bad bytes, so
// the record always reads back as it was hashed.
func (l *Log) Append(e Event) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Record{}, ErrClosed
	}
	if l.err != nil {
		return Record{}, fmt.Errorf("audit log %s: an earlier append failed, reopen it: %w", l.path, l.err)
	}
	r := Record{
		Seq:   l.seq + 1,
		Time:  l.now().UTC().Round(0),
		Event: cleanEvent(e),
		Prev:  l.hash,
	}
	r.Hash = hashRecord(r)
	if _, err := l.f.Write(appendLine(nil, r)); err != nil {
		l.err = err
		return Record{}, fmt.Errorf("append to audit log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		l.err = err
		return Record{}, fmt.Errorf("sync audit log: %w", err)
	}
	l.seq, l.hash = r.Seq, r.Hash
	if err := l.writeHead(); err != nil {
		l.err = err
		return Record{}, err
	}
	return r, nil
}

// ReadAll verifies the log and returns its records, as the function
// [ReadAll] does, without racing this Log's appends.
func (l *Log) ReadAll() ([]Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ReadAll(l.path)
}

// Close closes the log. Appending after Close returns [ErrClosed].
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// writeHead replaces the head file with the log's current end: a temporary
// file in the same directory, synced, renamed over the head, and the
// directory synced.
func (l *Log) writeHead() error {
	headPath := l.path + ".head"
	dir := filepath.Dir(headPath)
	tmp, err := os.CreateTemp(dir, filepath.Base(headPath)+".tmp*")
	if err != nil {
		return fmt.Errorf("write audit head: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(appendHead(nil, l.seq, l.hash))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), headPath)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write audit head: %w", err)
	}
	return nil
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
