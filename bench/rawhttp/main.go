// Command rawhttp times tools/call round trips against an MCP streamable
// HTTP endpoint with almost no client cost, as rawbench does over stdio: it
// posts JSON-RPC requests itself, without an SDK, over keep-alive
// connections (one per call in flight), and reads each answer whole (JSON,
// or an event stream the server closes after the answer). Used by
// bench/endpoint.sh against zero serve's /mcp, and by bench/gateways.sh
// against other gateways.
//
//	rawhttp [-token-file FILE] [-sse] [-c 1] [-n 2000] [-warmup 50] [-runs 5] -tool NAME [-args JSON] URL
//
// It prints, per run and as the median over runs: calls/s, p50 and p99 ms.
// Each run is a new session, with -c calls in flight on it; without
// -token-file no Authorization header is sent. With -sse it speaks the
// older HTTP+SSE transport instead: URL is the event stream, whose first
// event names where to post, and answers come on the stream. An answer
// that is not 200, or whose result has "isError":true, stops it with exit
// code 1.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 2000, "timed calls per run")
	warm := flag.Int("warmup", 50, "untimed calls first")
	runs := flag.Int("runs", 5, "fresh session per run")
	tool := flag.String("tool", "", "tool name")
	args := flag.String("args", "{}", "tool arguments as a JSON object")
	tokenFile := flag.String("token-file", "", "the file holding the bearer token")
	inFlight := flag.Int("c", 1, "calls in flight")
	sse := flag.Bool("sse", false, "the HTTP+SSE transport: URL is the event stream")
	flag.Parse()
	if flag.NArg() != 1 || *tool == "" || *inFlight < 1 {
		fmt.Fprintln(os.Stderr, "usage: rawhttp [-token-file FILE] [-c N] -tool NAME [-args JSON] [-n N] URL")
		os.Exit(2)
	}
	token := ""
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rawhttp:", err)
			os.Exit(2)
		}
		token = string(bytes.TrimSpace(b))
	}
	url := flag.Arg(0)
	var cps, p50s, p99s []float64
	for r := 0; r < *runs; r++ {
		open := openStreamable
		if *sse {
			open = openSSE
		}
		c, p50, p99, err := run(open, url, token, *tool, *args, *n, *warm, *inFlight)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rawhttp:", err)
			os.Exit(1)
		}
		fmt.Printf("run %d: %.0f calls/s, p50 %.3f ms, p99 %.3f ms\n", r+1, c, p50, p99)
		cps, p50s, p99s = append(cps, c), append(p50s, p50), append(p99s, p99)
	}
	fmt.Printf("MEDIAN of %d: %.0f calls/s, p50 %.3f ms, p99 %.3f ms\n", *runs, median(cps), median(p50s), median(p99s))
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

// A session sends one JSON-RPC message and returns the answer's bytes
// (nil for a notification).
type session func(body string, id int) ([]byte, error)

// openStreamable opens a streamable HTTP session: each message is a POST
// whose answer is its body.
func openStreamable(url, token string, inFlight int) (session, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: inFlight}}
	var id string
	post := func(body string, _ int) ([]byte, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
		authorize(req, token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
			return nil, fmt.Errorf("%s: %s", resp.Status, data)
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && id == "" {
			id = sid
		}
		return data, nil
	}
	return post, nil
}

// openSSE opens an HTTP+SSE session: a GET of url is the event stream,
// whose first event, "endpoint", says where to post; each answer comes on
// the stream, and goes to the caller waiting for its id.
func openSSE(url, token string, inFlight int) (session, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: inFlight + 1}}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	authorize(req, token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	events := bufio.NewReader(resp.Body)
	next := func() (event, data string, err error) {
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				return "", "", err
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "" && data != "":
				return event, data, nil
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				data += strings.TrimPrefix(line[len("data:"):], " ")
			}
		}
	}
	event, endpoint, err := next()
	if err != nil || event != "endpoint" {
		resp.Body.Close()
		return nil, fmt.Errorf("the stream's first event: %q %q %v", event, endpoint, err)
	}
	post, err := resp.Request.URL.Parse(endpoint)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	var mu sync.Mutex
	waiting := map[int]chan []byte{}
	go func() {
		defer resp.Body.Close()
		for {
			_, data, err := next()
			if err != nil {
				return
			}
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal([]byte(data), &m) != nil || m.ID == nil {
				continue
			}
			mu.Lock()
			ch := waiting[*m.ID]
			delete(waiting, *m.ID)
			mu.Unlock()
			if ch != nil {
				ch <- []byte(data)
			}
		}
	}()
	return func(body string, id int) ([]byte, error) {
		var ch chan []byte
		if id >= 0 {
			ch = make(chan []byte, 1)
			mu.Lock()
			waiting[id] = ch
			mu.Unlock()
		}
		req, _ := http.NewRequest(http.MethodPost, post.String(), bytes.NewBufferString(body))
		authorize(req, token)
		req.Header.Set("Content-Type", "application/json")
		r, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK && r.StatusCode != http.StatusAccepted {
			return nil, fmt.Errorf("POST %s: %s", post, r.Status)
		}
		if ch == nil {
			return nil, nil
		}
		select {
		case data := <-ch:
			return data, nil
		case <-time.After(time.Minute):
			return nil, fmt.Errorf("no answer to %d on the stream", id)
		}
	}, nil
}

func authorize(req *http.Request, token string) {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
}

func run(open func(url, token string, inFlight int) (session, error), url, token, tool, args string, n, warm, inFlight int) (cps, p50, p99 float64, err error) {
	post, err := open(url, token, inFlight)
	if err != nil {
		return 0, 0, 0, err
	}
	if _, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rawhttp","version":"0"}}}`, 0); err != nil {
		return 0, 0, 0, err
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, -1); err != nil {
		return 0, 0, 0, err
	}
	call := func(i int) (float64, error) {
		t := time.Now()
		data, err := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, tool, args), i)
		if err != nil {
			return 0, err
		}
		if bytes.Contains(data, []byte(`"isError":true`)) || !bytes.Contains(data, []byte(`"result"`)) {
			return 0, fmt.Errorf("call %d: %s", i, data)
		}
		return float64(time.Since(t).Microseconds()) / 1000, nil
	}
	for i := 1; i <= warm; i++ {
		if _, err := call(i); err != nil {
			return 0, 0, 0, err
		}
	}
	// inFlight workers take the n timed calls from one counter.
	var mu sync.Mutex
	next, times, failed := warm+1, make([]float64, 0, n), error(nil)
	var wg sync.WaitGroup
	start := time.Now()
	for range inFlight {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i > warm+n {
					return
				}
				d, err := call(i)
				mu.Lock()
				if err != nil && failed == nil {
					failed, next = err, warm+n+1
				}
				times = append(times, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := time.Since(start).Seconds()
	if failed != nil {
		return 0, 0, 0, failed
	}
	sort.Float64s(times)
	return float64(n) / total, times[len(times)/2], times[len(times)*99/100], nil
}
