package threads

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxArgs bounds the arguments a model writes for one call, in bytes as it
// wrote them.
const MaxArgs = 1 << 20

// ErrArgs reports arguments a call cannot run with.
var ErrArgs = errors.New("the arguments cannot be used")

// CheckArgs reads the arguments a model wrote for a tool (a JSON object;
// empty means {}) and validates them against the tool's input schema.
// Remote $refs in the schema are refused, never fetched. It returns the
// arguments in canonical form (keys sorted, no spaces): what the tool is
// called with, and what tells two calls with the same arguments apart
// from others.
func CheckArgs(schema json.RawMessage, args string) (json.RawMessage, error) {
	s, err := CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	return s.Check(args)
}

// A Schema is a tool's input schema, resolved once for the calls that
// check their arguments against it.
type Schema struct{ resolved *jsonschema.Resolved }

// CompileSchema resolves a tool's input schema; remote $refs are refused.
func CompileSchema(schema json.RawMessage) (*Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("%w: the tool's input schema does not parse: %v", ErrArgs, err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the tool's input schema cannot be used: %v", ErrArgs, err)
	}
	return &Schema{resolved}, nil
}

// Check is CheckArgs against s.
func (s *Schema) Check(args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if err := checkSize(args); err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(args), &v); err != nil || v == nil {
		return nil, fmt.Errorf("%w: they are not one JSON object", ErrArgs)
	}
	if err := s.resolved.Validate(v); err != nil {
		return nil, fmt.Errorf("%w: they do not match the tool's input schema: %v", ErrArgs, err)
	}
	return marshal(v)
}

// checkSize refuses arguments over MaxArgs bytes, counted as the model
// wrote them.
func checkSize(args string) error {
	if len(args) > MaxArgs {
		return fmt.Errorf("%w: they are %d bytes, over the %d bytes a call's arguments may be", ErrArgs, len(args), MaxArgs)
	}
	return nil
}

// Hints are what a tool's annotations say of it, with a missing hint read
// as the unsafe value: not read-only, destructive, open to the world.
type Hints struct {
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	OpenWorld   bool `json:"open_world"`
}

// HintsOf reads a tool's MCP annotations (JSON; empty or null for none).
// Annotations that do not parse give the unsafe values.
func HintsOf(annotations json.RawMessage) Hints {
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		OpenWorld   *bool `json:"openWorldHint"`
	}
	h := Hints{Destructive: true, OpenWorld: true}
	if len(annotations) == 0 || json.Unmarshal(annotations, &a) != nil {
		return h
	}
	if a.ReadOnly != nil {
		h.ReadOnly = *a.ReadOnly
	}
	if a.Destructive != nil {
		h.Destructive = *a.Destructive
	}
	if a.OpenWorld != nil {
		h.OpenWorld = *a.OpenWorld
	}
	return h
}
