package model

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/localhttp"
)

// FuzzCheckBaseURL checks that every base URL accepted is http or https with
// a host, no credentials, no query and no fragment, and plain http only to a
// loopback host, judged on the canonical URL that is sent.
func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{
		"https://api.example.com/v1", "http://127.0.0.1:8080/v1/", "http://[::1]/v1",
		"http://localhost/v1", "http://LOCALHOST./v1", "http://api.example.com/v1",
		"https://u:p@api.example.com/v1", "https://api.example.com/v1?x#y", "http://[::ffff:127.0.0.1]/",
		"http://127.0.0.1@evil.example/", "http://evil.example\\@127.0.0.1/", "https://%31%32%37.0.0.1/",
		"http://0x7f.1/", "http://2130706433/", " https://a.example/v1\t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		canon, err := CheckBaseURL(raw)
		if err != nil {
			return
		}
		u, err := url.Parse(canon.String())
		if err != nil {
			t.Fatalf("accepted %q as %q, which does not parse: %v", raw, canon, err)
		}
		switch {
		case u.Scheme != "https" && u.Scheme != "http":
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		case u.Hostname() == "" || u.User != nil:
			t.Fatalf("accepted %q with host %q, user %v", raw, u.Hostname(), u.User)
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			t.Fatalf("accepted %q with a query or fragment", raw)
		case u.Scheme == "http" && !localhttp.IsLoopbackHost(u.Hostname()):
			t.Fatalf("accepted plain http to %q", u.Hostname())
		}
	})
}

// FuzzDecodeResponse checks that any response body decodes without a panic,
// that an accepted one is an assistant message, and that no error or quoted
// provider text holds the key.
func FuzzDecodeResponse(f *testing.F) {
	const key = "sk-fuzz-key-1234"
	for _, s := range []string{
		answerBody("hi"),
		toolCallBody([3]string{"c", "f", "{}"}),
		`{"choices":[]}`, `{"error":{"message":"bad key sk-fuzz-key-1234"}}`, `{"error":"x"}`,
		`{"choices":[{"message":{"content":null}}]}`, `null`, `[]`, `{"choices":null}`,
		"\x00\xff" + key,
	} {
		f.Add([]byte(s))
	}
	r := newRedactor(key)
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := decodeResponse(data, r)
		if err == nil && res.Message.Role == "" {
			t.Fatalf("accepted %q with no role", data)
		}
		if err != nil && strings.Contains(r.scrub(err).Error(), key) {
			t.Fatalf("error holds the key: %v", err)
		}
		q := r.quote(errorText(data))
		switch {
		case len(q) > MaxErrorMessage:
			t.Fatalf("quote is %d bytes", len(q))
		case !utf8.ValidString(q):
			t.Fatalf("quote %q is not valid UTF-8", q)
		case strings.ContainsFunc(q, unicode.IsControl):
			t.Fatalf("quote %q holds a control character", q)
		case strings.Contains(q, key):
			t.Fatalf("quote %q holds the key", q)
		}
	})
}

// FuzzWireStreams checks that any stream decodes, on the Responses and
// Anthropic wires, whole or as events, without a panic; that an accepted
// answer is an assistant message whose tool calls each have a name and an
// id; and that no error holds the key.
func FuzzWireStreams(f *testing.F) {
	const key = "sk-fuzz-key-1234"
	for _, s := range []string{
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\"}}\n\n" +
			"data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{}\"}\n\n" +
			"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
		"data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n" +
			"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"message\":\"bad key sk-fuzz-key-1234\"}}\n\n",
		`{"status":"failed","error":{"message":"sk-fuzz-key-1234"}}`,
		`{"content":[{"type":"tool_use","name":"f"}],"stop_reason":"tool_use"}`,
	} {
		f.Add([]byte(s))
	}
	r := newRedactor(key)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, w := range []wire{responsesWire{}, anthropicWire{}} {
			for _, read := range []func() (Response, error){
				func() (Response, error) { return w.decode(data, r) },
				func() (Response, error) { return w.read(strings.NewReader(string(data)), r, nil) },
			} {
				res, err := read()
				if err != nil {
					if strings.Contains(r.scrub(err).Error(), key) {
						t.Fatalf("error holds the key: %v", err)
					}
					continue
				}
				if res.Message.Role != RoleAssistant || res.FinishReason == "" {
					t.Fatalf("accepted %q as %+v", data, res)
				}
				for _, c := range res.Message.ToolCalls {
					if c.ID == "" || c.Function.Name == "" || c.Type != "function" {
						t.Fatalf("accepted %q with call %+v", data, c)
					}
				}
			}
		}
	})
}
