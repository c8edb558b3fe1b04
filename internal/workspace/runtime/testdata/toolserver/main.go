// Command toolserver is an MCP stdio server for the runtime's tests.
//
//   - --tools=FILE names a JSON object, read at start, of echo tools:
//     {"name": {"description": "...", "annotations": {...}, "title": "...",
//     "output_schema": {...}}}; each returns its arguments as text, and as
//     structured content when it has an output schema. Without it there is one, "echo". A test
//     changes the file between two starts to make a server's tools drift.
//   - --events=FILE appends a line for what the test watches: "start PID",
//     "begin PID" and "end PID" around a slow call, "cancelled PID" when
//     one is cancelled.
//   - --env adds a tool env {name}, which says whether that environment
//     variable is set and how many bytes its value has, never the value:
//     a secrets test checks that the server got a secret it must not see.
//   - --mutable adds a tool described, which returns its own description
//     as listed now ("v0" at start), and a tool mutate {description,
//     list_delay_ms}, which gives described that description, has every
//     later tools/list wait list_delay_ms first, and answers only once its
//     notifications/tools/list_changed is written: a drift the client is
//     told of before the answer. Each tools/list appends "list PID" to the
//     events file when it arrives.
//
// Its other tools: slow {ms} waits ms milliseconds or until the call is
// cancelled; crash writes to stderr and exits 2 in the middle of the call;
// hidden returns text with invisible characters; big {bytes} returns that
// many bytes of text; pid returns its process id; grow adds a tool "late"
// (the SDK tells the client its tools changed). At start it writes the
// value of CANARY to stderr, for the redaction test.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	eventsMu sync.Mutex
	events   *os.File
)

func event(format string, args ...any) {
	if events == nil {
		return
	}
	eventsMu.Lock()
	defer eventsMu.Unlock()
	fmt.Fprintf(events, format+"\n", args...)
	events.Sync()
}

type toolDef struct {
	Description  string               `json:"description"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
	Title        string               `json:"title"`
	OutputSchema json.RawMessage      `json:"output_schema"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	toolsFile := flag.String("tools", "", "a JSON file of echo tools")
	eventsFile := flag.String("events", "", "a file to append events to")
	envTool := flag.Bool("env", false, "add the tool env")
	mutable := flag.Bool("mutable", false, "add the tools described and mutate")
	flag.Parse()
	if *eventsFile != "" {
		f, err := os.OpenFile(*eventsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		events = f
	}
	event("start %d", os.Getpid())
	fmt.Fprintf(os.Stderr, "starting; my CANARY is %s\n", os.Getenv("CANARY"))

	defs := map[string]toolDef{"echo": {Description: "Echo the arguments."}}
	if *toolsFile != "" {
		data, err := os.ReadFile(*toolsFile)
		if err == nil {
			defs = nil
			err = json.Unmarshal(data, &defs)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolserver", Version: "0"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	for name, d := range defs {
		t := &mcp.Tool{Name: name, Title: d.Title, Description: d.Description, Annotations: d.Annotations, InputSchema: object}
		if d.OutputSchema != nil {
			t.OutputSchema = d.OutputSchema
		}
		srv.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := text(string(req.Params.Arguments))
			if d.OutputSchema != nil {
				res.StructuredContent = req.Params.Arguments
			}
			return res, nil
		})
	}
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ MS int }
		json.Unmarshal(req.Params.Arguments, &args)
		pid := os.Getpid()
		event("begin %d", pid)
		defer event("end %d", pid)
		select {
		case <-time.After(time.Duration(args.MS) * time.Millisecond):
			return text("done"), nil
		case <-ctx.Done():
			event("cancelled %d", pid)
			return nil, ctx.Err()
		}
	})
	srv.AddTool(&mcp.Tool{Name: "crash", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(2)
		return nil, nil
	})
	srv.AddTool(&mcp.Tool{Name: "hidden", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// "Do \u202Enot\u202C read" with tags spelling "HI", a zero-width
		// space, and a joiner in an emoji, which stays.
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "Do \u202Enot\u202C read\U000E0048\U000E0049 this\u200B 👩\u200D💻"}},
			StructuredContent: map[string]any{"note": "a\u2066b\u2069c"},
			Meta:              mcp.Meta{"zero.untrusted": false},
		}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Bytes int }
		json.Unmarshal(req.Params.Arguments, &args)
		return text(strings.Repeat("x", args.Bytes)), nil
	})
	srv.AddTool(&mcp.Tool{Name: "pid", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	srv.AddTool(&mcp.Tool{Name: "grow", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv.AddTool(&mcp.Tool{Name: "late", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("late"), nil
		})
		return text("grown"), nil
	})
	if *envTool {
		srv.AddTool(&mcp.Tool{Name: "env", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Name string }
			json.Unmarshal(req.Params.Arguments, &args)
			v, ok := os.LookupEnv(args.Name)
			return text(fmt.Sprintf("%s: set %t, %d bytes", args.Name, ok, len(v))), nil
		})
	}
	var transport mcp.Transport = &mcp.StdioTransport{}
	if *mutable {
		transport = addMutable(srv, transport)
	}
	if err := srv.Run(context.Background(), transport); err != nil {
		os.Exit(1)
	}
}

// addMutable adds the tools described and mutate (see the command's doc) to
// srv, and returns transport wrapped to tell mutate when a list_changed
// notification is written.
func addMutable(srv *mcp.Server, transport mcp.Transport) mcp.Transport {
	var delay atomic.Int64 // of each tools/list, in milliseconds
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				event("list %d", os.Getpid())
				time.Sleep(time.Duration(delay.Load()) * time.Millisecond)
			}
			return next(ctx, method, req)
		}
	})
	object := json.RawMessage(`{"type":"object"}`)
	describe := func(d string) {
		srv.AddTool(&mcp.Tool{Name: "described", Description: d, InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(d), nil
		})
	}
	describe("v0")
	written := make(chan struct{}, 1)
	var mu sync.Mutex // one mutate at a time
	srv.AddTool(&mcp.Tool{Name: "mutate", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Description string `json:"description"`
			ListDelayMS int64  `json:"list_delay_ms"`
		}
		json.Unmarshal(req.Params.Arguments, &args)
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-written:
		default:
		}
		delay.Store(args.ListDelayMS)
		describe(args.Description)
		select {
		case <-written:
			return text("mutated"), nil
		case <-time.After(10 * time.Second):
			return nil, fmt.Errorf("no list_changed written")
		}
	})
	return notifying{transport, written}
}

// notifying is a transport that signals written when a
// notifications/tools/list_changed is written.
type notifying struct {
	mcp.Transport
	written chan struct{}
}

func (t notifying) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return notifyingConn{c, t.written}, nil
}

type notifyingConn struct {
	mcp.Connection
	written chan struct{}
}

func (c notifyingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "notifications/tools/list_changed" {
		select {
		case c.written <- struct{}{}:
		default:
		}
	}
	return err
}
