package model

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModels lists a provider's models with a client that names none: GET
// /v1/models with the key, the ids in the provider's order, each once, odd
// ones left out. Such a client chats only with requests that name a model.
func TestModels(t *testing.T) {
	f := newFakeServer(t, reply{body: `{"object":"list","data":[{"id":"gpt-x","object":"model"},{"id":""},{"id":"local\u0007bell"},{"id":"gpt-x"},{"id":"` + strings.Repeat("m", MaxModelID+1) + `"},{"id":"llama-3"}]}`},
		reply{body: answerBody("hi")})
	c := New(Config{BaseURL: f.URL + "/v1", APIKey: "sk-models"}, f.Client())
	ids, err := c.Models(context.Background())
	if err != nil || !cmp.Equal(ids, []string{"gpt-x", "llama-3"}) {
		t.Fatalf("models %q, error %v", ids, err)
	}
	got := f.requests()[0]
	if got.Method != "GET" || got.Path != "/v1/models" || got.Header.Get("Authorization") != "Bearer sk-models" {
		t.Errorf("request: %s %s %q", got.Method, got.Path, got.Header.Get("Authorization"))
	}
	if _, err := c.Chat(context.Background(), Request{Messages: userSays("hi")}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "Config.Model is not set") {
		t.Errorf("a chat naming no model: %v", err)
	}
	if resp, err := c.Chat(context.Background(), Request{Model: "llama-3", Messages: userSays("hi")}); err != nil || resp.Message.Content != "hi" {
		t.Errorf("a chat naming its model: %+v, %v", resp, err)
	}
	if len(f.requests()) != 2 {
		t.Errorf("the server got %d requests, want 2 (the refused chat sends nothing)", len(f.requests()))
	}
}

// TestModelsErrors: a refusal is a StatusError with the key redacted, and
// an answer that is not a model list, or lists none, wraps ErrResponse; a
// base URL that breaks the rules is refused before anything is sent.
func TestModelsErrors(t *testing.T) {
	for _, tc := range []struct {
		rep  reply
		want error
		text string
	}{
		{reply{status: 401, body: `{"error":{"message":"bad key sk-models"}}`}, nil, "model answered 401 Unauthorized: bad key [redacted API key]"},
		{reply{body: `{"data":`}, ErrResponse, "malformed JSON"},
		{reply{body: `{"data":[]}`}, ErrResponse, "no model ids"},
	} {
		f := newFakeServer(t, tc.rep)
		_, err := New(Config{BaseURL: f.URL + "/v1", APIKey: "sk-models"}, f.Client()).Models(context.Background())
		var se *StatusError
		if err == nil || !strings.Contains(err.Error(), tc.text) || strings.Contains(err.Error(), "sk-models") ||
			(tc.want != nil && !errors.Is(err, tc.want)) || (tc.want == nil && !errors.As(err, &se)) {
			t.Errorf("%s: %v, want %q", tc.rep.body, err, tc.text)
		}
	}
	_, err := New(Config{BaseURL: "http://example.com/v1"}, nil).Models(context.Background())
	if !errors.Is(err, ErrConfig) {
		t.Errorf("plain http to a public host: %v", err)
	}
}
