// Package threads stores the workspace's agent threads: each thread's
// settings and its append-only events, each event with a parent, so that a
// thread can be forked from any message; full-text search over titles and
// messages (SQLite FTS5); export as JSONL and Markdown. Each thread has a
// folder of its own, made when the thread is.
package threads

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/sandbox"
)

// Bounds.
const (
	MaxTitle = 200 // bytes of a title
	// MaxEventBody bounds one event's body as stored (see marshal): 8
	// MiB, as much as a model's whole answer on the wire. Each input
	// fits: a prompt of MaxPrompt bytes is at most 1.5 MiB stored (a
	// control character is written \u00XX), a call's arguments of
	// MaxArgs bytes at most 6 MiB. A model's answer over it ends the run.
	MaxEventBody = model.MaxResponseBody
)

// Runtimes: where a thread's tools run.
const (
	// RuntimeHost: the tool runtime's tools (servers' and plugins'), on
	// this machine.
	RuntimeHost = "host"
	// RuntimeSandbox: built-in tools and model-authored plugins, each call
	// in a fresh guest on the thread's sandbox backend, and nothing else.
	RuntimeSandbox = "sandbox"
)

// WorkFolder is the folder, in a sandboxed thread's folder, that its
// guests see at /work.
const WorkFolder = "work"

// Errors.
var (
	ErrNotFound = errors.New("no such thread")
	ErrInvalid  = errors.New("invalid thread data")
)

// A Thread is one conversation's settings.
type Thread struct {
	ID      int64  `json:"id"`
	Title   string `json:"title"`
	Runtime string `json:"runtime"`
	// Backend is a sandboxed thread's sandbox backend, chosen when it was
	// made: every run uses it or none; "" for a host thread.
	Backend string `json:"backend"`
	// WorkspaceCopy: each of a sandboxed thread's guests gets a scratch
	// copy of its work folder (changes discarded), else the folder itself.
	WorkspaceCopy bool `json:"workspace_copy"`
	// Provider and Model are a snapshot, taken when the thread is made.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// ForkedFrom and ForkedAt name the thread and the event this one was
	// forked from; 0 for a thread that was not.
	ForkedFrom       int64     `json:"forked_from,omitempty"`
	ForkedAt         int64     `json:"forked_at,omitempty"`
	PromptTokens     int64     `json:"prompt_tokens"`
	CompletionTokens int64     `json:"completion_tokens"`
	Created          time.Time `json:"created"`
	Updated          time.Time `json:"updated"`
	// Dir is the thread's folder.
	Dir string `json:"-"`
}

// Event kinds.
const (
	// KindMessage is a conversation message; its body is the message in
	// the chat-completions format (model.Message).
	KindMessage = "message"
)

// An Event is one entry of a thread: Seq counts from 1 in its thread, and
// Parent is the Seq of the event it follows (0 for the first of a branch).
type Event struct {
	Seq     int64           `json:"seq"`
	Parent  int64           `json:"parent"`
	Kind    string          `json:"kind"`
	Body    json.RawMessage `json:"body"`
	Created time.Time       `json:"created"`
}

// A Store keeps threads in the workspace database, their folders under
// Dir.
type Store struct {
	db  *sql.DB
	dir string // the folder the threads' folders are made in
	now func() time.Time
	hub hub // the streams of each thread's events
	// appendMu orders appends with their publishing, so that streams get
	// each thread's events in Seq order (SQLite serializes the writes
	// anyway).
	appendMu sync.Mutex
	beat     time.Duration // Heartbeat, but in tests
	prepMu   sync.Mutex
	prepared *appendStmts
	// replica is the number the runs this store starts are marked with,
	// and hold the connection that holds its advisory lock (on PostgreSQL,
	// after JoinReplicas).
	replica int64
	hold    *sql.Conn
	// pg is set on PostgreSQL, whose replicas share the threads: an
	// append and an answer NOTIFY them (see Runner.Listen).
	pg bool
}

