// Package graphstore owns the memory server's knowledge graph on disk: a
// file in the reference memory server's JSONL format
// (@modelcontextprotocol/server-memory), which either server can read, and
// beside it a change log that makes each write cost the same however large
// the graph is.
//
// # Files
//
// For a graph at FILE the store uses these files, in FILE's directory:
//
//   - FILE, the main file, exactly in the reference's format (see format.go).
//     It is only ever replaced whole: a compaction writes the graph to a
//     temporary file (FILE.*.zero-tmp), syncs it, renames it over FILE and
//     syncs the directory.
//   - FILE.zero-log, the change log: the changes made since the main file was
//     last written, appended and synced one by one (see log.go). A
//     compaction empties it; Close removes it.
//   - FILE.lock, empty: processes of Zero that share FILE hold an advisory
//     lock (flock) on it, exclusive around each change, shared around each
//     read. It stays.
//
// Files the store creates are readable and writable by their owner only; a
// compaction keeps the permission bits of the main file it replaces.
//
// # Why a log
//
// The reference rewrites the whole file on every change, so a write costs
// time in proportion to the graph. Keeping the main file always current
// would cost the same, since the reference's format has no way to change
// one entity in place. So a change is appended to the log and synced (one
// write and one fdatasync, whatever the graph's size), and the log is
// compacted into the main file when it grows past half the main file's size
// and 1 MiB, and on Close. Compactions cost, amortized, a constant per byte
// written; the write that triggers one waits for it.
//
// The price is interoperability between compactions: the reference server
// reads only FILE, so until the next compaction (at the latest when Zero
// closes the store) it sees the graph as of the last one. Zero, the other
// way round, sees every change the reference makes, since it re-reads what
// changed on disk before every operation.
//
// # Sharing the file
//
// Before each operation the store checks, under the lock, whether the main
// file or the log changed on disk (identity, size and times), and reads what
// changed: new lines of the log, or everything when the main file was
// replaced. The log's first line names the SHA-256 of the main file it
// applies to, so when the reference server rewrites the main file the store
// can tell: it then replays the log's changes over the reference's file
// (creating what is missing, adding to and deleting from what exists), and
// compacts at the next write.
//
// The reference takes no lock. A change it makes from a graph it read
// before a compaction of Zero's, or while Zero renames a new main file into
// place, can overwrite the other's: the reference has the same race with a
// second copy of itself.
//
// # Failures
//
// A line that cannot be read fails the operation with a [*CorruptError]
// naming the file, line and byte offset, and nothing is written until it is
// fixed; [OpenEvenIfCorrupt] opens such a file all the same, for a server
// that must say why it cannot answer. The only bytes the store drops unread
// are a last line of the log without its newline: a write cut short by a
// crash, never acknowledged. A name or a relation the file repeats is kept
// as it is, each copy (see format.go).
package graphstore

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by the methods of a closed Store.
var ErrClosed = errors.New("graph store is closed")

// An EntityNotFoundError reports an entity that a change needs and the
// graph lacks.
type EntityNotFoundError struct {
	Name string
}

func (e *EntityNotFoundError) Error() string {
	return fmt.Sprintf("entity with name %q not found", e.Name)
}

// Suffixes of the files beside the main file.
const (
	LogSuffix  = ".zero-log"
	LockSuffix = ".lock"
	tmpSuffix  = ".zero-tmp"
	tmpPattern = ".*" + tmpSuffix // os.CreateTemp puts digits for the *
)

// defaultCompactAt is the least log size that leads to a compaction: below
// it, a compaction's fixed cost (four syncs) would outweigh replaying the
// log when the graph is opened.
const defaultCompactAt = 1 << 20

// logMode says how the log relates to the main file.
type logMode int

const (
	modeReplay  logMode = iota // the log's base is the main file
	modeStale                  // the main file is a compaction of the log
	modeMerge                  // another program rewrote the main file; the log is replayed over it
	modeNoBegin                // the log has no begin line: it holds nothing
)

