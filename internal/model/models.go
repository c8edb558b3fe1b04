package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// Bounds of [Client.Models].
const (
	// MaxModels is the most model ids Models returns.
	MaxModels = 1000
	// MaxModelID is the longest model id Models returns.
	MaxModelID = 256
)

// Models asks the endpoint which models it serves (GET BaseURL/models, or
// BaseURL/v1/models for Anthropic; both answer {"data":[{"id":...}]}) and returns their ids in the
// provider's order, each once. An id that is empty, longer than
// [MaxModelID], not UTF-8 or holding a control character is left out, and
// at most [MaxModels] are returned; none at all is an error wrapping
// [ErrResponse]. It does not retry. No error holds the API key.
func (c *Client) Models(ctx context.Context) (_ []string, err error) {
	defer func() { err = c.redactor.scrub(err) }()
	if c.cfgErr != nil {
		return nil, c.cfgErr
	}
	res, err := c.send(ctx, http.MethodGet, c.base+c.wire.modelsPath(), nil, "application/json")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := readBody(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return nil, &StatusError{StatusCode: res.StatusCode, Message: c.redactor.quote(errorText(data))}
	}
	var w struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("model list: %w: malformed JSON: %w", ErrResponse, err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, m := range w.Data {
		if len(ids) == MaxModels {
			break
		}
		if m.ID == "" || len(m.ID) > MaxModelID || !utf8.ValidString(m.ID) || hasControl(m.ID) || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("model list: %w: no model ids in the answer", ErrResponse)
	}
	return ids, nil
}
