package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/redact"
)

// Limits.
const (
	// DefaultTimeout bounds one exchange of the client [New] builds when
	// given none.
	DefaultTimeout = 120 * time.Second
	// MaxResponseBody caps a successful response body; a longer one is an
	// error, not a truncated answer.
	MaxResponseBody = 8 << 20
	// MaxErrorMessage caps the provider's error text quoted in an error.
	MaxErrorMessage = 512
	// MaxRetries is how many times a 429 or 5xx answer is retried.
	MaxRetries = 2
	// MaxRetryAfter is the longest Retry-After the client waits for; a
	// longer one ends the retries.
	MaxRetryAfter = 10 * time.Second
)

const (
	maxErrorBody   = 64 << 10 // bytes of a non-2xx body read for its message
	defaultBackoff = 500 * time.Millisecond
)

// ErrResponse reports a response that is not one well-formed answer: too
// large, malformed JSON, or not exactly one choice.
var ErrResponse = errors.New("bad response from the model")

// A StatusError reports a non-2xx answer. Message is the provider's error
// text, at most [MaxErrorMessage] bytes, with the API key redacted and
// control characters replaced by spaces.
type StatusError struct {
	StatusCode int
	Message    string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("model answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Redact returns a copy of e with r applied to its message, so that a
// redacted error still carries it (see [redact.Redactable]).
func (e *StatusError) Redact(r *redact.Redactor) error {
	return &StatusError{StatusCode: e.StatusCode, Message: r.String(e.Message)}
}

// redactor keeps the API key out of what the package returns.
type redactor struct{ r *redact.Redactor }

func newRedactor(apiKey string) redactor {
	return redactor{redact.New(map[string]string{"API key": apiKey})}
}

// kept lists the errors a scrubbed error still matches with errors.Is.
var kept = []error{
	ErrConfig, ErrResponse, ErrTooManyTurns, ErrUnreachable,
	context.Canceled, context.DeadlineExceeded,
	netguard.ErrURL, netguard.ErrBlocked, netguard.ErrBodyTooLarge, netguard.ErrRedirects,
}

// scrub returns err with the key redacted from its text, or nil for nil. It
// still matches kept with errors.Is, and a [*StatusError] with errors.As;
// the rest of the chain is dropped (see [redact.Redactor.Error]).
func (r redactor) scrub(err error) error { return r.r.Error(err, kept...) }

// A Client sends chat requests to one endpoint, in its wire format. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	cfgErr   error // from checking cfg; every call returns it
	modelErr error // cfg names no model: a chat naming none returns it
	base     string
	endpoint string
	wire     wire
	http     *http.Client
	redactor redactor
	backoff  time.Duration                                    // the first retry's wait; doubled after
	sleep    func(ctx context.Context, d time.Duration) error // tests replace it
}

// New returns a client for cfg. A nil httpClient means a
// [netguard.NewClient] with a [DefaultTimeout] timeout and FromEnv's scheme
// policy. Requests go to cfg.BaseURL with its host in canonical form. The client never
// follows a redirect (a copy of httpClient is changed so), so the API key
// goes nowhere but cfg's endpoint. A cfg that breaks [FromEnv]'s rules makes
// every call fail with an error wrapping [ErrConfig], but for a cfg that
// names no model: its client lists the models ([Client.Models]), and chats
// only with requests that name one.
func New(cfg Config, httpClient *http.Client) *Client {
	if httpClient == nil {
		o := urlPolicy
		o.Timeout, o.MaxBody = DefaultTimeout, MaxResponseBody+1
		httpClient = netguard.NewClient(o)
	}
	hc := *httpClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	c := &Client{
		cfg:      cfg,
		http:     &hc,
		redactor: newRedactor(cfg.APIKey),
		backoff:  defaultBackoff,
		sleep:    sleep,
	}
	u, err := cfg.checkEndpoint(configFields)
	if err != nil {
		c.cfgErr = c.redactor.scrub(err)
		return c
	}
	if cfg.Model == "" {
		c.modelErr = cfg.noModel(configFields)
	}
	// The canonical URL, so that whatever client sends it connects to
	// the host that was checked.
	c.base = strings.TrimRight(u.String(), "/")
	c.wire = wires[cfg.WireAPI]
	c.endpoint = c.base + c.wire.path()
	return c
}

// A wire is one format of the model's API: how a [Request] is written for
// it, how its answers are read into a [Response], and how its requests
// carry the key. The client around it (checks, sending, retries, bounds,
// redaction) is the same for every wire.
type wire interface {
	// path is the chat endpoint's path under the base URL.
	path() string
	// modelsPath is the model list's path under the base URL.
	modelsPath() string
	// header sets the wire's headers on h, with key if not empty.
	header(h http.Header, key string)
	// encode writes r, whose model is set and which has messages.
	encode(r Request, stream bool) ([]byte, error)
	// decode reads a whole 2xx answer.
	decode(data []byte, r redactor) (Response, error)
	// read reads a streamed answer, already bounded by MaxResponseBody,
	// event by event.
	read(body io.Reader, r redactor, onText func(string)) (Response, error)
}

// wires maps each Config.WireAPI to its wire.
var wires = map[string]wire{"": chatWire{}, WireChat: chatWire{}, WireResponses: responsesWire{}, WireAnthropic: anthropicWire{}}

// chatWire is OpenAI's chat completions.
type chatWire struct{}

func (chatWire) path() string       { return "/chat/completions" }
func (chatWire) modelsPath() string { return "/models" }

func (chatWire) header(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

func (chatWire) encode(r Request, stream bool) ([]byte, error) {
	if stream {
		return json.Marshal(streamRequest{Request: r, Stream: true, StreamOptions: streamOptions{IncludeUsage: true}})
	}
	return json.Marshal(r)
}

func (chatWire) decode(data []byte, r redactor) (Response, error) { return decodeResponse(data, r) }

func (chatWire) read(body io.Reader, r redactor, onText func(string)) (Response, error) {
	return readStream(body, r, onText)
}

// Chat sends r, with r.Model set to the Config's model if empty, and returns
// the model's one answer. It retries a 429 or 5xx answer up to [MaxRetries]
// times, waiting briefly or as Retry-After asks (up to [MaxRetryAfter]). A
// non-2xx answer is a [*StatusError]; a response that is not one
// well-formed answer wraps [ErrResponse]. No error holds the API key.
func (c *Client) Chat(ctx context.Context, r Request) (_ Response, err error) {
	defer func() { err = c.redactor.scrub(err) }()
	body, err := c.body(r, false)
	if err != nil {
		return Response{}, err
	}
	return c.exchange(ctx, body, "application/json", func(res *http.Response) (Response, error) {
		data, err := readBody(res.Body)
		if err != nil {
			return Response{}, err
		}
		return c.wire.decode(data, c.redactor)
	})
}

// body checks r and encodes it, with the Config's model if r names none,
// asking for a stream of chunks if stream is set.
func (c *Client) body(r Request, stream bool) ([]byte, error) {
	if c.cfgErr != nil {
		return nil, c.cfgErr
	}
	if r.Model == "" {
		if c.modelErr != nil {
			return nil, c.modelErr
		}
		r.Model = c.cfg.Model
	}
	if len(r.Messages) == 0 {
		return nil, errors.New("model request: no messages")
	}
	body, err := c.wire.encode(r, stream)
	if err != nil {
		return nil, fmt.Errorf("model request: %w", err)
	}
	return body, nil
}

// exchange posts body until a 2xx answer, which read reads, retrying a
// 429 or 5xx answer as Chat says.
func (c *Client) exchange(ctx context.Context, body []byte, accept string, read func(*http.Response) (Response, error)) (Response, error) {
	for attempt := 0; ; attempt++ {
		res, err := c.post(ctx, body, accept)
		if err != nil {
			return Response{}, err
		}
		if res.StatusCode/100 == 2 {
			defer res.Body.Close()
			return read(res)
		}
		data, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody)) // the message is best effort
		res.Body.Close()
		serr := &StatusError{StatusCode: res.StatusCode, Message: c.redactor.quote(errorText(data))}
		wait, ok := c.retryWait(res, attempt)
		if !ok {
			return Response{}, serr
		}
		if err := c.sleep(ctx, wait); err != nil {
			return Response{}, fmt.Errorf("%w; gave up waiting to retry: %w", serr, err)
		}
	}
}