// fileID tells whether a file changed: another inode, size or time.
type fileID struct {
	dev, ino   uint64
	size       int64
	mtim, ctim unix.Timespec
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, mtim: st.Mtim, ctim: st.Ctim}
}

// statPath returns the identity of the file at path, and false if there is
// none.
func statPath(path string) (fileID, bool, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	if errors.Is(err, unix.ENOENT) {
		return fileID{}, false, nil
	}
	if err != nil {
		return fileID{}, false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return idOf(&st), true, nil
}

func statFile(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return idOf(&st), nil
}

// A Store is a knowledge graph kept in a file. Its methods are safe for
// concurrent use, and other processes may use the same file through their
// own Store.
type Store struct {
	path     string
	logPath  string
	lockFile *os.File

	mu     sync.Mutex
	closed bool
	g      *graph

	// The main file the graph was read from or last written to.
	mainID   fileID
	mainOK   bool     // it exists
	mainFile *os.File // held open, so that its inode number is not reused
	mainSize int64
	mainSum  string // SHA-256 of its bytes, in hex

	// The change log.
	log     *os.File // nil when there is none
	logID   fileID
	logOff  int64 // end of the last complete line read or written
	logLine int   // number of the next line
	logTorn bool  // bytes past logOff: a write cut short
	logLive int   // changes read or written that the main file lacks
	logMode logMode

	reload    bool  // read everything again before the next operation
	compactAt int64 // least log size that leads to a compaction
}

// Open opens the graph in the file at path, which need not exist yet; its
// directory must. A symbolic link at path is followed. Open reads the graph
// and fails if it cannot, with a [*CorruptError] if a line of it does not
// read.
func Open(path string) (*Store, error) { return open(path, false) }

// OpenEvenIfCorrupt is Open for a server that must start whatever the file
// holds: a line that cannot be read does not stop it. Every operation of
// the Store then fails with that [*CorruptError], and writes nothing, until
// the line is fixed; [Store.Check] tells whether the graph reads. It fails
// as Open does when no graph can be kept at path: its directory is missing,
// it is a directory, or it cannot be read.
func OpenEvenIfCorrupt(path string) (*Store, error) { return open(path, true) }

func open(path string, evenIfCorrupt bool) (*Store, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, &os.PathError{Op: "open graph", Path: path, Err: unix.EISDIR}
	}
	lock, err := os.OpenFile(path+LockSuffix, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open graph: %w", err)
	}
	s := &Store{path: path, logPath: path + LogSuffix, lockFile: lock, compactAt: defaultCompactAt, reload: true}
	err = s.withLock(unix.LOCK_SH, s.refresh)
	var ce *CorruptError
	if err != nil && !(evenIfCorrupt && errors.As(err, &ce)) {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// Check reads what changed on disk, as every operation does first, and
// returns what stops the graph from being read: a [*CorruptError] or
// another error. It returns nil when the graph reads.
func (s *Store) Check() error { return s.view(func(*graph) {}) }

// Path returns the main file's path.
func (s *Store) Path() string { return s.path }

func (s *Store) withLock(how int, f func() error) error {
	fd := int(s.lockFile.Fd())
	for {
		err := unix.Flock(fd, how)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return &os.PathError{Op: "flock", Path: s.lockFile.Name(), Err: err}
		}
	}
	defer unix.Flock(fd, unix.LOCK_UN)
	return f()
}

// view runs f on the current graph, under a shared lock.
func (s *Store) view(f func(g *graph)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.withLock(unix.LOCK_SH, func() error {
		if err := s.refresh(); err != nil {
			return err
		}
		f(s.g)
		return nil
	})
}

// update plans a change on the current graph under an exclusive lock,
// makes it durable in the log and applies it.
func (s *Store) update(plan func(g *graph) (*record, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.withLock(unix.LOCK_EX, func() error {
		if err := s.refresh(); err != nil {
			return err
		}
		rec, err := plan(s.g)
		if err != nil || rec == nil {
			return err
		}
		if err := s.appendChange(rec); err != nil {
			return err
		}
		s.g.apply(rec)
		s.logLive++
		if s.logMode != modeReplay || s.logOff >= max(s.mainSize/2, s.compactAt) {
			// The change is durable already. A compaction that fails (the
			// disk is full, say) leaves the log to grow, and is tried
			// again at the next change and at Close, which reports it.
			_ = s.compact()
		}
		return nil
	})
}

// refresh brings the graph up to date with the files.
func (s *Store) refresh() error {
	if s.reload {
		return s.load()
	}
	id, ok, err := statPath(s.path)
	if err != nil {
		return err
	}
	if ok != s.mainOK || id != s.mainID {
		return s.load()
	}
	lid, lok, err := statPath(s.logPath)
	if err != nil {
		return err
	}
	switch {
	case !lok && s.log == nil:
		return nil
	case lid == s.logID:
		return nil
	case !lok || s.log == nil || lid.dev != s.logID.dev || lid.ino != s.logID.ino:
		// The log was removed or replaced while the main file stayed: the
		// graph is the main file's plus the new log's changes, if it
		// held no more than the main file.
		if s.logLive > 0 {
			return s.load()
		}
		s.dropLog()
		if !lok {
			return nil
		}
		f, err := os.OpenFile(s.logPath, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("open change log: %w", err)
		}
		if err := s.readLog(f, s.g, s.mainSum); err != nil {
			f.Close()
			return err
		}
		return nil
	case lid.size > s.logID.size:
		return s.readLogTail()
	}
	// The log was changed in place, or cut.
	return s.load()
}

// load reads the main file and the log afresh.
func (s *Store) load() error {
	var id fileID
	var data []byte
	f, err := os.Open(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f = nil
	case err != nil:
		return fmt.Errorf("open graph: %w", err)
	default:
		if id, err = statFile(f); err == nil {
			data, err = readToEnd(f, id.size)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("read graph: %w", err)
		}
	}
	// The graph's strings point into the bytes read, which nothing writes
	// again: they are the string's, as strings.Builder's are its String's.
	text := unsafe.String(unsafe.SliceData(data), len(data))
	sum := make(chan string, 1) // the main file's SHA-256, computed while it is parsed
	go func() {
		h := sha256.Sum256(data)
		sum <- hex.EncodeToString(h[:])
	}()
	g, err := parseMain(s.path, text)
	mainSum := <-sum
	if err != nil {
		if f != nil {
			f.Close()
		}
		s.reload = true
		return err
	}

	s.dropLog()
	var lf *os.File
	lf, err = os.OpenFile(s.logPath, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		lf, err = nil, nil
	}
	if err == nil && lf != nil {
		if err = s.readLog(lf, g, mainSum); err != nil {
			lf.Close()
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		s.reload = true
		return err
	}
	if s.mainFile != nil {
		s.mainFile.Close()
	}
	s.g, s.mainFile, s.mainID, s.mainOK = g, f, id, f != nil
	s.mainSize, s.mainSum = int64(len(data)), mainSum
	s.reload = false
	return nil
}

// readToEnd reads f to its end into one buffer of the size it is expected
// to have, which it outgrows only if the file grew.
func readToEnd(f *os.File, size int64) ([]byte, error) {
	buf := make([]byte, 0, size+1) // one byte more, to see the end without growing
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
	}
}

// dropLog forgets the log.
func (s *Store) dropLog() {
	if s.log != nil {
		s.log.Close()
	}
	s.log, s.logID, s.logOff, s.logLine, s.logTorn, s.logLive, s.logMode = nil, fileID{}, 0, 1, false, 0, modeReplay
}

// readLog reads the whole log from f and applies its changes to g, whose
// main file has SHA-256 mainSum. On success the store keeps f as its log.
func (s *Store) readLog(f *os.File, g *graph, mainSum string) error {
	id, err := statFile(f)
	if err != nil {
		return err
	}
	data, err := readFrom(f, 0, id.size)
	if err != nil {
		return err
	}
	lines, n, err := parseLog(s.logPath, data, 0, 1)
	if err != nil {
		return err
	}
	mode, live := modeNoBegin, 0
	if len(lines) > 0 {
		if lines[0].rec.op != opBegin {
			return &CorruptError{Path: s.logPath, Line: 1, Offset: 0, Reason: "the change log does not start with its begin line"}
		}
		changes := lines[1:]
		mode = modeReplay
		if base := lines[0].sum; base != mainSum {
			mode = modeMerge
			for i := len(changes) - 1; i >= 0; i-- {
				if changes[i].rec.op == opCompacted && changes[i].sum == mainSum {
					mode, changes = modeStale, changes[i+1:]
					break
				}
			}
		}
		for i := range changes {
			if changes[i].rec.op != opCompacted && changes[i].rec.op != opBegin {
				g.apply(&changes[i].rec)
				live++
			}
		}
	}
	s.log, s.logID, s.logOff, s.logLine = f, id, int64(n), 1+len(lines)
	s.logTorn, s.logLive, s.logMode = int64(n) < id.size, live, mode
	return nil
}

// readLogTail applies the lines other processes appended to the log.
func (s *Store) readLogTail() error {
	id, err := statFile(s.log)
	if err != nil {
		return err
	}
	data, err := readFrom(s.log, s.logOff, id.size-s.logOff)
	if err != nil {
		return err
	}
	lines, n, err := parseLog(s.logPath, data, s.logOff, s.logLine)
	if err != nil {
		return err
	}
	for i := range lines {
		switch lines[i].rec.op {
		case opBegin:
			return &CorruptError{Path: s.logPath, Line: lines[i].line, Offset: lines[i].off, Reason: "a second begin line"}
		case opCompacted:
		default:
			s.g.apply(&lines[i].rec)
			s.logLive++
		}
	}
	s.logOff += int64(n)
	s.logLine += len(lines)
	s.logTorn = s.logOff < id.size
	s.logID = id
	return nil
}

func readFrom(f *os.File, off, n int64) (string, error) {
	buf := make([]byte, n)
	m, err := f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("read change log: %w", err)
	}
	return string(buf[:m]), nil
}

// appendChange makes rec durable at the end of the log, starting a new log
// if there is none to append to.
func (s *Store) appendChange(rec *record) error {
	if s.log == nil || s.logMode == modeNoBegin || s.logMode == modeStale && s.logLive == 0 {
		if err := s.newLog(); err != nil {
			return err
		}
	}
	return s.appendLine(appendRecordJSON(nil, rec))
}

// appendLine appends one line to the log and syncs it. On failure the log
// is cut back to where it was.
func (s *Store) appendLine(payload []byte) error {
	if s.logTorn {
		if err := s.log.Truncate(s.logOff); err != nil {
			return fmt.Errorf("drop a cut-short write from the change log: %w", err)
		}
		s.logTorn = false
	}
	line := appendFramed(make([]byte, 0, len(payload)+10), payload)
	_, err := s.log.WriteAt(line, s.logOff)
	if err == nil {
		err = unix.Fdatasync(int(s.log.Fd()))
	}
	if err != nil {
		if s.log.Truncate(s.logOff) != nil {
			s.reload = true
		}
		return fmt.Errorf("write change log: %w", err)
	}
	s.logOff += int64(len(line))
	s.logLine++
	s.logID, err = statFile(s.log)
	if err != nil {
		s.reload = true
	}
	return nil
}

// newLog replaces any log with an empty one based on the main file.
func (s *Store) newLog() error {
	f, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+tmpPattern)
	if err != nil {
		return fmt.Errorf("create change log: %w", err)
	}
	line := appendFramed(nil, appendBegin(nil, s.mainSum))
	_, err = f.Write(line)
	if err == nil {
		err = unix.Fdatasync(int(f.Fd()))
	}
	if err == nil {
		err = os.Rename(f.Name(), s.logPath)
	}
	if err == nil {
		err = syncDir(s.path)
	}
	var id fileID
	if err == nil {
		id, err = statFile(f)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		s.reload = true
		return fmt.Errorf("create change log: %w", err)
	}
	s.dropLog()
	s.log, s.logID, s.logOff, s.logLine = f, id, int64(len(line)), 2
	return nil
}

