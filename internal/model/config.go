// Package model guards Zero's connection to a language model: it is the one
// place that reads the model's endpoint and API key, and the one client that
// talks to it. [FromEnv] reads them only from fixed environment variable
// names (PREFIX_MODEL_BASE_URL, PREFIX_MODEL_API_KEY and PREFIX_MODEL, for
// the prefixes AGENT_ZERO and ZERO) and refuses an endpoint that is not
// https, except plain http to this machine over loopback
// ([netguard.HTTPSOrLoopbackHTTP], judged on the host in canonical form, so
// http://0x7f000001/ is loopback and http://0xc0a80105/ is not). A [Client]
// speaks the OpenAI-compatible chat-completions format with tool calling;
// every error it returns has the API key redacted, in every form the redact
// package knows, including the provider's own error text, and keeps of its
// chain only the sentinels callers test for and a [*StatusError]
// ([redact.Redactor.Error]), so a transport error that echoes a URL cannot
// be unwrapped to it. [Client.Converse] runs the model's tool calls through
// the functions the caller names and nothing else.
//
// The key goes in one place only: the Authorization header (x-api-key for
// Anthropic) of requests to the configured endpoint. The client does not follow redirects, so the
// header never travels to another host, nor over a downgraded scheme.
package model

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/zero-dev/zero/internal/guard/netguard"
)

// ErrConfig reports a model configuration that is missing or refused.
var ErrConfig = errors.New("model configuration")

// Prefixes accepted by [FromEnv].
const (
	PrefixAgentZero = "AGENT_ZERO"
	PrefixZero      = "ZERO"
)

// Config names a model endpoint. Build it with [FromEnv]; [New] checks a
// Config built by hand by the same rules.
type Config struct {
	// BaseURL is the API root, usually ending in /v1; requests go to
	// BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// Model names the model a request uses when it names none.
	Model string
	// WireAPI is the format the endpoint speaks: [WireChat] (also when
	// empty), [WireResponses] or [WireAnthropic]. Any other is refused.
	WireAPI string
}

// Wire APIs of a [Config].
const (
	// WireChat is OpenAI's chat completions: POST BaseURL/chat/completions,
	// the key as a bearer token.
	WireChat = "chat-completions"
	// WireResponses is OpenAI's Responses API: POST BaseURL/responses, the
	// key as a bearer token.
	WireResponses = "responses"
	// WireAnthropic is Anthropic's Messages API: POST BaseURL/v1/messages,
	// the key in the x-api-key header.
	WireAnthropic = "anthropic-messages"
)

// WireAPIs lists the wire APIs a [Config] may name, the default first.
var WireAPIs = []string{WireChat, WireResponses, WireAnthropic}

// CheckWireAPI returns the wire API name w stands for (WireChat for ""),
// or an error wrapping [ErrConfig] for one the client does not speak.
func CheckWireAPI(w string) (string, error) {
	switch w {
	case "":
		return WireChat, nil
	case WireChat, WireResponses, WireAnthropic:
		return w, nil
	}
	return "", fmt.Errorf("%w: wire API %q: want %s", ErrConfig, clip(w, 40), strings.Join(WireAPIs, ", "))
}

// FromEnv reads PREFIX_MODEL_BASE_URL, PREFIX_MODEL_API_KEY and PREFIX_MODEL,
// for prefix [PrefixAgentZero] or [PrefixZero]; any other prefix is refused
// before a variable is read. getenv is os.Getenv in production. The BaseURL
// returned has its host in the canonical form [netguard.ParseHost] gives it
// (http://0x7f000001/v1 comes back as http://127.0.0.1/v1). A refusal
// wraps [ErrConfig] and never quotes the key, nor more of the URL than its
// host (the rest could hold a token).
func FromEnv(prefix string, getenv func(string) string) (Config, error) {
	if prefix != PrefixAgentZero && prefix != PrefixZero {
		return Config{}, fmt.Errorf("%w: unknown prefix %q; want %s or %s", ErrConfig, prefix, PrefixAgentZero, PrefixZero)
	}
	cfg := Config{
		BaseURL: strings.TrimSpace(getenv(prefix + "_MODEL_BASE_URL")),
		APIKey:  getenv(prefix + "_MODEL_API_KEY"),
		Model:   getenv(prefix + "_MODEL"),
	}
	names := fieldNames{prefix + "_MODEL_BASE_URL", prefix + "_MODEL_API_KEY", prefix + "_MODEL"}
	u, err := cfg.check(names)
	if err != nil {
		return Config{}, newRedactor(cfg.APIKey).scrub(err)
	}
	cfg.BaseURL = u.String()
	return cfg, nil
}

// fieldNames names a Config's fields in check's errors.
type fieldNames struct{ baseURL, apiKey, model string }

// configFields names the fields of a Config built by hand.
var configFields = fieldNames{"Config.BaseURL", "Config.APIKey", "Config.Model"}

// check applies FromEnv's rules, and returns the base URL with its host in
// canonical form.
func (c Config) check(n fieldNames) (*url.URL, error) {
	u, err := c.checkEndpoint(n)
	if err == nil && c.Model == "" {
		return nil, c.noModel(n)
	}
	return u, err
}

// noModel is the error of a Config that names no model.
func (c Config) noModel(n fieldNames) error {
	return fmt.Errorf("%w: %s is not set", ErrConfig, n.model)
}

// checkEndpoint is check but for the model, which only a chat needs: the
// model list does not.
func (c Config) checkEndpoint(n fieldNames) (*url.URL, error) {
	switch {
	case c.BaseURL == "":
		return nil, fmt.Errorf("%w: %s is not set", ErrConfig, n.baseURL)
	case hasControl(c.Model):
		return nil, fmt.Errorf("%w: %s holds a control character", ErrConfig, n.model)
	case hasControl(c.APIKey):
		return nil, fmt.Errorf("%w: %s holds a control character", ErrConfig, n.apiKey)
	}
	if _, err := CheckWireAPI(c.WireAPI); err != nil {
		return nil, err
	}
	u, err := CheckBaseURL(c.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, n.baseURL, err)
	}
	return u, nil
}

// urlPolicy is the endpoint's scheme policy: https, or plain http to this
// machine over loopback.
var urlPolicy = netguard.Options{Schemes: netguard.HTTPSOrLoopbackHTTP}

// CheckBaseURL applies the endpoint rules of [FromEnv] and [New] to an API
// root: https with a host, or plain http to a loopback host; no
// credentials, query or fragment. It returns the URL with its host in
// canonical form, for a caller that keeps the URL (a provider's settings).
func CheckBaseURL(raw string) (*url.URL, error) {
	u, err := urlPolicy.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(raw, "?#") {
		return nil, errors.New("a query or fragment is not allowed")
	}
	return u, nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}