// post sends one chat request; the caller reads and closes the body.
func (c *Client) post(ctx context.Context, body []byte, accept string) (*http.Response, error) {
	return c.send(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body), accept)
}

// send sends one request to url with the key; the caller reads and closes
// the body.
func (c *Client) send(ctx context.Context, method, url string, body io.Reader, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("model request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	c.wire.header(req.Header, c.cfg.APIKey)
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("model request: %w", noAnswer(c.base, err))
	}
	return res, nil
}

// readBody reads a whole 2xx body, up to MaxResponseBody.
func readBody(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxResponseBody+1))
	if errors.Is(err, netguard.ErrBodyTooLarge) || len(data) > MaxResponseBody {
		return nil, fmt.Errorf("model response: %w: body over %d MiB", ErrResponse, MaxResponseBody>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("model response: %w", err)
	}
	return data, nil
}

// retryWait says whether to retry after res, the answer to try attempt
// (from 0), and how long to wait first.
func (c *Client) retryWait(res *http.Response, attempt int) (time.Duration, bool) {
	if attempt >= MaxRetries || (res.StatusCode != http.StatusTooManyRequests && res.StatusCode/100 != 5) {
		return 0, false
	}
	wait := c.backoff << attempt
	if s := strings.TrimSpace(res.Header.Get("Retry-After")); s != "" {
		// Only the delay-seconds form is honored; an HTTP date is not.
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			if time.Duration(n)*time.Second > MaxRetryAfter {
				return 0, false
			}
			wait = time.Duration(n) * time.Second
		}
	}
	return wait, true
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// decodeResponse reads a 2xx body holding exactly one choice.
func decodeResponse(data []byte, r redactor) (Response, error) {
	var w struct {
		Choices []struct {
			Message      Message `json:"message"`
			FinishReason string  `json:"finish_reason"`
		} `json:"choices"`
		Usage Usage `json:"usage"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return Response{}, fmt.Errorf("model response: %w: malformed JSON: %w", ErrResponse, err)
	}
	if len(w.Choices) != 1 {
		err := fmt.Errorf("model response: %w: %d choices, want 1", ErrResponse, len(w.Choices))
		if msg, ok := providerMessage(data); ok && len(w.Choices) == 0 {
			err = fmt.Errorf("%w: %s", err, r.quote(msg)) // an error sent with a 2xx status
		}
		return Response{}, err
	}
	ch := w.Choices[0]
	if ch.Message.Role == "" {
		ch.Message.Role = RoleAssistant
	}
	for i := range ch.Message.ToolCalls {
		if ch.Message.ToolCalls[i].Type == "" {
			ch.Message.ToolCalls[i].Type = "function"
		}
	}
	return Response{Message: ch.Message, FinishReason: ch.FinishReason, Usage: w.Usage}, nil
}

// providerMessage finds the error text in a provider's error body:
// {"error":{"message":...}}, {"error":"..."} or {"message":"..."}.
func providerMessage(data []byte) (string, bool) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "", false
	}
	var nested struct {
		Message string `json:"message"`
	}
	var flat string
	switch {
	case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
		return nested.Message, true
	case json.Unmarshal(v.Error, &flat) == nil && flat != "":
		return flat, true
	case v.Message != "":
		return v.Message, true
	}
	return "", false
}

// errorText is the text to quote from a non-2xx body: the provider's
// message if it has one, else the body.
func errorText(data []byte) string {
	if msg, ok := providerMessage(data); ok {
		return msg
	}
	return string(data)
}

// quote prepares provider text for an error: the key redacted, control
// characters replaced by spaces, white space trimmed, and at most
// MaxErrorMessage bytes, cut on a rune boundary and marked with "...".
func (r redactor) quote(s string) string {
	s = r.r.String(s)
	s = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, s)
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if len(s) <= MaxErrorMessage {
		return s
	}
	cut := MaxErrorMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
