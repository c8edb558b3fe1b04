package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// What [Verify] found wrong. A [*VerifyError] wraps exactly one of them.
var (
	ErrModified  = errors.New("modified")  // a record's bytes are not what was hashed, or the chain or head disagrees with them
	ErrRemoved   = errors.New("removed")   // records are missing, from the middle or from the end, or the head file is
	ErrReordered = errors.New("reordered") // a record is somewhere other than its place
	ErrInserted  = errors.New("inserted")  // a record appears that was never appended in its place
	ErrTruncated = errors.New("truncated") // the last line was cut short
)

// VerifyError reports the first bad record of a log.
type VerifyError struct {
	Path   string
	Seq    uint64 // the sequence number that belongs at Line
	Line   int    // the line, from 1; for records removed from the end, the line after the last; 0 when the head file itself is bad
	Kind   error  // ErrModified, ErrRemoved, ErrReordered, ErrInserted or ErrTruncated
	Reason string // what was found
}

func (e *VerifyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("audit log %s: head file %v: %s", e.Path, e.Kind, e.Reason)
	}
	return fmt.Sprintf("audit log %s: record %d (line %d) %v: %s", e.Path, e.Seq, e.Line, e.Kind, e.Reason)
}

func (e *VerifyError) Unwrap() error { return e.Kind }

// errNoHead reports a log without records and without a head file, which
// Open treats as new.
var errNoHead = errors.New("no head file")

// Verify checks the log at path, as [Inspect] does, and returns how many
// records it holds, those past the head included.
func Verify(path string) (records int, err error) {
	rep, err := Inspect(path)
	return rep.Records, err
}

// Report is what [Inspect] found in a log that verifies.
type Report struct {
	Records int    // the records, those past the head included
	Head    uint64 // the sequence number of the record the head file names, 0 for none
	Beyond  int    // records after the head's, chained from it: written by batched appends and not yet flushed
	Torn    int    // bytes of an incomplete last line after the head's record: a write a crash cut short
}

// String says what r found, for a person: "5 records, chain and head
// intact", or what lies past the head.
func (r Report) String() string {
	if r.Beyond == 0 && r.Torn == 0 {
		return fmt.Sprintf("%d records, chain and head intact", r.Records)
	}
	s := fmt.Sprintf("%d records, chain intact; the head file names record %d", r.Records, r.Head)
	switch {
	case r.Beyond == 1:
		s += fmt.Sprintf(", and record %d after it chains from it", r.Head+1)
	case r.Beyond > 1:
		s += fmt.Sprintf(", and records %d to %d after it chain from it", r.Head+1, r.Head+uint64(r.Beyond))
	}
	if r.Beyond > 0 {
		s += ": written by batched appends, not yet flushed (the writer is running, or stopped before its flush)"
	}
	if r.Torn > 0 {
		s += fmt.Sprintf("; the last line is incomplete (%d bytes, no newline): a write a crash cut short before it was synced, which the next open of the log cuts off", r.Torn)
	}
	return s
}

// Inspect checks the log at path and reports what it holds. It checks that
// every line is a record exactly as [Log.Append] writes it, that every
// record's hash matches its contents, that sequence numbers run 1, 2, 3...
// with each Prev the Hash of the record before, and that the head file
// names a record of the log, with that record's hash.
//
// The head may name a record before the last. The records after it, each
// chained from the one before it back to the head's, are what
// [Log.AppendBatched] leaves until its flush, and what a crash leaves when
// it comes before the flush (or between an Append's sync and its head).
// Inspect accepts them and counts them in [Report.Beyond]; [Open] syncs
// them and names the last in the head. After them (or right after the
// head's record), an incomplete last line, without its newline, is a record
// whose write a crash cut short, never synced: Inspect accepts it and
// counts its bytes in [Report.Torn], and Open cuts it off. The head guards
// only the records up to its own: records after it can be removed, or
// appended by anyone who can write the log, without a trace, which is why
// they are reported apart.
//
// Anything else is an error: a [*VerifyError] naming the first bad record,
// its line and what is wrong, and wrapping [ErrModified], [ErrRemoved],
// [ErrReordered], [ErrInserted] or [ErrTruncated]. That includes a log
// that ends before the head's record ([ErrRemoved], or [ErrTruncated] when
// its last line is incomplete), and a head whose hash is not its record's
// ([ErrModified]). Inspect reads the files as they are: records appended
// while it reads may be missed, and a line being written may read as
// incomplete. Read a log that a [Log] in this process is appending to with
// [Log.ReadAll].
func Inspect(path string) (Report, error) {
	st, err := verify(path, nil)
	if errors.Is(err, errNoHead) {
		err = nil // an empty log: nothing to protect yet
	}
	if err != nil {
		return Report{Records: st.records}, err
	}
	return Report{Records: st.records, Head: st.headSeq, Beyond: st.beyond, Torn: st.torn}, nil
}