// New returns a store on db whose threads' folders are made in dir
// (created, mode 0700, if missing).
func New(db *sql.DB, dir string) *Store {
	return &Store{db: db, dir: dir, now: time.Now, beat: Heartbeat, pg: database.DialectOf(db) == database.PostgreSQL}
}

// marshal is the one JSON encoding of what a thread stores and streams:
// encoding/json's without its HTML escaping, so that <, > and & take one
// byte each, as they did when they were sent. Quotes, backslashes and
// control characters are escaped as JSON must.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// stampLayout is fixed-width, so that stamps sort, and compare in SQL, as
// the times they are.
const stampLayout = "2006-01-02T15:04:05.000000000Z"

func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

func parseStamp(s string) time.Time {
	t, _ := time.Parse(stampLayout, s)
	return t
}

// checkTitle refuses a title that is empty, too long, not UTF-8 or holding
// a control character.
func checkTitle(title string) error {
	switch {
	case strings.TrimSpace(title) == "":
		return fmt.Errorf("%w: an empty title", ErrInvalid)
	case len(title) > MaxTitle:
		return fmt.Errorf("%w: a title over %d bytes", ErrInvalid, MaxTitle)
	case !utf8.ValidString(title) || strings.IndexFunc(title, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: a title with a control character or invalid UTF-8", ErrInvalid)
	}
	return nil
}

// WorkDir is a sandboxed thread's work folder: what its guests see at
// /work.
func (t Thread) WorkDir() string { return filepath.Join(t.Dir, WorkFolder) }

// makeWorkDir makes a sandboxed thread's work folder, Zero's user's
// alone (0700); or, for a Docker backend, whose guest is the host's user
// 65534 (Docker maps no user), open to every user (0777): only the folder
// that holds it, which only Zero's user may enter, keeps others out.
func makeWorkDir(dir string, b sandbox.Backend) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if b == sandbox.Docker || b == sandbox.DockerRunsc {
		return os.Chmod(dir, 0o777)
	}
	return nil
}

// checkRuntime refuses a runtime that is not built, a sandboxed thread
// without a known backend, and a host thread with sandbox settings.
func checkRuntime(t Thread) error {
	switch t.Runtime {
	case RuntimeHost:
		if t.Backend != "" || t.WorkspaceCopy {
			return fmt.Errorf("%w: a host thread has no sandbox backend or workspace copy", ErrInvalid)
		}
	case RuntimeSandbox:
		if _, err := sandbox.ParseBackend(t.Backend); err != nil {
			return fmt.Errorf("%w: a sandboxed thread: %w", ErrInvalid, err)
		}
	default:
		return fmt.Errorf("%w: runtime %q: want %q or %q", ErrInvalid, t.Runtime, RuntimeHost, RuntimeSandbox)
	}
	return nil
}

