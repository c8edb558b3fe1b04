package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
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

// VerifyError reports the first bad record of a log, or a bad file beside
// it.
type VerifyError struct {
	Path   string
	Seq    uint64 // the sequence number that belongs at Line
	Line   int    // the line, from 1; for records removed from the end, the line after the last; 0 when File is bad
	File   string // when Line is 0: the file beside the log that is bad itself, "head" or "checkpoint"
	Kind   error  // ErrModified, ErrRemoved, ErrReordered, ErrInserted or ErrTruncated
	Reason string // what was found
}

func (e *VerifyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("audit log %s: %s file %v: %s", e.Path, e.File, e.Kind, e.Reason)
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

	Checkpoint uint64 // the record the checkpoint file names, in its place; 0 for no checkpoint file
}

// String says what r found, for a person: "5 records, chain and head
// intact", or what lies past the head, and where the checkpoint is.
func (r Report) String() string {
	cp := ""
	if r.Checkpoint > 0 {
		cp = fmt.Sprintf("; the checkpoint (record %d) is in place", r.Checkpoint)
	}
	if r.Beyond == 0 && r.Torn == 0 {
		return fmt.Sprintf("%d records, chain and head intact%s", r.Records, cp)
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
	return s + cp
}

// Inspect checks the log at path and reports what it holds. It checks that
// every line is a record exactly as [Log.Append] writes it, that every
// record's hash matches its contents, that sequence numbers run 1, 2, 3...
// with each Prev the Hash of the record before, and that the head file
// names a record of the log, with that record's hash. It reads the whole
// log, whatever the checkpoint file says, and checks that file too: that
// it names a record of the log, with that record's hash, at the byte where
// that record's line starts.
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
// ([ErrModified]), and the same of the checkpoint file. Inspect reads the files as they are: records appended
// while it reads may be missed, and a line being written may read as
// incomplete. Read a log that a [Log] in this process is appending to with
// [Log.ReadAll].
func Inspect(path string) (Report, error) {
	st, err := verify(path, false, nil)
	if errors.Is(err, errNoHead) {
		err = nil // an empty log: nothing to protect yet
	}
	if err != nil {
		return Report{Records: st.records}, err
	}
	return Report{Records: st.records, Head: st.headSeq, Beyond: st.beyond, Torn: st.torn, Checkpoint: st.cp.seq}, nil
}

// ReadAll verifies the log at path, as [Inspect] does, and returns its
// records, those past the head included. If the log does not verify, it
// returns the error with the records before the first bad one (when the head
// file itself is bad or missing, every record whose chain checks out).
func ReadAll(path string) ([]Record, error) {
	var out []Record
	_, err := verify(path, false, func(r Record) { out = append(out, r) })
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
	records  int    // the records of the log, up to the last read
	lastSeq  uint64 // of the last record read
	lastHash string
	lastAt   int64  // the byte its line starts at
	size     int64  // the bytes of the records' lines: where the line after the last starts
	headSeq  uint64 // the record the head file names
	beyond   int    // the records after the head's
	torn     int    // the bytes of an incomplete line after the head's record
	cp       checkpoint
	sum      hash.Hash // with tail: SHA-256 of the lines read after the checkpoint's, torn line left out
	sumFrom  int64     // where they start: the end of the checkpoint's line

	// The work done: the records read and hashed, the bytes read from the file.
	checked int
	read    int64
}

// verify checks the log and its head and checkpoint files, calling visit
// for each record that checks out. From the start of the log, it checks
// every record, and that the checkpoint file, if any, names one of them,
// where it is. With tail, it starts at the record the checkpoint file names
// instead (from the start when there is none): it checks that that record is
// whole, at its byte, with its hash, and every record after it, as
// [Open] does.
func verify(path string, tail bool, visit func(Record)) (state, error) {
	var st state
	// The checkpoint first: a writer replaces the head before the
	// checkpoint that names its record, so the head read after it names
	// that record or a later one.
	cp, cpErr := readCheckpoint(path)
	if cpErr != nil && !errors.Is(cpErr, os.ErrNotExist) {
		return st, cpErr
	}
	hasCP := cpErr == nil
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
	badFile := func(file string, kind error, format string, args ...any) (state, error) {
		return st, &VerifyError{Path: path, File: file, Kind: kind, Reason: fmt.Sprintf(format, args...)}
	}
	if headErr == nil && head.seq < cp.seq {
		return badFile("head", ErrModified, "it names record %d, before record %d, which the checkpoint file names, though a head is always written first: the head was replaced with an older one, or the checkpoint file was edited", head.seq, cp.seq)
	}
	from := checkpoint{}
	if tail && hasCP {
		from = cp
	}
	var sum hash.Hash
	if tail {
		sum = sha256.New()
	}
	headHash := "" // the hash of the record the head names, once read
	st, err = walk(path, &countingReader{r: f}, from, sum, func(r Record, at int64) error {
		if hasCP && r.Seq == cp.seq {
			if r.Hash != cp.hash {
				return &VerifyError{Path: path, Seq: r.Seq, Line: int(r.Seq), Kind: ErrModified,
					Reason: fmt.Sprintf("its hash %s is not the one in the checkpoint file (%s): the records up to it were rewritten, or the checkpoint file was", r.Hash, cp.hash)}
			}
			if at != cp.offset {
				return &VerifyError{Path: path, Seq: r.Seq, Line: int(r.Seq), Kind: ErrModified,
					Reason: fmt.Sprintf("it starts at byte %d, not at byte %d as the checkpoint file says: the checkpoint file was edited", at, cp.offset)}
			}
		}
		if headErr == nil && r.Seq == head.seq {
			headHash = r.Hash
		}
		if visit != nil {
			visit(r)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	if hasCP {
		st.cp = cp
	}
	st.sum = sum

	// An incomplete last line is accepted only after the head's record,
	// where it is a write that was never synced; where the head says it
	// was synced, it is a record cut short.
	if st.torn > 0 && (headErr != nil || head.seq > st.lastSeq || cp.seq > st.lastSeq) {
		return bad(st.lastSeq+1, int(st.lastSeq+1), ErrTruncated, "the last line is incomplete (%d bytes, no newline)", st.torn)
	}
	end := int(st.lastSeq + 1) // the line after the last
	if hasCP && cp.seq > st.lastSeq {
		return bad(st.lastSeq+1, end, ErrRemoved, "the checkpoint file names record %d, but the log ends at record %d: %s removed from the end", cp.seq, st.lastSeq, span(st.lastSeq+1, cp.seq))
	}
	if errors.Is(headErr, os.ErrNotExist) {
		if st.records == 0 {
			return st, errNoHead
		}
		return badFile("head", ErrRemoved, "%s.head is missing, so records removed from the end would not show", path)
	}
	switch {
	case head.seq > st.lastSeq:
		return bad(st.lastSeq+1, end, ErrRemoved, "the head file names record %d, but the log ends at record %d: %s removed from the end", head.seq, st.lastSeq, span(st.lastSeq+1, head.seq))
	case head.seq == st.lastSeq && head.hash != st.lastHash:
		return bad(st.lastSeq, int(st.lastSeq), ErrModified, "its hash %s is not the one in the head file (%s): it was replaced", st.lastHash, head.hash)
	case head.seq == 0 && head.hash != "":
		return badFile("head", ErrModified, "it names no record, yet holds a hash (%s)", head.hash)
	case head.seq > 0 && headHash != head.hash:
		return bad(head.seq, int(head.seq), ErrModified, "its hash %s is not the one in the head file (%s): it was replaced", headHash, head.hash)
	}
	// The head names a record of the chain, and every record after it
	// chains from it: batched records not yet flushed.
	st.headSeq = head.seq
	st.beyond = int(st.lastSeq - head.seq)
	return st, nil
}

// walk reads the records of the log at path from src. From the start of
// the log when from names no record; otherwise from the byte from.offset,
// where record from.seq, hashing to from.hash, must start a line. It checks
// that every line is a record as [Log.Append] writes it, whose hash matches
// its contents, with the next sequence number and the hash of the record
// before as its prev, and calls each with the record and the byte its line
// starts at, and writes each line after from's to sum, if it is not nil. An
// error from each stops the walk. It stops at the end of src, counting the
// bytes of an incomplete last line in state.torn; the caller judges whether
// the log may end there.
//
// Line numbers are those a whole log has, record n on line n: from a
// checkpoint, the lines before it are not read.
func walk(path string, src *countingReader, from checkpoint, sum io.Writer, each func(Record, int64) error) (st state, err error) {
	defer func() { st.read = src.n }()
	bad := func(seq uint64, kind error, format string, args ...any) (state, error) {
		return st, &VerifyError{Path: path, Seq: seq, Line: int(seq), Kind: kind, Reason: fmt.Sprintf(format, args...)}
	}
	var rd *bufio.Reader
	if from.seq > 0 {
		// Read from the byte before the record, the end of the line before
		// it, unless it is the first.
		start := max(from.offset-1, 0)
		if _, err := src.r.Seek(start, io.SeekStart); err != nil {
			return st, fmt.Errorf("verify audit log: %w", err)
		}
		rd = bufio.NewReader(src)
		if start < from.offset {
			c, err := rd.ReadByte()
			switch {
			case err == io.EOF:
				return bad(from.seq, ErrRemoved, "the log ends before byte %d, where the checkpoint file says this record starts: records were removed from the end", from.offset)
			case err != nil:
				return st, fmt.Errorf("verify audit log: %w", err)
			case c != '\n':
				return bad(from.seq, ErrModified, "the checkpoint file names this record at byte %d, which does not start a line: the records before it were changed", from.offset)
			}
		}
		b, err := rd.ReadBytes('\n')
		switch {
		case err == io.EOF && len(b) == 0:
			return bad(from.seq, ErrRemoved, "the log ends before byte %d, where the checkpoint file says this record starts: records were removed from the end", from.offset)
		case err == io.EOF:
			return bad(from.seq, ErrTruncated, "it is cut short (%d bytes, no newline)", len(b))
		case err != nil:
			return st, fmt.Errorf("verify audit log: %w", err)
		}
		r, err := decodeLine(b[:len(b)-1])
		if err != nil {
			return bad(from.seq, ErrModified, "%v", err)
		}
		st.checked++
		if h := hashRecord(r); r.Hash != h {
			return bad(from.seq, ErrModified, "its hash %s does not match its contents (%s)", r.Hash, h)
		}
		if r.Seq != from.seq || r.Hash != from.hash {
			return bad(from.seq, ErrModified, "the checkpoint file names record %d with hash %s at byte %d, where record %d with hash %s is: the records before it were changed, or the checkpoint file was", from.seq, from.hash, from.offset, r.Seq, r.Hash)
		}
		if err := each(r, from.offset); err != nil {
			return st, err
		}
		st.records = int(r.Seq)
		st.lastSeq, st.lastHash, st.lastAt = r.Seq, r.Hash, from.offset
		st.size = from.offset + int64(len(b))
		st.sumFrom = st.size
	} else {
		rd = bufio.NewReader(src)
	}
	for {
		expect := st.lastSeq + 1
		line := int(expect)
		b, err := rd.ReadBytes('\n')
		if err == io.EOF {
			st.torn = len(b)
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("verify audit log: %w", err)
		}
		r, err := decodeLine(b[:len(b)-1])
		if err != nil {
			return bad(expect, ErrModified, "%v", err)
		}
		st.checked++
		if h := hashRecord(r); r.Hash != h {
			return bad(expect, ErrModified, "its hash %s does not match its contents (%s)", r.Hash, h)
		}
		switch {
		case r.Seq > expect:
			if at := findSeq(rd, expect, line); at > 0 {
				return bad(expect, ErrReordered, "line %d holds record %d, and record %d is at line %d", line, r.Seq, expect, at)
			}
			return bad(expect, ErrRemoved, "%s missing: line %d holds record %d", span(expect, r.Seq-1), line, r.Seq)
		case r.Seq < expect:
			return bad(expect, ErrInserted, "line %d holds record %d again (first at line %d): a record was inserted before it", line, r.Seq, r.Seq)
		case r.Prev != st.lastHash:
			if expect == 1 {
				return bad(expect, ErrModified, "the first record's prev is %q, not empty: records before it were removed, or it was forged", r.Prev)
			}
			return bad(expect, ErrModified, "its prev %s is not the hash of record %d (%s): record %d or this one was altered or replaced", r.Prev, expect-1, st.lastHash, expect-1)
		}
		if err := each(r, st.size); err != nil {
			return st, err
		}
		if sum != nil {
			sum.Write(b)
		}
		st.records++
		st.lastSeq, st.lastHash, st.lastAt = r.Seq, r.Hash, st.size
		st.size += int64(len(b))
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReadSeeker
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
	var h struct {
		Seq  uint64 `json:"seq"`
		Hash string `json:"hash"`
	}
	if err := readBeside(path, "head", &h, func() []byte { return appendHead(nil, h.Seq, h.Hash) }); err != nil {
		return head{}, err
	}
	return head{h.Seq, h.Hash}, nil
}

// readBeside reads the file beside the log at path (its path plus "." and
// file: "head" or "checkpoint") into v, a pointer to a struct of the
// file's members. A file that is not one JSON object of those members,
// exactly as encode writes v back, is a [*VerifyError].
func readBeside(path, file string, v any, encode func() []byte) error {
	name := path + "." + file
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read audit %s: %w", file, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || !bytes.Equal(b, encode()) {
		return &VerifyError{Path: path, File: file, Kind: ErrModified, Reason: strconv.Quote(name) + " is not as Zero writes it"}
	}
	return nil
}
