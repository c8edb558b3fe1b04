package mcpserver

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file words the argument decoder's errors for the model, the way the
// reference servers (zod) word theirs: the argument's path as the model
// wrote it (entities[0].name) and the JSON types expected and received.
// What the decoder reports beside them, a Go type and the input from the
// bad value on, is left out: it names the server's internals and quotes
// the arguments that follow.

// typeError is the error for the argument at field (the decoder's dotted
// path, "" for the arguments themselves), which decodes into t and holds
// value, as the decoder describes it.
func typeError(field string, t reflect.Type, value string) error {
	where := "the arguments"
	if field != "" {
		where = argumentPath(field)
	}
	want, got := jsonTypeOf(t), receivedJSONType(value)
	switch {
	case want == "" && got == "":
		return fmt.Errorf("%s: wrong JSON type", where)
	case want == "":
		return fmt.Errorf("%s: %s is not accepted here", where, got)
	case got == "":
		return fmt.Errorf("%s: expected %s", where, want)
	}
	return fmt.Errorf("%s: expected %s, received %s", where, want, got)
}

// otherJSONError rewords the decoder's other errors: an unknown key is
// named, shortened if long; the rest lose the package's prefix.
func otherJSONError(err error) error {
	msg := err.Error()
	if q, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		key, uerr := strconv.Unquote(q)
		if uerr != nil {
			return errors.New("unknown key")
		}
		if utf8.RuneCountInString(key) > maxKeyShown {
			key = string([]rune(key)[:maxKeyShown]) + "…"
		}
		return fmt.Errorf("unknown key %s", strconv.Quote(key))
	}
	return errors.New(strings.TrimPrefix(msg, "json: "))
}

// maxKeyShown bounds an unknown key in a message, in characters.
const maxKeyShown = 64

// argumentPath writes the decoder's path, entities.0.name, as the model
// wrote it: entities[0].name.
func argumentPath(field string) string {
	var b strings.Builder
	for i, part := range strings.Split(field, ".") {
		if _, err := strconv.ParseUint(part, 10, 64); err == nil {
			b.WriteString("[" + part + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// jsonTypeOf names the JSON type a value of t decodes from, as JSON Schema
// names it, or "" if that depends on t's own decoding.
func jsonTypeOf(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == jsonNumber:
		return "number"
	case reflect.PointerTo(t).Implements(jsonUnmarshaler):
		return ""
	case reflect.PointerTo(t).Implements(textUnmarshaler):
		return "string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // base64
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// receivedJSONType names the JSON type of the value the decoder described
// as value: a type's name ("number", "bool"), the value's text, or the
// input from the value on, quoted.
func receivedJSONType(value string) string {
	if strings.HasPrefix(value, `"`) {
		u, err := strconv.Unquote(value)
		if err != nil {
			return "string"
		}
		if k := leadingType(u); k != "" {
			return k
		}
		return "string" // the value was itself a string
	}
	switch word, _, _ := strings.Cut(value, " "); word {
	case "string", "number", "object", "array", "null":
		return word
	case "bool", "boolean", "true", "false":
		return "boolean"
	}
	return leadingType(value)
}

// leadingType names the type of the JSON value s starts with, or "".
func leadingType(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if s == "" {
		return ""
	}
	switch c := s[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' && strings.HasPrefix(s, "true"), c == 'f' && strings.HasPrefix(s, "false"):
		return "boolean"
	case c == 'n' && strings.HasPrefix(s, "null"):
		return "null"
	case c == '-' || '0' <= c && c <= '9':
		return "number"
	}
	return ""
}
