// Command rawhttp times tools/call round trips against an MCP streamable
// HTTP endpoint with almost no client cost, as rawbench does over stdio: it
// posts JSON-RPC requests itself, without an SDK, over keep-alive
// connections (one per call in flight), and reads each answer whole (JSON,
// or an event stream the server closes after the answer). Used by
// bench/endpoint.sh against zero serve's /mcp, and by bench/gateways.sh
// against other gateways.
//
//	rawhttp [-token-file FILE] [-c 1] [-n 2000] [-warmup 50] [-runs 5] -tool NAME [-args JSON] URL
//
// It prints, per run and as the median over runs: calls/s, p50 and p99 ms.
// Each run is a new session, with -c calls in flight on it; without
// -token-file no Authorization header is sent. An answer that is not 200,
// or whose result has "isError":true, stops it with exit code 1.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
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
		c, p50, p99, err := run(url, token, *tool, *args, *n, *warm, *inFlight)
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

func run(url, token, tool, args string, n, warm, inFlight int) (cps, p50, p99 float64, err error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: inFlight}}
	session := ""
	post := func(body string) ([]byte, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
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
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" && session == "" {
			session = id
		}
		return data, nil
	}
	if _, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rawhttp","version":"0"}}}`); err != nil {
		return 0, 0, 0, err
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return 0, 0, 0, err
	}
	call := func(i int) (float64, error) {
		t := time.Now()
		data, err := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, tool, args))
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
