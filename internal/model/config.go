// Package model guards Zero's connection to a language model: it is the one
// place that reads the model's endpoint and API key, and the one client that
// talks to it. [FromEnv] reads them only from fixed environment variable
// names (PREFIX_MODEL_BASE_URL, PREFIX_MODEL_API_KEY and PREFIX_MODEL, for
// the prefixes AGENT_ZERO and ZERO) and refuses an endpoint that is not
// https, except plain http to this machine over loopback. A [Client] speaks
// the OpenAI-compatible chat-completions format with tool calling; every
// error it returns has the API key redacted, in every form the redact
// package knows, including the provider's own error text and transport
// errors that echo a URL. [Client.Converse] runs the model's tool calls
// through the functions the caller names and nothing else.
//
// The key goes in one place only: the Authorization header of requests to
// the configured endpoint. The client does not follow redirects, so the
// header never travels to another host, nor over a downgraded scheme.
package model

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/zero-dev/zero/internal/guard/localhttp"
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
}

// FromEnv reads PREFIX_MODEL_BASE_URL, PREFIX_MODEL_API_KEY and PREFIX_MODEL,
// for prefix [PrefixAgentZero] or [PrefixZero]; any other prefix is refused
// before a variable is read. getenv is os.Getenv in production. A refusal
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
	if err := cfg.check(names); err != nil {
		return Config{}, newRedactor(cfg.APIKey).scrub(err)
	}
	return cfg, nil
}

// fieldNames names a Config's fields in check's errors.
type fieldNames struct{ baseURL, apiKey, model string }

// configFields names the fields of a Config built by hand.
var configFields = fieldNames{"Config.BaseURL", "Config.APIKey", "Config.Model"}

// check applies FromEnv's rules.
func (c Config) check(n fieldNames) error {
	switch {
	case c.BaseURL == "":
		return fmt.Errorf("%w: %s is not set", ErrConfig, n.baseURL)
	case c.Model == "":
		return fmt.Errorf("%w: %s is not set", ErrConfig, n.model)
	case hasControl(c.Model):
		return fmt.Errorf("%w: %s holds a control character", ErrConfig, n.model)
	case hasControl(c.APIKey):
		return fmt.Errorf("%w: %s holds a control character", ErrConfig, n.apiKey)
	}
	if err := checkBaseURL(c.BaseURL); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrConfig, n.baseURL, err)
	}
	return nil
}

// checkBaseURL accepts an http or https URL with a host, no credentials, no
// query and no fragment; plain http only to a loopback host.
func checkBaseURL(raw string) error {
	u, err := netguard.CheckURL(raw)
	if err != nil {
		return err
	}
	if strings.ContainsAny(raw, "?#") {
		return errors.New("a query or fragment is not allowed")
	}
	if u.Scheme == "http" && !localhttp.IsLoopbackHost(u.Hostname()) {
		return fmt.Errorf("plain http is allowed only to a loopback host (127.0.0.0/8, ::1, localhost), not %q; use https", u.Hostname())
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}