func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// errMainChanged stops a compaction when another program replaced the main
// file while it ran.
var errMainChanged = errors.New("the main file changed during compaction")

// compact writes the graph to the main file and empties the log.
func (s *Store) compact() error {
	f, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+tmpPattern)
	if err != nil {
		return fmt.Errorf("compact graph: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	perm := os.FileMode(0o600)
	if s.mainFile != nil {
		if fi, err := s.mainFile.Stat(); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	err = writeMain(bufio.NewWriterSize(cw, 1<<20), s.g)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return fmt.Errorf("compact graph: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if s.log != nil && s.logMode != modeNoBegin {
		if err := s.appendLine(appendCompacted(nil, sum)); err != nil {
			return fmt.Errorf("compact graph: %w", err)
		}
	}
	if id, ok, err := statPath(s.path); err != nil || ok != s.mainOK || id != s.mainID {
		s.reload = true
		return errMainChanged
	}
	if err := os.Rename(f.Name(), s.path); err != nil {
		return fmt.Errorf("compact graph: %w", err)
	}
	renamed = true
	if s.mainFile != nil {
		s.mainFile.Close()
	}
	s.mainFile, s.mainOK, s.mainSum, s.mainSize = f, true, sum, cw.n
	s.mainID, err = statFile(f)
	if err != nil {
		s.reload = true
	}
	if err := syncDir(s.path); err != nil {
		s.reload = true
		return fmt.Errorf("compact graph: %w", err)
	}
	return s.resetLog()
}

// resetLog empties the log in place, but for a begin line based on the new
// main file. A crash in between leaves a log without a begin line, which
// holds nothing.
func (s *Store) resetLog() error {
	if s.log == nil {
		return nil
	}
	line := appendFramed(nil, appendBegin(nil, s.mainSum))
	err := s.log.Truncate(0)
	if err == nil {
		_, err = s.log.WriteAt(line, 0)
	}
	if err == nil {
		err = unix.Fdatasync(int(s.log.Fd()))
	}
	var id fileID
	if err == nil {
		id, err = statFile(s.log)
	}
	if err != nil {
		s.reload = true
		return fmt.Errorf("reset change log: %w", err)
	}
	s.logID, s.logOff, s.logLine, s.logTorn, s.logLive, s.logMode = id, int64(len(line)), 2, false, 0, modeReplay
	return nil
}

// removeLog removes the log once the main file holds all it had.
func (s *Store) removeLog() error {
	if s.log == nil {
		if _, ok, _ := statPath(s.logPath); !ok {
			return nil
		}
	}
	s.dropLog()
	if err := os.Remove(s.logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.reload = true
		return fmt.Errorf("remove change log: %w", err)
	}
	return syncDir(s.path)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Compact writes the whole graph to the main file, in the reference's
// format, and removes the change log.
func (s *Store) Compact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.withLock(unix.LOCK_EX, s.compactAll)
}

// compactAll compacts if the log holds anything, trying again if the
// reference server replaces the main file meanwhile, and removes the log.
func (s *Store) compactAll() error {
	for range 3 {
		if err := s.refresh(); err != nil {
			return err
		}
		if s.log == nil || s.logLive == 0 {
			return s.removeLog()
		}
		if err := s.compact(); err != errMainChanged {
			if err != nil {
				return err
			}
			return s.removeLog()
		}
	}
	return errMainChanged
}

// Close compacts the graph into the main file, so that the reference server
// sees all of it, and releases the files.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.withLock(unix.LOCK_EX, func() error {
		s.removeTemporaryFiles()
		return s.compactAll()
	})
	s.closeFiles()
	if err != nil {
		return fmt.Errorf("close graph %s: %w", s.path, err)
	}
	return nil
}

