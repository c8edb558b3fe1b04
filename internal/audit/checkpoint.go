package audit

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"
)

// CheckpointEvery is how many records a checkpoint may fall behind the
// head before the writer moves it forward: at a flush that finds it so far
// behind, in the background, and at [Log.Close]. A start after a Close
// reads fewer records than that; after a crash, about that many, plus
// those written while a move was under way and those left unflushed. At
// about 9 µs a record, that is under 10 ms. A move costs the SHA-256 of
// those records' bytes, read back from the file (from the page cache),
// and a file replaced.
const CheckpointEvery = 1000

// A checkpoint is what the checkpoint file beside the log (its path plus
// ".checkpoint") says: record seq, whose hash is hash, starts at byte
// offset of the log, and the log up to it was checked whole: by a start
// that read it, or by the writer (see [move]).
//
// The file is one line, a frozen format:
//
//	{"seq":1000,"offset":254321,"hash":"sha256:..."}
//
// It names a record the head file names, or one before it: the head is
// replaced before the checkpoint that names its record.
type checkpoint struct {
	seq    uint64
	offset int64
	hash   string
}

// appendCheckpoint appends the checkpoint file's one line.
func appendCheckpoint(b []byte, c checkpoint) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, c.seq, 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, c.offset, 10)
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, c.hash)
	return append(b, "}\n"...)
}

// readCheckpoint reads the checkpoint file of the log at path. A file that
// is not exactly as Zero writes one, or names no record, is a
// [*VerifyError].
func readCheckpoint(path string) (checkpoint, error) {
	var c struct {
		Seq    uint64 `json:"seq"`
		Offset int64  `json:"offset"`
		Hash   string `json:"hash"`
	}
	if err := readBeside(path, "checkpoint", &c, func() []byte {
		return appendCheckpoint(nil, checkpoint{c.Seq, c.Offset, c.Hash})
	}); err != nil {
		return checkpoint{}, err
	}
	if c.Seq == 0 || c.Offset < 0 {
		return checkpoint{}, &VerifyError{Path: path, File: "checkpoint", Kind: ErrModified, Reason: "it names no record"}
	}
	return checkpoint{c.Seq, c.Offset, c.Hash}, nil
}

// A move moves the checkpoint forward to the record to, whose line ends at
// byte end, after checking that the log's bytes from byte from (the end of
// the checkpoint's line) to end are still those whose SHA-256 is sum: the
// lines of the records after the checkpoint's, as [Open] read and checked
// them or the writer wrote them since. Comparing digests costs a fraction
// of checking the records again (about 9 µs a record, more than appending
// one), and proves the same: that they are the records that were checked
// or written, and so chain from the checkpoint's.
type move struct {
	from, end int64
	sum       []byte
	to        checkpoint
}

// nextMove returns the move to last, whose line ends at end, if the
// checkpoint is due to move (at least l.every records behind, no move under
// way, none failed), or nil. It counts the move as under way until
// [Log.done], and starts the digest of the lines after last. The caller
// holds mu, and last is the last record written.
func (l *Log) nextMove(last checkpoint, end int64) *move {
	if l.moving || l.stuck != nil || last.seq-l.cp.seq < l.every {
		return nil
	}
	m := &move{from: l.sumFrom, end: end, sum: l.sum.Sum(nil), to: last}
	l.sum, l.sumFrom = sha256.New(), end
	l.moving = true
	return m
}

// run checks the log's bytes and writes the checkpoint.
func (m *move) run(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("move audit checkpoint: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, m.from, m.end-m.from)); err != nil {
		return fmt.Errorf("move audit checkpoint: %w", err)
	}
	if !bytes.Equal(h.Sum(nil), m.sum) {
		return fmt.Errorf("move audit checkpoint: bytes %d to %d of %s are not the records checked or written there: the log was changed while open", m.from, m.end, path)
	}
	return writeCheckpoint(path, m.to)
}

// done records how m ended: if it failed, the checkpoint stays where it
// is and is never moved again by this Log, since the file is not what it
// wrote; the next start, reading from the checkpoint, says where. The
// caller holds mu.
func (l *Log) done(m *move, err error) {
	l.moving = false
	if err != nil {
		l.stuck = err
		return
	}
	l.cp = m.to
}

// writeCheckpoint replaces the checkpoint file of the log at path with one
// naming c.
func writeCheckpoint(path string, c checkpoint) error {
	if err := replaceFile(path+".checkpoint", appendCheckpoint(nil, c)); err != nil {
		return fmt.Errorf("write audit checkpoint: %w", err)
	}
	return nil
}