// ReadAll verifies the log at path, as [Inspect] does, and returns its
// records, those past the head included. If the log does not verify, it
// returns the error with the records before the first bad one (when the head
// file itself is bad or missing, every record whose chain checks out).
func ReadAll(path string) ([]Record, error) {
	var out []Record
	_, err := verify(path, func(r Record) { out = append(out, r) })
	if errors.Is(err, errNoHead) {
		err = nil
	}
	var ve *VerifyError
	if errors.As(err, &ve) && ve.Line > 0 {
		for len(out) > 0 && out[len(out)-1].Seq >= ve.Seq {
			out = out[:len(out)-1]
		}
	}
	return out, err
}

// state is what verify learned about a log.
type state struct {
	records  int
	lastSeq  uint64
	lastHash string
	size     int64  // the bytes of the records' lines
	headSeq  uint64 // the record the head file names
	beyond   int    // the records after the head's
	torn     int    // the bytes of an incomplete line after the head's record
}

// verify walks the log, calling visit for each record that checks out.
func verify(path string, visit func(Record)) (state, error) {
	var st state
	head, headErr := readHead(path)
	if headErr != nil && !errors.Is(headErr, os.ErrNotExist) {
		return st, headErr
	}
	f, err := os.Open(path)
	if err != nil {
		return st, fmt.Errorf("verify audit log: %w", err)
	}
	defer f.Close()

	bad := func(seq uint64, line int, kind error, format string, args ...any) (state, error) {
		return st, &VerifyError{Path: path, Seq: seq, Line: line, Kind: kind, Reason: fmt.Sprintf(format, args...)}
	}
	rd := bufio.NewReader(f)
	headHash := "" // the hash of the record the head names, once read
	torn := 0      // the line that is incomplete, if any
	for line := 1; ; line++ {
		expect := st.lastSeq + 1
		b, err := rd.ReadBytes('\n')
		if err == io.EOF {
			if len(b) > 0 {
				st.torn, torn = len(b), line
			}
			break
		}
		if err != nil {
			return st, fmt.Errorf("verify audit log: %w", err)
		}
		size := int64(len(b))
		b = b[:len(b)-1]
		r, err := decodeLine(b)
		if err != nil {
			return bad(expect, line, ErrModified, "%v", err)
		}
		if h := hashRecord(r); r.Hash != h {
			return bad(expect, line, ErrModified, "its hash %s does not match its contents (%s)", r.Hash, h)
		}
		switch {
		case r.Seq > expect:
			if at := findSeq(rd, expect, line); at > 0 {
				return bad(expect, line, ErrReordered, "line %d holds record %d, and record %d is at line %d", line, r.Seq, expect, at)
			}
			return bad(expect, line, ErrRemoved, "%s missing: line %d holds record %d", span(expect, r.Seq-1), line, r.Seq)
		case r.Seq < expect:
			return bad(expect, line, ErrInserted, "line %d holds record %d again (first at line %d): a record was inserted before it", line, r.Seq, r.Seq)
		case r.Prev != st.lastHash:
			if expect == 1 {
				return bad(expect, line, ErrModified, "the first record's prev is %q, not empty: records before it were removed, or it was forged", r.Prev)
			}
			return bad(expect, line, ErrModified, "its prev %s is not the hash of record %d (%s): record %d or this one was altered or replaced", r.Prev, expect-1, st.lastHash, expect-1)
		}
		if visit != nil {
			visit(r)
		}
		st.records++
		st.size += size
		st.lastSeq, st.lastHash = r.Seq, r.Hash
		if headErr == nil && r.Seq == head.seq {
			headHash = r.Hash
		}
	}

	// An incomplete last line is accepted only after the head's record,
	// where it is a write that was never synced; where the head says it
	// was synced, it is a record cut short.
	if st.torn > 0 && (headErr != nil || head.seq > st.lastSeq) {
		return bad(st.lastSeq+1, torn, ErrTruncated, "the last line is incomplete (%d bytes, no newline)", st.torn)
	}
	end := st.records + 1 // the line after the last
	if errors.Is(headErr, os.ErrNotExist) {
		if st.records == 0 {
			return st, errNoHead
		}
		return bad(0, 0, ErrRemoved, "%s.head is missing, so records removed from the end would not show", path)
	}
	switch {
	case head.seq > st.lastSeq:
		return bad(st.lastSeq+1, end, ErrRemoved, "the head file names record %d, but the log ends at record %d: %s removed from the end", head.seq, st.lastSeq, span(st.lastSeq+1, head.seq))
	case head.seq == st.lastSeq && head.hash != st.lastHash:
		return bad(st.lastSeq, st.records, ErrModified, "its hash %s is not the one in the head file (%s): it was replaced", st.lastHash, head.hash)
	case head.seq == 0 && head.hash != "":
		return bad(0, 0, ErrModified, "it names no record, yet holds a hash (%s)", head.hash)
	case head.seq > 0 && headHash != head.hash:
		return bad(head.seq, int(head.seq), ErrModified, "its hash %s is not the one in the head file (%s): it was replaced", headHash, head.hash)
	}
	// The head names a record of the chain, and every record after it
	// chains from it: batched records not yet flushed.
	st.headSeq = head.seq
	st.beyond = int(st.lastSeq - head.seq)
	return st, nil
}