// removeTemporaryFiles removes what a crash in the middle of a compaction
// or of a log's creation left: under the exclusive lock, no one else is
// writing one.
func (s *Store) removeTemporaryFiles() {
	dir, base := filepath.Split(s.path)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		rest, ok1 := strings.CutPrefix(n, base+".")
		digits, ok2 := strings.CutSuffix(rest, tmpSuffix)
		if ok1 && ok2 && digits != "" && strings.Trim(digits, "0123456789") == "" && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

func (s *Store) closeFiles() {
	s.dropLog()
	if s.mainFile != nil {
		s.mainFile.Close()
		s.mainFile = nil
	}
	s.lockFile.Close()
}

// CreateEntities adds the entities whose names are new, and returns them.
// An entity whose name the graph or an earlier one of the list has is left
// out.
func (s *Store) CreateEntities(entities []Entity) ([]Entity, error) {
	var created []Entity
	err := s.update(func(g *graph) (*record, error) {
		var rec *record
		rec, created = g.planCreateEntities(entities)
		return rec, nil
	})
	return created, err
}

// CreateRelations adds the relations that are new, and returns them.
func (s *Store) CreateRelations(relations []Relation) ([]Relation, error) {
	var created []Relation
	err := s.update(func(g *graph) (*record, error) {
		var rec *record
		rec, created = g.planCreateRelations(relations)
		return rec, nil
	})
	return created, err
}

// AddObservations adds to each named entity (the first, where the file
// repeats the name) the contents it lacks, and returns, for each item,
// those it added. If an entity does not exist it
// fails with an [*EntityNotFoundError] and changes nothing.
func (s *Store) AddObservations(adds []Observations) ([]Observations, error) {
	var results []Observations
	err := s.update(func(g *graph) (*record, error) {
		var rec *record
		var err error
		rec, results, err = g.planAddObservations(adds)
		return rec, err
	})
	return results, err
}

// DeleteEntities deletes the named entities, every copy, and every relation
// from or to those names. Names that are not in the graph are ignored.
func (s *Store) DeleteEntities(names []string) error {
	return s.update(func(g *graph) (*record, error) { return g.planDeleteEntities(names), nil })
}

// DeleteObservations deletes observations from entities, every copy of a
// repeated name. Entities and observations that are not in the graph are
// ignored.
func (s *Store) DeleteObservations(dels []Observations) error {
	return s.update(func(g *graph) (*record, error) { return g.planDeleteObservations(dels), nil })
}

// DeleteRelations deletes relations, every copy. Those not in the graph are
// ignored.
func (s *Store) DeleteRelations(relations []Relation) error {
	return s.update(func(g *graph) (*record, error) { return g.planDeleteRelations(relations), nil })
}

// Read returns the whole graph.
func (s *Store) Read() (Graph, error) {
	var out Graph
	err := s.view(func(g *graph) { out = g.all() })
	return out, err
}

// Search returns the entities whose name, type or an observation contains
// query, ignoring case, and the relations from or to them.
func (s *Store) Search(query string) (Graph, error) {
	var out Graph
	err := s.view(func(g *graph) { out = g.search(query) })
	return out, err
}

// Nodes returns the named entities that exist, in the graph's order, and
// the relations from or to them.
func (s *Store) Nodes(names []string) (Graph, error) {
	var out Graph
	err := s.view(func(g *graph) { out = g.nodes(names) })
	return out, err
}