// Create makes a thread and its folder, Dir/ID, and for a sandboxed
// thread its work folder in it. A folder that is already there (a link
// included) is not used: Create fails, and saves nothing.
func (s *Store) Create(ctx context.Context, t Thread) (Thread, error) {
	if err := checkTitle(t.Title); err != nil {
		return Thread{}, err
	}
	if t.Runtime == "" {
		t.Runtime = RuntimeHost
	}
	if err := checkRuntime(t); err != nil {
		return Thread{}, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Thread{}, err
	}
	defer tx.Rollback()
	now := s.now()
	if err := tx.QueryRowContext(ctx, `INSERT INTO threads (title, runtime, sandbox_backend, sandbox_copy, provider, model, forked_from, forked_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, t.Title, t.Runtime, t.Backend, t.WorkspaceCopy, t.Provider, t.Model, t.ForkedFrom, t.ForkedAt,
		stamp(now), stamp(now)).Scan(&t.ID); err != nil {
		return Thread{}, err
	}
	if err := index(ctx, tx, t.ID, 0, t.Title); err != nil {
		return Thread{}, err
	}
	dir, err := s.makeDir(t.ID)
	if err != nil {
		return Thread{}, err
	}
	if t.Runtime == RuntimeSandbox {
		if err := makeWorkDir(filepath.Join(dir, WorkFolder), sandbox.Backend(t.Backend)); err != nil {
			os.RemoveAll(dir)
			return Thread{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		os.RemoveAll(dir)
		return Thread{}, err
	}
	t.Created, t.Updated, t.Dir = now, now, dir
	return t, nil
}

// makeDir makes thread id's folder: a new directory, never one already
// there, in a Dir that is a directory and not a link.
func (s *Store) makeDir(id int64) (string, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return "", err
	}
	if fi, err := os.Lstat(s.dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the threads folder %s is not a directory", s.dir)
	}
	dir := filepath.Join(s.dir, strconv.FormatInt(id, 10))
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("thread %d's folder %s is already there: remove it, then make the thread again", id, dir)
		}
		return "", err
	}
	return dir, nil
}

// List returns every thread, the most recently updated first.
func (s *Store) List(ctx context.Context) ([]Thread, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM threads ORDER BY updated_at DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Thread, 0, len(ids))
	for _, id := range ids {
		t, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// AddUsage adds a model exchange's tokens to thread id's totals and
// returns the thread.
func (s *Store) AddUsage(ctx context.Context, id, prompt, completion int64) (Thread, error) {
	if _, err := s.db.ExecContext(ctx, `UPDATE threads SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ? WHERE id = ?`,
		prompt, completion, id); err != nil {
		return Thread{}, err
	}
	return s.Get(ctx, id)
}

// Get returns thread id.
func (s *Store) Get(ctx context.Context, id int64) (Thread, error) {
	var (
		t                Thread
		created, updated string
	)
	err := s.db.QueryRowContext(ctx, `SELECT id, title, runtime, sandbox_backend, sandbox_copy, provider, model, forked_from, forked_at, prompt_tokens, completion_tokens,
		created_at, updated_at FROM threads WHERE id = ?`, id).Scan(&t.ID, &t.Title, &t.Runtime, &t.Backend, &t.WorkspaceCopy, &t.Provider, &t.Model, &t.ForkedFrom, &t.ForkedAt,
		&t.PromptTokens, &t.CompletionTokens, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Thread{}, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	if err != nil {
		return Thread{}, err
	}
	t.Created, t.Updated = parseStamp(created), parseStamp(updated)
	t.Dir = filepath.Join(s.dir, strconv.FormatInt(id, 10))
	return t, nil
}

// Last is the parent that [Store.Append] reads as the thread's last
// event, whichever it is when the event is added.
const Last = -1

// Append adds an event to thread id after parent (0: the first of a
// branch; Last: the thread's last event; else an event of the thread) and
// returns it with its Seq. The body must be one JSON value, at most
// MaxEventBody bytes; a message's is the message, whose content is indexed
// for Search.
func (s *Store) Append(ctx context.Context, id int64, parent int64, kind string, body json.RawMessage) (Event, error) {
	out, err := s.appendAll(ctx, id, parent, 0, 0, []Draft{{kind, body}})
	if err != nil {
		return Event{}, err
	}
	return out[0], nil
}

// A Draft is an event to append: its kind and body, as Append takes them.
type Draft struct {
	Kind string
	Body json.RawMessage
}

// AppendStep appends drafts to thread id after its last event, each after
// the one before, and adds prompt and completion tokens to its totals, in
// one transaction: all of it is stored, or none.
func (s *Store) AppendStep(ctx context.Context, id, prompt, completion int64, drafts ...Draft) ([]Event, error) {
	return s.appendAll(ctx, id, Last, prompt, completion, drafts)
}

func (s *Store) appendAll(ctx context.Context, id, parent, prompt, completion int64, drafts []Draft) ([]Event, error) {
	return s.appendFenced(ctx, nil, id, parent, prompt, completion, drafts)
}

// appendFenced is appendAll for a run taken as a job: with f, nothing is
// stored unless the run is still f's (ErrTakenOver).
func (s *Store) appendFenced(ctx context.Context, f *fence, id, parent, prompt, completion int64, drafts []Draft) ([]Event, error) {
	a, err := s.beginAppend(ctx)
	if err != nil {
		return nil, err
	}
	defer a.end()
	if err := f.check(ctx, a.tx, s.db); err != nil {
		return nil, err
	}
	out, err := a.add(ctx, id, parent, prompt, completion, drafts)
	if err != nil {
		return nil, err
	}
	return out, a.commit()
}

// checkDrafts refuses a draft whose kind is empty or over 64 bytes, or
// whose body is over MaxEventBody or not one JSON value.
func checkDrafts(drafts []Draft) error {
	for _, d := range drafts {
		switch {
		case d.Kind == "" || len(d.Kind) > 64:
			return fmt.Errorf("%w: event kind %q", ErrInvalid, d.Kind)
		case len(d.Body) > MaxEventBody:
			return fmt.Errorf("%w: an event body of %d bytes, over the %d bytes an event holds", ErrInvalid, len(d.Body), MaxEventBody)
		case !json.Valid(d.Body):
			return fmt.Errorf("%w: an event body that is not one JSON value", ErrInvalid)
		}
	}
	return nil
}

// An appender is a transaction that appends events: while it is open,
// the store's other appends wait (appendMu), and the events it added go
// to the streams once it commits.
type appender struct {
	s    *Store
	tx   *sql.Tx
	st   *appendStmts
	out  []appended
	done bool
}

// appended is an event an appender added to a thread.
type appended struct {
	thread int64
	event  *Event
}

// beginAppend begins an appender.
func (s *Store) beginAppend(ctx context.Context) (*appender, error) {
	st, err := s.appendStatements(ctx) // before the transaction, which may hold the one connection
	if err != nil {
		return nil, err
	}
	s.appendMu.Lock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		s.appendMu.Unlock()
		return nil, err
	}
	return &appender{s: s, tx: tx, st: st}, nil
}

// add appends drafts to thread id after parent (see Store.Append), each
// after the one before, and adds prompt and completion tokens to its
// totals.
func (a *appender) add(ctx context.Context, id, parent, prompt, completion int64, drafts []Draft) ([]Event, error) {
	if err := checkDrafts(drafts); err != nil {
		return nil, err
	}
	tx, st := a.tx, a.st
	var (
		last  int64
		found bool
	)
	if err := tx.StmtContext(ctx, st.last).QueryRowContext(ctx, id, id).Scan(&last, &found); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	if parent == Last {
		parent = last
	}
	if parent < 0 || parent > last {
		return nil, fmt.Errorf("%w: parent %d is not an event of thread %d", ErrInvalid, parent, id)
	}
	now := a.s.now()
	out := make([]Event, 0, len(drafts))
	for _, d := range drafts {
		e := Event{Seq: last + 1, Parent: parent, Kind: d.Kind, Body: d.Body, Created: now}
		if _, err := tx.StmtContext(ctx, st.insert).ExecContext(ctx, id, e.Seq, e.Parent, e.Kind, string(e.Body), stamp(now)); err != nil {
			return nil, err
		}
		if text := messageText(d.Kind, d.Body); text != "" {
			if _, err := tx.StmtContext(ctx, st.index).ExecContext(ctx, text, id, e.Seq); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
		last, parent = e.Seq, e.Seq
	}
	if _, err := tx.StmtContext(ctx, st.touch).ExecContext(ctx, stamp(now), prompt, completion, id); err != nil {
		return nil, err
	}
	if a.s.pg {
		// Sent when the transaction commits, and only then: the other
		// replicas' streams of the thread read what they have not had.
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify(?, ?)`, Channel, eventsNote(id, last)); err != nil {
			return nil, err
		}
	}
	for i := range out {
		a.out = append(a.out, appended{id, &out[i]})
	}
	return out, nil
}