// span names records a to b: "record 3 is" or "records 3 to 5 are".
func span(a, b uint64) string {
	if a == b {
		return fmt.Sprintf("record %d is", a)
	}
	return fmt.Sprintf("records %d to %d are", a, b)
}

// findSeq reads on from rd for a line holding record seq, and returns its
// line number, or 0. line is the number of the line last read.
func findSeq(rd *bufio.Reader, seq uint64, line int) int {
	for {
		b, err := rd.ReadBytes('\n')
		if len(b) == 0 {
			return 0
		}
		line++
		var r struct {
			Seq uint64 `json:"seq"`
		}
		if json.Unmarshal(bytes.TrimSuffix(b, []byte("\n")), &r) == nil && r.Seq == seq {
			return line
		}
		if err != nil {
			return 0
		}
	}
}

// decodeLine parses one line (without its "\n") and checks that it is
// exactly what appendLine writes for the record it holds, so that no byte of
// a line escapes the hash: not a reformatted time, an escape written another
// way, a repeated or unknown member.
func decodeLine(b []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("not a record: %v", err)
	}
	if len(r.Detail) == 0 {
		r.Detail = nil
	}
	if !isCanonicalLine(b, r) {
		return Record{}, errors.New("not written as Zero writes records: the line was edited")
	}
	return r, nil
}

// head is what the head file says.
type head struct {
	seq  uint64
	hash string
}

func readHead(path string) (head, error) {
	b, err := os.ReadFile(path + ".head")
	if err != nil {
		return head{}, fmt.Errorf("read audit head: %w", err)
	}
	var h struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || !bytes.Equal(b, appendHead(nil, h.Seq, h.Hash)) {
		return head{}, &VerifyError{Path: path, Kind: ErrModified, Reason: strconv.Quote(path+".head") + " is not as Zero writes it"}
	}
	return head{h.Seq, h.Hash}, nil
}
