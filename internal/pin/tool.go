package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Version lines of the tool encodings.
const (
	toolVersion   = "zero-mcp-tool-v2\n"
	toolVersionV1 = "zero-mcp-tool-v1\n"
)

// ErrInvalidJSON reports a schema [ToolHash] cannot put in canonical form.
var ErrInvalidJSON = errors.New("invalid JSON")

// A Tool is what a model and a client read of one MCP tool.
type Tool struct {
	Name, Title, Description               string
	InputSchema, OutputSchema, Annotations json.RawMessage
}

// ToolHash hashes what a model and a client read of one MCP tool: its name,
// title, description, input and output schemas, and annotations. It returns
// "sha256:" and the lowercase hex SHA-256 of this frozen encoding:
//
//	zero-mcp-tool-v2
//	name <len>:<name>
//	title <len>:<title>
//	description <len>:<description>
//	inputSchema <len>:<canonical JSON>
//	outputSchema <len>:<canonical JSON>
//	annotations <len>:<canonical JSON>
//
// with every line ending in "\n" and <len> a decimal count of bytes. In
// canonical JSON, object members are sorted by the bytes of their keys,
// there is no whitespace outside strings, numbers are kept exactly as written
// (1 and 1.0 differ), and strings are written with the fewest escapes:
// only '"', '\\' and the control characters U+0000 to U+001F are escaped
// (as \b, \f, \n, \r, \t or \u00xx), and nothing is HTML-escaped. Escapes in
// the input are decoded first, so "\u0041" and "A" read, and hash, alike.
//
// An empty schema (nil or zero bytes) is hashed as null, which is how a tool
// without annotations or output schema reads. A schema that is not valid
// JSON, holds invalid UTF-8, has trailing data, or repeats a key within one
// object (clients disagree about which one wins) is refused with an error
// wrapping [ErrInvalidJSON].
//
// It is the second encoding: [ToolHashV1], which approvals made before it
// hold, covers neither the title nor the output schema.
func ToolHash(t Tool) (string, error) {
	b, err := toolEncoding(t)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// ToolHashV1 is the first encoding's hash: [ToolHash] without the title
// and the output schema, under the version line zero-mcp-tool-v1. It is
// frozen, so that a tool approved under it is recognised as such.
func ToolHashV1(name, description string, inputSchema, annotations json.RawMessage) (string, error) {
	b, err := toolEncodingV1(name, description, inputSchema, annotations)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// toolEncoding returns the bytes [ToolHash] hashes.
func toolEncoding(t Tool) ([]byte, error) {
	input, err := canonicalJSON(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q input schema: %w", t.Name, err)
	}
	output, err := canonicalJSON(t.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q output schema: %w", t.Name, err)
	}
	ann, err := canonicalJSON(t.Annotations)
	if err != nil {
		return nil, fmt.Errorf("tool %q annotations: %w", t.Name, err)
	}
	b := make([]byte, 0, len(toolVersion)+len(t.Name)+len(t.Title)+len(t.Description)+len(input)+len(output)+len(ann)+96)
	b = append(b, toolVersion...)
	b = appendField(b, "name", t.Name)
	b = appendField(b, "title", t.Title)
	b = appendField(b, "description", t.Description)
	b = appendField(b, "inputSchema", string(input))
	b = appendField(b, "outputSchema", string(output))
	b = appendField(b, "annotations", string(ann))
	return b, nil
}

// toolEncodingV1 returns the bytes [ToolHashV1] hashes.
func toolEncodingV1(name, description string, inputSchema, annotations json.RawMessage) ([]byte, error) {
	schema, err := canonicalJSON(inputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q input schema: %w", name, err)
	}
	ann, err := canonicalJSON(annotations)
	if err != nil {
		return nil, fmt.Errorf("tool %q annotations: %w", name, err)
	}
	b := make([]byte, 0, len(toolVersionV1)+len(name)+len(description)+len(schema)+len(ann)+64)
	b = append(b, toolVersionV1...)
	b = appendField(b, "name", name)
	b = appendField(b, "description", description)
	b = appendField(b, "inputSchema", string(schema))
	b = appendField(b, "annotations", string(ann))
	return b, nil
}

// CanonicalJSON rewrites one JSON value in the canonical form [ToolHash]
// describes, which every encoding here hashes. It refuses, with an error
// wrapping [ErrInvalidJSON], what [ToolHash] refuses: invalid JSON or
// UTF-8, trailing data, and a key repeated within one object, at any depth
// (the error says where). An empty raw is null.
func CanonicalJSON(raw json.RawMessage) ([]byte, error) {
	return canonicalJSON(raw)
}

// canonicalJSON is [CanonicalJSON].
func canonicalJSON(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return []byte("null"), nil
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrInvalidJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := writeCanonical(&out, dec); err != nil {
		return nil, err
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("%w: trailing data after the value (%v)", ErrInvalidJSON, tok)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return out.Bytes(), nil
}

// member is one object member in canonical form.
type member struct {
	key   string
	value []byte
}

func writeCanonical(out *bytes.Buffer, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			var members []member
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
				}
				key, ok := kt.(string)
				if !ok {
					return fmt.Errorf("%w: object key is %T", ErrInvalidJSON, kt)
				}
				var sub bytes.Buffer
				if err := writeCanonical(&sub, dec); err != nil {
					return within(pointerStep.Replace(key), err)
				}
				members = append(members, member{key, sub.Bytes()})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
			}
			slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
			out.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					if members[i-1].key == m.key {
						return fmt.Errorf("%w: duplicate key %q", ErrInvalidJSON, m.key)
					}
					out.WriteByte(',')
				}
				writeString(out, m.key)
				out.WriteByte(':')
				out.Write(m.value)
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := writeCanonical(out, dec); err != nil {
					return within(strconv.Itoa(i), err)
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
			}
			out.WriteByte(']')
		default:
			return fmt.Errorf("%w: unexpected %v", ErrInvalidJSON, v)
		}
	case string:
		writeString(out, v)
	case json.Number:
		out.WriteString(string(v))
	case bool:
		if v {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	default:
		return fmt.Errorf("%w: unexpected token %T", ErrInvalidJSON, tok)
	}
	return nil
}

// A placedError is an error inside a JSON value, with where it is: the
// object keys and array indexes from the top, written out as a JSON Pointer
// (RFC 6901).
type placedError struct {
	path []string
	err  error
}

func (e *placedError) Error() string {
	return e.err.Error() + " (at /" + strings.Join(e.path, "/") + ")"
}

func (e *placedError) Unwrap() error { return e.err }

// within places err under one more step, a key or an index, escaped as a
// JSON Pointer's steps are; the path is built only on the way out of an
// error.
func within(step string, err error) error {
	if pe, ok := err.(*placedError); ok {
		pe.path = append([]string{step}, pe.path...)
		return pe
	}
	return &placedError{path: []string{step}, err: err}
}

// pointerStep escapes a key as a step of a JSON Pointer.
var pointerStep = strings.NewReplacer("~", "~0", "/", "~1")

// writeString writes s as a JSON string with the fewest escapes: '"', '\\'
// and U+0000 to U+001F. s is valid UTF-8 here (the input was checked).
func writeString(out *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			out.WriteByte('\\')
			out.WriteByte(c)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			out.WriteString(`\u00`)
			out.WriteByte(hex[c>>4])
			out.WriteByte(hex[c&0xf])
		}
		start = i + 1
	}
	out.WriteString(s[start:])
	out.WriteByte('"')
}
