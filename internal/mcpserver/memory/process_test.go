package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// serveEnv makes this test binary a memory server over stdio, for the file
// it names, as `zero mcp memory --memory-file FILE` runs it.
const serveEnv = "MEMORY_TEST_SERVE"

func TestMain(m *testing.M) {
	if path := os.Getenv(serveEnv); path != "" {
		os.Exit(serve(path))
	}
	os.Exit(m.Run())
}

func serve(path string) int {
	st, err := graphstore.Open(path)
	if err == nil {
		err = mcpserver.Serve(context.Background(), New(st, os.Stderr), mcpserver.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
		if cerr := st.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startServer runs this test binary as a memory server process for path.
func startServer(t *testing.T, path string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+path)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "memory-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestTwoServerProcesses runs two server processes on one file. Each
// makes 96 create_entities calls, eight at a time, then adds an
// observation to each entity the other made, eight calls at a time: every
// change must be in the graph each process reads, and in the file once
// both have exited.
func TestTwoServerProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	servers := []*mcp.ClientSession{startServer(t, path), startServer(t, path)}
	const workers, each = 8, 12
	name := func(p, w, i int) string { return fmt.Sprintf("p%d-w%d-%d", p, w, i) }
	inParallel := func(f func(p, w, i int, cs *mcp.ClientSession)) {
		var wg sync.WaitGroup
		for p, cs := range servers {
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						f(p, w, i, cs)
					}
				})
			}
		}
		wg.Wait()
	}
	inParallel(func(p, w, i int, cs *mcp.ClientSession) {
		if _, isErr, _ := call(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
			{"name": name(p, w, i), "entityType": "t", "observations": []string{fmt.Sprint("by process ", p)}}}}); isErr {
			t.Errorf("create %s: error", name(p, w, i))
		}
	})
	inParallel(func(p, w, i int, cs *mcp.ClientSession) {
		if text, isErr, _ := call(t, cs, "add_observations", map[string]any{"observations": []map[string]any{
			{"entityName": name(1-p, w, i), "contents": []string{fmt.Sprint("seen by process ", p)}}}}); isErr {
			t.Errorf("add to %s: %s", name(1-p, w, i), text)
		}
	})
	check := func(g graphstore.Graph, who string) {
		t.Helper()
		have := map[string][]string{}
		for _, e := range g.Entities {
			have[e.Name] = e.Observations
		}
		for p := range 2 {
			for w := range workers {
				for i := range each {
					want := []string{fmt.Sprint("by process ", p), fmt.Sprint("seen by process ", 1-p)}
					if diff := cmp.Diff(want, have[name(p, w, i)]); diff != "" {
						t.Errorf("%s: %s (-want +got):\n%s", who, name(p, w, i), diff)
					}
				}
			}
		}
		if len(g.Entities) != 2*workers*each {
			t.Errorf("%s: %d entities, want %d", who, len(g.Entities), 2*workers*each)
		}
	}
	var graphs []graphstore.Graph
	for p, cs := range servers {
		var g graphstore.Graph // encoding/json matches entityType and the like to its fields
		_, _, structured := call(t, cs, "read_graph", map[string]any{})
		json.Unmarshal([]byte(structured), &g)
		check(g, fmt.Sprintf("process %d", p))
		graphs = append(graphs, g)
	}
	if diff := cmp.Diff(graphs[0], graphs[1]); diff != "" {
		t.Errorf("the processes disagree (-first +second):\n%s", diff)
	}
	for _, cs := range servers {
		cs.Close()
	}
	// Both closed their stores: the main file alone holds everything.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path + graphstore.LogSuffix); os.IsNotExist(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(path + graphstore.LogSuffix); !os.IsNotExist(err) {
		t.Errorf("the change log is still there: %v", err)
	}
	st, err := graphstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, _ := st.Read()
	check(g, "the file")
}
