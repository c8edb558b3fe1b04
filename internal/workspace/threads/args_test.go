package threads

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const readSchema = `{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`

// TestCheckArgs: arguments that match the tool's schema come back in one
// canonical form, whatever their key order and spacing; anything else is
// ErrArgs and the tool is not called.
func TestCheckArgs(t *testing.T) {
	a, err := CheckArgs(json.RawMessage(readSchema), `{ "path": "a.txt", "head": 3 }`)
	b, err2 := CheckArgs(json.RawMessage(readSchema), `{"head":3,"path":"a.txt"}`)
	if err != nil || err2 != nil || string(a) != `{"head":3,"path":"a.txt"}` || string(a) != string(b) {
		t.Errorf("canonical: %s %v / %s %v", a, err, b, err2)
	}
	if got, err := CheckArgs(json.RawMessage(`{"type":"object"}`), ""); err != nil || string(got) != "{}" {
		t.Errorf("empty arguments: %s %v", got, err)
	}
	if got, err := CheckArgs(json.RawMessage(readSchema), `{"path": "<a&b>.html"}`); err != nil || string(got) != `{"path":"<a&b>.html"}` {
		t.Errorf("<, > and & in the canonical form: %s %v", got, err)
	}
	at := `{"path":"` + strings.Repeat("x", MaxArgs-len(`{"path":""}`)) + `"}`
	if _, err := CheckArgs(json.RawMessage(readSchema), at); err != nil {
		t.Errorf("arguments of MaxArgs bytes: %v", err)
	}
	if _, err := CheckArgs(json.RawMessage(readSchema), at+" "); !errors.Is(err, ErrArgs) || !strings.Contains(err.Error(), "1048577 bytes") {
		t.Errorf("arguments of MaxArgs+1 bytes: %v", err)
	}
	for _, args := range []string{
		`{"head":3}`,                  // path is required
		`{"path":7}`,                  // not a string
		`{"path":"a","head":0}`,       // under the minimum
		`{"path":"a","other":true}`,   // not allowed
		`["path"]`, `null`, `"a.txt"`, // not an object
		`{"path":"a"`, // not JSON
	} {
		if got, err := CheckArgs(json.RawMessage(readSchema), args); !errors.Is(err, ErrArgs) {
			t.Errorf("%s: %s %v, want ErrArgs", args, got, err)
		}
	}
	remote := `{"type":"object","properties":{"p":{"$ref":"http://127.0.0.1:9/schema.json"}}}`
	if _, err := CheckArgs(json.RawMessage(remote), `{"p":1}`); !errors.Is(err, ErrArgs) {
		t.Errorf("a remote $ref: %v, want it refused", err)
	}
	if _, err := CheckArgs(json.RawMessage(`{"type":`), `{}`); !errors.Is(err, ErrArgs) {
		t.Errorf("a schema that does not parse: %v", err)
	}
}

// TestHintsOf: a missing hint counts as the unsafe value.
func TestHintsOf(t *testing.T) {
	cases := map[string]Hints{
		``:                      {Destructive: true, OpenWorld: true},
		`null`:                  {Destructive: true, OpenWorld: true},
		`{"readOnlyHint":true}`: {ReadOnly: true, Destructive: true, OpenWorld: true},
		`{"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false}`: {ReadOnly: true},
		`{"readOnlyHint":"yes"}`: {Destructive: true, OpenWorld: true},
	}
	for in, want := range cases {
		if got := HintsOf(json.RawMessage(in)); got != want {
			t.Errorf("%s: %+v, want %+v", in, got, want)
		}
	}
}
