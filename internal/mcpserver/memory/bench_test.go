package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// The benchmarks send the requests bench/memory.sh sends to a server
// running over Zero's stdio transport, in the process, and read the
// replies as raw lines: they time the server, not a client.

type wire struct {
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func benchWire(b *testing.B) (*wire, *graphstore.Store) {
	st, err := graphstore.Open(filepath.Join(b.TempDir(), "m.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		mcpserver.Serve(ctx, New(st, io.Discard), mcpserver.Options{Stdin: serverIn, Stdout: serverOut, Stderr: io.Discard})
		serverOut.Close()
		close(done)
	}()
	b.Cleanup(func() {
		clientOut.Close()
		cancel()
		<-done
		st.Close()
	})
	w := &wire{in: clientOut, out: bufio.NewReaderSize(clientIn, 1<<20)}
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	io.WriteString(w.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return w, st
}

// send writes one request and returns the reply line.
func (w *wire) send(req string) []byte {
	io.WriteString(w.in, req+"\n")
	line, err := w.out.ReadBytes('\n')
	if err != nil {
		panic(err)
	}
	return line
}

func (w *wire) call(b *testing.B, tool string, args any) []byte {
	w.id++
	a, _ := json.Marshal(args)
	reply := w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, w.id, tool, a))
	if len(reply) < 100 {
		b.Fatalf("%s: %s", tool, reply)
	}
	return reply
}

// batch returns the i-th batch of 100 entities.
func batch(i int) []graphstore.Entity {
	var es []graphstore.Entity
	for j := range 100 {
		k := fmt.Sprintf("%07d", i*100+j)
		es = append(es, graphstore.Entity{Name: "entity-" + k, EntityType: fmt.Sprint("type-", j%10),
			Observations: []string{"observation one of " + k, "Observation two: " + k + " likes tea"}})
	}
	return es
}

// BenchmarkCreateEntities creates 100 new entities a call.
func BenchmarkCreateEntities(b *testing.B) {
	w, _ := benchWire(b)
	i := 0
	for b.Loop() {
		var req strings.Builder
		fmt.Fprintf(&req, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[`, i+1)
		for j := range 100 {
			if j > 0 {
				req.WriteByte(',')
			}
			k := strconv.Itoa(10_000_000 + i*100 + j)[1:]
			req.WriteString(`{"name":"entity-` + k + `","entityType":"type-` + strconv.Itoa(j%10) +
				`","observations":["observation one of ` + k + `","Observation two: ` + k + ` likes tea"]}`)
		}
		req.WriteString("]}}}")
		if reply := w.send(req.String()); len(reply) < 1000 {
			b.Fatalf("%s", reply)
		}
		i++
	}
}

// BenchmarkSearchNodes searches a graph of 10,000 entities for one.
func BenchmarkSearchNodes(b *testing.B) {
	w, st := benchWire(b)
	for i := range 100 {
		if _, err := st.CreateEntities(batch(i)); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		i++
		w.call(b, "search_nodes", map[string]any{"query": fmt.Sprintf("ENTITY-%07d", (i*7919)%10_000)})
	}
}
