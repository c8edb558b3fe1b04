package filesystem

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/fsroot/escapetest"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

func startWithRoots(t *testing.T, cliDir string, roots ...string) (*mcp.ClientSession, *mcp.Client) {
	t.Helper()
	client := rootsClient(roots...)
	return connectRoots(t, cliDir, client, io.Discard), client
}

// rootsClient returns an SDK client that offers roots.
func rootsClient(roots ...string) *mcp.Client {
	client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "0"}, nil)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: r})
	}
	return client
}

// connectRoots serves the filesystem server for cliDir, logging to stderr,
// and connects client to it.
func connectRoots(t *testing.T, cliDir string, client *mcp.Client, stderr io.Writer) *mcp.ClientSession {
	t.Helper()
	set, err := fsroot.Open([]string{cliDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	// Roots belong to the session handshake of protocol versions up to
	// 2025-11-25; 2026-07-28 deprecated them and has no handshake.
	return mcptest.ConnectClient(t, New(set, stderr), client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// onListRoots makes client answer roots/list with answer.
func onListRoots(client *mcp.Client, answer func(ctx context.Context) (*mcp.ListRootsResult, error)) {
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			res, err := answer(ctx)
			if err != nil {
				return nil, err // not a typed nil result
			}
			return res, nil
		}
	})
}

// logBuffer collects a server's stderr.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n")
}

// checkLog checks, once the session has ended, that the server logged one
// line for each of want, in order, each containing it, and nothing about the
// handshake (such as "duplicate initialized notification"). The SDK's
// "server run cancelled", which mcptest's cancelling of Run may cause at the
// end, does not count.
func checkLog(t *testing.T, log *logBuffer, want ...string) {
	t.Cleanup(func() {
		var lines []string
		for _, l := range log.lines() {
			if !strings.Contains(l, `msg="server run cancelled"`) {
				lines = append(lines, l)
			}
		}
		ok := len(lines) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = strings.Contains(lines[i], want[i])
		}
		if !ok {
			t.Errorf("server log: want lines with %q, got %q", want, lines)
		}
		if s := strings.Join(lines, "\n"); strings.Contains(s, "initialized") {
			t.Errorf("server log mentions the handshake: %q", s)
		}
	})
}

// call is mcptest.Call with a deadline: rootsWait, and 5 s more.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rootsWait+5*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	return mcptest.Text(res), res.IsError
}

// received waits for a value on ch, for at most 5 s.
func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s within 5s", what)
	}
	var zero T
	return zero
}

// Client roots narrow the command-line directories; they never widen them.
func TestClientRootsNarrowOnly(t *testing.T) {
	tr := escapetest.New(t)
	cs, client := startWithRoots(t, tr.Allowed, fileURI(tr.In("sub")), fileURI(tr.Outside))
	// The first call after initialization already sees the narrowed set.
	text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")})
	if !isError {
		t.Fatalf("a path outside the client's roots was readable: %q", text)
	}
	text, isError = mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.In("sub/inner.txt")})
	if isError || text != "inner\n" {
		t.Fatalf("inside the client's root: %q %v", text, isError)
	}
	text, _ = mcptest.Call(t, cs, "list_allowed_directories", nil)
	if text != "Allowed directories:\n"+tr.In("sub") {
		t.Errorf("list_allowed_directories = %q", text)
	}
	if _, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.Outside + "/secret.txt"}); !isError {
		t.Errorf("a client root outside the command-line directories widened access")
	}

	// A changed list is asked for again, and still only narrows; the first
	// call after the change already sees it.
	client.RemoveRoots(fileURI(tr.In("sub")))
	client.AddRoots(&mcp.Root{URI: fileURI(tr.Base)})
	if text, _ := mcptest.Call(t, cs, "list_allowed_directories", nil); text != "Allowed directories:\n"+tr.Allowed {
		t.Errorf("after roots changed: list_allowed_directories = %q", text)
	}
	if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")}); isError || text != "inside\n" {
		t.Errorf("after roots changed: %q %v", text, isError)
	}
}

func TestClientRootsOutsideAllowNothing(t *testing.T) {
	tr := escapetest.New(t)
	cs, _ := startWithRoots(t, tr.Allowed, fileURI(tr.Outside), "https://example.com/")
	text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "file.txt"})
	if !isError || !strings.Contains(text, "no directory is allowed in this session") {
		t.Errorf("read with no usable client root: %q %v", text, isError)
	}
	text, _ = mcptest.Call(t, cs, "list_allowed_directories", nil)
	if !strings.Contains(text, "(none: ") {
		t.Errorf("list_allowed_directories = %q", text)
	}
}

