package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrArguments refuses a call whose arguments do not fit its tool's input
// schema: nothing was sent to the plugin.
var ErrArguments = errors.New("the arguments do not fit the tool's parameters, and were not sent")

// CheckArguments checks a call's arguments (a JSON object; empty means {})
// against a tool's input schema, as the manifest declares it: a plugin's
// code only ever receives arguments of the shape that was approved. A
// server checks its own; a plugin's host does not. The error wraps
// ErrArguments when the arguments do not fit.
func CheckArguments(inputSchema, args json.RawMessage) error {
	var schema jsonschema.Schema
	if err := json.Unmarshal(inputSchema, &schema); err != nil {
		return fmt.Errorf("its input schema: %w", err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("its input schema: %w", err)
	}
	var v any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &v); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
	}
	if err := resolved.Validate(v); err != nil {
		return fmt.Errorf("%w: %v", ErrArguments, err)
	}
	return nil
}
