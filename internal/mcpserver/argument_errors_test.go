package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
)

// schema is the part of a JSON Schema the tools' input schemas use.
type schema struct {
	Type       string             `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Enum       []any              `json:"enum"`
}

// argCase is one call with arguments of which exactly one thing is wrong.
type argCase struct {
	args     string   // the arguments, as JSON
	path     string   // the argument that is wrong, as the message must name it
	want     string   // words the message must hold
	canaries []string // values of the other arguments, which it must not hold
}

// argWriter writes valid arguments for a schema, each string and number a
// canary the message must not repeat, with one path made wrong (and
// written first in its object, so that a decoder that quotes what follows
// the bad value is caught).
type argWriter struct {
	n        int
	canaries []string
}

func (w *argWriter) canary() string {
	w.n++
	c := fmt.Sprintf("canary%d", 730000+w.n)
	w.canaries = append(w.canaries, c)
	return c
}

// wrongValues are, for each JSON type, a value of another type.
var wrongValues = map[string]struct{ value, got string }{
	"string":  {`{"self":1}`, "object"},
	"integer": {`"12"`, "string"},
	"number":  {`true`, "boolean"},
	"boolean": {`"yes"`, "string"},
	"array":   {`"a"`, "string"},
	"object":  {`[1]`, "array"},
}

// value writes a valid value for s, or, at the path wrong (relative to s;
// "" is s itself), a value of the wrong type, or with unknown, an unknown
// key in the object there.
func (w *argWriter) value(s *schema, wrong []string, unknown bool) string {
	if wrong != nil && len(wrong) == 0 && !unknown {
		return wrongValues[s.Type].value
	}
	switch s.Type {
	case "string":
		if len(s.Enum) > 0 {
			return strconv.Quote(s.Enum[0].(string))
		}
		return strconv.Quote(w.canary())
	case "integer", "number":
		return w.canary()[len("canary"):]
	case "boolean":
		return "true"
	case "array":
		var rest []string
		if wrong != nil {
			rest = wrong[1:] // wrong[0] is the index, "0"
		}
		return "[" + w.value(s.Items, rest, unknown && wrong != nil) + "]"
	case "object":
		var members []string
		if wrong != nil && len(wrong) == 0 && unknown {
			members = append(members, `"zzUnknownKey":`+strconv.Quote(w.canary()))
			w.canaries = w.canaries[:len(w.canaries)-1] // the key is named, its value need not be
		}
		keys := slices.Sorted(maps.Keys(s.Properties))
		if len(wrong) > 0 {
			keys = slices.DeleteFunc(keys, func(k string) bool { return k == wrong[0] })
			members = append(members, strconv.Quote(wrong[0])+":"+w.value(s.Properties[wrong[0]], wrong[1:], unknown))
		}
		for _, k := range keys {
			members = append(members, strconv.Quote(k)+":"+w.value(s.Properties[k], nil, false))
		}
		return "{" + strings.Join(members, ",") + "}"
	}
	panic("schema type " + s.Type)
}

// paths lists the paths into s that hold a value (each property, each
// array's first item), and those that hold an object.
func paths(s *schema, prefix []string) (values, objects [][]string) {
	switch s.Type {
	case "object":
		objects = append(objects, prefix)
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			p := append(slices.Clip(prefix), k)
			values = append(values, p)
			v, o := paths(s.Properties[k], p)
			values, objects = append(values, v...), append(objects, o...)
		}
	case "array":
		p := append(slices.Clip(prefix), "0")
		values = append(values, p)
		v, o := paths(s.Items, p)
		values, objects = append(values, v...), append(objects, o...)
	}
	return values, objects
}

// display writes a path as the messages name it: entities[0].name.
func display(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func typeAt(s *schema, path []string) string {
	for _, p := range path {
		if s.Type == "array" {
			s = s.Items
		} else {
			s = s.Properties[p]
		}
	}
	return s.Type
}

// cases returns, for a tool's input schema, a call with each argument of
// the wrong type and one with an unknown key in each object.
func cases(s *schema) []argCase {
	values, objects := paths(s, []string{})
	var out []argCase
	for _, p := range values {
		w := &argWriter{}
		typ := typeAt(s, p)
		args := w.value(s, p, false)
		out = append(out, argCase{args, display(p), "expected " + typ + ", received " + wrongValues[typ].got, w.canaries})
	}
	for _, p := range objects {
		w := &argWriter{}
		args := w.value(s, p, true)
		out = append(out, argCase{args, "zzUnknownKey", "unknown key", w.canaries})
	}
	out = append(out, argCase{"[1]", "the arguments", "expected object, received array", nil})
	return out
}

// goNames matches what a message built from Go's reflection would hold:
// a package-qualified name, a slice, map, pointer or struct type, a Go
// numeric type, a struct's name, or encoding/json's own prefix.
var goNames = regexp.MustCompile(`\b(filesystem|fetch|memory|shell|skills|mcpserver|mcp|graphstore|fsroot|json|segjson|reflect)\.[A-Za-z]|` +
	`\[\]|map\[|\*[a-z]|struct ?\{|interface ?\{|\b(u?int(8|16|32|64)?|float(32|64)|bool|rune|byte)\b|\b[a-z]+[A-Za-z]*(Args?|Params)\b|json:`)

// TestArgumentErrorText sends every tool of every server arguments with one
// thing wrong: each argument, nested ones included, of another JSON type;
// an unknown key in each object; arguments that are not an object. The
// tool error must name the argument and the JSON type it expects (and
// what it got), in the reference's words (expected string, received
// number), and must not hold a Go type name or any other argument's value.
func TestArgumentErrorText(t *testing.T) {
	for name, srv := range servers(t) {
		if name == "corruptMemory" {
			continue
		}
		cs := mcptest.Connect(t, srv, nil)
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			var s schema
			b, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases(&s) {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool.Name, Arguments: json.RawMessage(c.args)})
				if err != nil {
					t.Errorf("%s %s: protocol error %v", tool.Name, c.args, err)
					continue
				}
				msg := mcptest.Text(res)
				if !res.IsError {
					t.Errorf("%s %s: accepted", tool.Name, c.args)
					continue
				}
				if !strings.Contains(msg, c.path) || !strings.Contains(msg, c.want) {
					t.Errorf("%s %s:\n%q\nnames not %q with %q", tool.Name, c.args, msg, c.path, c.want)
				}
				if m := goNames.FindString(msg); m != "" {
					t.Errorf("%s %s:\n%q\nholds a Go name: %q", tool.Name, c.args, msg, m)
				}
				for _, v := range c.canaries {
					if strings.Contains(msg, v) {
						t.Errorf("%s %s:\n%q\nrepeats another argument's value %s", tool.Name, c.args, msg, v)
					}
				}
			}
		}
	}
}