// A client without roots keeps the command-line directories, as does a
// client that offers an empty list.
func TestNoClientRoots(t *testing.T) {
	tr := escapetest.New(t)
	cs := start(t, tr.Allowed)
	if text, isError := mcptest.Call(t, cs, "read_text_file", map[string]any{"path": "file.txt"}); isError || text != "inside\n" {
		t.Errorf("read: %q %v", text, isError)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition not met within 5s")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A client that offers roots but answers roots/list with an error keeps the
// command-line directories, and the server says so once.
func TestClientRootsErrorKeepsCommandLine(t *testing.T) {
	tr := escapetest.New(t)
	client := rootsClient(fileURI(tr.In("sub")))
	asks := make(chan struct{}, 10)
	onListRoots(client, func(context.Context) (*mcp.ListRootsResult, error) {
		asks <- struct{}{}
		return nil, errors.New("no roots today")
	})
	log := &logBuffer{}
	checkLog(t, log, "no roots today")
	cs := connectRoots(t, tr.Allowed, client, log)
	for range 2 { // the second call logs nothing more
		if text, isError := call(t, cs, "read_text_file", map[string]any{"path": "file.txt"}); isError || text != "inside\n" {
			t.Errorf("read with unreadable roots: %q %v", text, isError)
		}
	}
	if text, _ := call(t, cs, "list_allowed_directories", nil); text != "Allowed directories:\n"+tr.Allowed {
		t.Errorf("list_allowed_directories = %q", text)
	}
	if len(asks) != 1 {
		t.Errorf("roots/list asked %d times, want 1", len(asks))
	}
}

// A client that never answers roots/list blocks nothing: ping and tools/list
// answer at once, tool calls wait out rootsWait and then use the
// command-line directories, and the server logs one line.
func TestClientRootsUnansweredNeverBlock(t *testing.T) {
	tr := escapetest.New(t)
	client := rootsClient(fileURI(tr.In("sub")))
	asks := make(chan struct{}, 10)
	end := make(chan struct{})
	onListRoots(client, func(context.Context) (*mcp.ListRootsResult, error) {
		asks <- struct{}{}
		<-end
		return nil, errors.New("test ended")
	})
	log := &logBuffer{}
	checkLog(t, log, "not answered")
	cs := connectRoots(t, tr.Allowed, client, log)
	t.Cleanup(func() { close(end) }) // before the session closes, which waits for the handler
	received(t, asks, "roots/list")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("ping and tools/list took %v while roots/list was unanswered", d)
	}
	for range 2 {
		if text, isError := call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")}); isError || text != "inside\n" {
			t.Errorf("read with unanswered roots: %q %v", text, isError)
		}
	}
	if text, _ := call(t, cs, "list_allowed_directories", nil); text != "Allowed directories:\n"+tr.Allowed {
		t.Errorf("list_allowed_directories = %q", text)
	}
}

// An answer that comes after rootsWait narrows the session from then on.
func TestClientRootsLateAnswerNarrows(t *testing.T) {
	tr := escapetest.New(t)
	client := rootsClient(fileURI(tr.In("sub")), fileURI(tr.Outside))
	release := make(chan struct{})
	onListRoots(client, func(context.Context) (*mcp.ListRootsResult, error) {
		<-release
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: fileURI(tr.In("sub"))}, {URI: fileURI(tr.Outside)}}}, nil
	})
	log := &logBuffer{}
	checkLog(t, log, "not answered", "client root ignored")
	cs := connectRoots(t, tr.Allowed, client, log)
	answer := sync.OnceFunc(func() { close(release) })
	t.Cleanup(answer) // before the session closes, which waits for the handler
	if text, isError := call(t, cs, "read_text_file", map[string]any{"path": "file.txt"}); isError || text != "inside\n" {
		t.Fatalf("read before the answer: %q %v", text, isError)
	}
	answer()
	waitFor(t, func() bool {
		text, _ := call(t, cs, "list_allowed_directories", nil)
		return text == "Allowed directories:\n"+tr.In("sub")
	})
	if _, isError := call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")}); !isError {
		t.Error("a path outside the late roots was readable")
	}
	if _, isError := call(t, cs, "read_text_file", map[string]any{"path": tr.Outside + "/secret.txt"}); !isError {
		t.Error("a late root outside the command-line directories widened access")
	}
}

// notifications/roots/list_changed asks again without blocking the session.
// While the new list is unanswered, calls keep the client's last roots: a
// failed ask never widens them to the command-line directories.
func TestClientRootsChangeNeverBlocks(t *testing.T) {
	tr := escapetest.New(t)
	client := rootsClient(fileURI(tr.In("sub")))
	asks := make(chan int32, 10)
	end := make(chan struct{})
	var n atomic.Int32
	onListRoots(client, func(context.Context) (*mcp.ListRootsResult, error) {
		ask := n.Add(1)
		asks <- ask
		if ask > 1 {
			<-end // the second list never comes
			return nil, errors.New("test ended")
		}
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: fileURI(tr.In("sub"))}}}, nil
	})
	log := &logBuffer{}
	checkLog(t, log, "not answered")
	cs := connectRoots(t, tr.Allowed, client, log)
	t.Cleanup(func() { close(end) })
	if text, _ := call(t, cs, "list_allowed_directories", nil); text != "Allowed directories:\n"+tr.In("sub") {
		t.Fatalf("list_allowed_directories = %q", text)
	}
	received(t, asks, "roots/list")

	client.AddRoots(&mcp.Root{URI: fileURI(tr.Allowed)})
	received(t, asks, "roots/list after list_changed")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("ping and tools/list took %v while roots/list was unanswered", d)
	}
	if text, _ := call(t, cs, "list_allowed_directories", nil); text != "Allowed directories:\n"+tr.In("sub") {
		t.Errorf("after an unanswered list_changed: list_allowed_directories = %q", text)
	}
	if _, isError := call(t, cs, "read_text_file", map[string]any{"path": tr.In("file.txt")}); !isError {
		t.Error("an unanswered list_changed widened access to the command-line directories")
	}
}