// commit commits the appender's transaction and publishes its events.
func (a *appender) commit() error {
	err := a.tx.Commit()
	if err == nil {
		for _, e := range a.out {
			a.s.hub.publish(e.thread, update{event: e.event})
		}
	}
	a.end()
	return err
}

// end rolls back what was not committed and lets the other appends go on;
// after commit it does nothing.
func (a *appender) end() {
	if a.done {
		return
	}
	a.done = true
	a.tx.Rollback()
	a.s.appendMu.Unlock()
}

// appendStmts are the statements of an append, prepared once: an append
// is most of what a run's step costs.
type appendStmts struct {
	last, insert, index, touch *sql.Stmt
}

// appendStatements prepares them, the first time.
func (s *Store) appendStatements(ctx context.Context) (*appendStmts, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.prepared != nil {
		return s.prepared, nil
	}
	var st appendStmts
	for _, p := range []struct {
		to  **sql.Stmt
		sql string
	}{
		{&st.last, `SELECT coalesce((SELECT max(seq) FROM thread_events WHERE thread_id = ?), 0), EXISTS (SELECT 1 FROM threads WHERE id = ?)`},
		{&st.insert, `INSERT INTO thread_events (thread_id, seq, parent, kind, body, created_at) VALUES (?, ?, ?, ?, ?, ?)`},
		{&st.index, `INSERT INTO thread_search (text, thread_id, seq) VALUES (?, ?, ?)`},
		{&st.touch, `UPDATE threads SET updated_at = ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ? WHERE id = ?`},
	} {
		stmt, err := s.db.PrepareContext(ctx, p.sql)
		if err != nil {
			return nil, err
		}
		*p.to = stmt
	}
	s.prepared = &st
	return s.prepared, nil
}

