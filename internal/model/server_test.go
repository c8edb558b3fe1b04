package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// A fakeServer answers chat-completion requests from a script and records
// them. It follows the OpenAI format: POST /v1/chat/completions.
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	script  []reply // reply i answers request i; the last repeats
	got     []recorded
	handler http.HandlerFunc // if set, answers instead of the script
}

// A reply is one scripted answer.
type reply struct {
	status int // 0 means 200
	header map[string]string
	body   string
}

// A recorded request.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

func newFakeServer(t *testing.T, script ...reply) *fakeServer {
	t.Helper()
	f := &fakeServer{script: script}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
	handler := f.handler
	var rep reply
	if len(f.script) > 0 {
		rep = f.script[min(n, len(f.script)-1)]
	}
	f.mu.Unlock()
	if handler != nil {
		handler(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	io.WriteString(w, rep.body)
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.got...)
}

// request decodes recorded request i as a Request.
func (f *fakeServer) request(t *testing.T, i int) Request {
	t.Helper()
	got := f.requests()
	if i >= len(got) {
		t.Fatalf("server got %d requests, want at least %d", len(got), i+1)
	}
	var r Request
	if err := json.Unmarshal(got[i].Body, &r); err != nil {
		t.Fatalf("request %d is not JSON: %v\n%s", i, err, got[i].Body)
	}
	return r
}

// newTestClient returns a client for f that records its waits instead of
// sleeping.
func newTestClient(f *fakeServer, key string) (*Client, *[]time.Duration) {
	c := New(Config{BaseURL: f.URL + "/v1", APIKey: key, Model: "test-model"}, f.Client())
	var waits []time.Duration
	var mu sync.Mutex
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &waits
}

// answerBody is a response with one plain assistant answer.
func answerBody(content string) string {
	b, _ := json.Marshal(content)
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"test-model",
"choices":[{"index":0,"message":{"role":"assistant","content":` + string(b) + `},"finish_reason":"stop"}],
"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`
}

// toolCallBody is a response asking for the calls, each [id, name, arguments].
func toolCallBody(calls ...[3]string) string {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	var cs []call
	for _, c := range calls {
		cs = append(cs, call{c[0], "function", fn{c[1], c[2]}})
	}
	b, _ := json.Marshal(cs)
	return `{"id":"chatcmpl-2","object":"chat.completion","model":"test-model",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":` + string(b) + `},"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}}`
}

func userSays(s string) []Message { return []Message{{Role: RoleUser, Content: s}} }