// messageText is the text of a message event, for the index.
func messageText(kind string, body json.RawMessage) string {
	if kind != KindMessage {
		return ""
	}
	var m struct {
		Content string `json:"content"`
	}
	json.Unmarshal(body, &m)
	return m.Content
}

// index adds text to the search index, as thread id's event seq (0: its
// title).
func index(ctx context.Context, tx *sql.Tx, id, seq int64, text string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO thread_search (text, thread_id, seq) VALUES (?, ?, ?)`, text, id, seq)
	return err
}

// Events returns thread id's events after seq after, in order: all of
// them for 0, what a stream missed for the last id it saw.
func (s *Store) Events(ctx context.Context, id, after int64) ([]Event, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, parent, kind, body, created_at FROM thread_events WHERE thread_id = ? AND seq > ? ORDER BY seq`, id, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e       Event
			body    string
			created string
		)
		if err := rows.Scan(&e.Seq, &e.Parent, &e.Kind, &body, &created); err != nil {
			return nil, err
		}
		e.Body, e.Created = json.RawMessage(body), parseStamp(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Event returns thread id's event seq.
func (s *Store) Event(ctx context.Context, id, seq int64) (Event, error) {
	e := Event{Seq: seq}
	var body, created string
	err := s.db.QueryRowContext(ctx, `SELECT parent, kind, body, created_at FROM thread_events WHERE thread_id = ? AND seq = ?`, id, seq).
		Scan(&e.Parent, &e.Kind, &body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, fmt.Errorf("%w: thread %d has no event %d", ErrNotFound, id, seq)
	}
	if err != nil {
		return Event{}, err
	}
	e.Body, e.Created = json.RawMessage(body), parseStamp(created)
	return e, nil
}

// Path returns the branch of thread id that ends at event seq: the event,
// its parent, its parent's parent, ..., in order from the first.
func (s *Store) Path(ctx context.Context, id, seq int64) ([]Event, error) {
	all, err := s.Events(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	if seq < 1 || seq > int64(len(all)) {
		return nil, fmt.Errorf("%w: thread %d has no event %d", ErrInvalid, id, seq)
	}
	var path []Event
	for at := seq; at != 0; at = all[at-1].Parent {
		path = append(path, all[at-1])
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}

// Fork makes a new thread, titled as thread id with " (fork)", with the
// same settings and a copy of the branch that ends at event seq, numbered
// from 1: the events up to seq on that branch, and nothing after.
func (s *Store) Fork(ctx context.Context, id, seq int64) (Thread, error) {
	path, err := s.Path(ctx, id, seq)
	if err != nil {
		return Thread{}, err
	}
	return s.fork(ctx, id, seq, path)
}

// fork makes thread id's fork at event seq (0: before its first event)
// with the events of path, the branch that ends there.
func (s *Store) fork(ctx context.Context, id, seq int64, path []Event) (Thread, error) {
	src, err := s.Get(ctx, id)
	if err != nil {
		return Thread{}, err
	}
	title := src.Title
	if len(title)+len(" (fork)") <= MaxTitle {
		title += " (fork)"
	}
	t, err := s.Create(ctx, Thread{Title: title, Runtime: src.Runtime, Backend: src.Backend, WorkspaceCopy: src.WorkspaceCopy,
		Provider: src.Provider, Model: src.Model, ForkedFrom: id, ForkedAt: seq})
	if err != nil {
		return Thread{}, err
	}
	if len(path) == 0 {
		return t, nil
	}
	drafts := make([]Draft, len(path))
	for i, e := range path {
		drafts[i] = Draft{e.Kind, e.Body}
	}
	// One transaction, each event after the one before it from the first.
	if _, err := s.appendAll(ctx, t.ID, 0, 0, 0, drafts); err != nil {
		// No half fork is left.
		s.db.ExecContext(context.WithoutCancel(ctx), `DELETE FROM threads WHERE id = ?`, t.ID)
		os.RemoveAll(t.Dir)
		return Thread{}, err
	}
	return t, nil
}

// A Hit is a thread that matches a search, with the events that do (0 for
// its title).
type Hit struct {
	Thread int64   `json:"thread"`
	Seqs   []int64 `json:"seqs"`
}

// Search finds the threads whose title or messages hold every word of
// query, the most recently updated first, at most limit of them. Each word
// is matched as a word (or a word's start, with a trailing *), never read as
// FTS5 query syntax.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	// The dialects' full-text searches: FTS5's MATCH, PostgreSQL's @@
	// over the GIN index's expression.
	match, where := ftsQuery(query), `thread_search MATCH ?`
	if database.DialectOf(s.db) == database.PostgreSQL {
		match, where = tsQuery(query), `to_tsvector('simple', f.text) @@ to_tsquery('simple', ?)`
	}
	if match == "" {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT f.thread_id, f.seq FROM thread_search f JOIN threads t ON t.id = f.thread_id
		WHERE `+where+` ORDER BY t.updated_at DESC, t.id DESC, f.seq`, match)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var id, seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, err
		}
		if n := len(hits); n > 0 && hits[n-1].Thread == id {
			hits[n-1].Seqs = append(hits[n-1].Seqs, seq)
			continue
		}
		if len(hits) == limit {
			break
		}
		hits = append(hits, Hit{Thread: id, Seqs: []int64{seq}})
	}
	return hits, rows.Err()
}

// ftsQuery is query as an FTS5 query of quoted words, all required: a
// quote inside a word is doubled, and a trailing * is kept as a prefix
// search.
func ftsQuery(query string) string {
	return searchTerms(query, func(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }, "*", " AND ")
}

// tsQuery is ftsQuery for PostgreSQL's to_tsquery: each word a quoted
// lexeme (its quotes and backslashes escaped), a prefix with ":*".
func tsQuery(query string) string {
	quote := strings.NewReplacer(`'`, `''`, `\`, `\\`)
	return searchTerms(query, func(w string) string { return `'` + quote.Replace(w) + `'` }, ":*", " & ")
}

// searchTerms quotes each word of query, marks those that end in * as
// prefixes, and joins them with and.
func searchTerms(query string, quote func(string) string, prefix, and string) string {
	var terms []string
	for _, w := range strings.Fields(query) {
		isPrefix := strings.HasSuffix(w, "*")
		w = strings.TrimRight(w, "*")
		if w == "" {
			continue
		}
		term := quote(w)
		if isPrefix {
			term += prefix
		}
		terms = append(terms, term)
	}
	return strings.Join(terms, and)
}
