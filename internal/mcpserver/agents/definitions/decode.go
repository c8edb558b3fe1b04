package definitions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"
)

// Both formats decode into the same tree: map[string]any, []any, string,
// int64, float64, bool and nil. Nothing else (dates, binary, custom tags)
// is a value any field takes.

// maxNesting bounds how deep a tree goes; definitions are shallow.
const maxNesting = 16

// decodeMarkdown splits a Markdown definition into its YAML frontmatter,
// between a first line --- and the next line ---, and its body, and decodes
// the frontmatter. A UTF-8 byte order mark and CRLF line ends are accepted.
func decodeMarkdown(data []byte) (map[string]any, string, error) {
	if !utf8.Valid(data) {
		return nil, "", errors.New("the file is not valid UTF-8")
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	if !isDelimiter(line) {
		return nil, "", errors.New("frontmatter: the file must start with a line ---, the fields, and a line ---")
	}
	for off := 0; ok && off <= len(rest); {
		l, _, more := bytes.Cut(rest[off:], []byte("\n"))
		next := off + len(l) + 1
		if isDelimiter(l) {
			body := ""
			if next <= len(rest) {
				body = string(rest[next:])
			}
			top, err := decodeYAML(rest[:off])
			return top, body, err
		}
		if !more {
			break
		}
		off = next
	}
	return nil, "", errors.New("frontmatter: not closed by a line ---")
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// decodeYAML decodes frontmatter into a tree. Anchors and aliases are
// refused, so an alias bomb cannot expand.
func decodeYAML(fm []byte) (map[string]any, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(fm))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("frontmatter: invalid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("frontmatter: more than one YAML document")
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		if len(doc.Content) == 1 && isNull(doc.Content[0]) {
			return map[string]any{}, nil
		}
		return nil, errors.New("frontmatter: must be a YAML mapping of fields (name: ..., description: ...)")
	}
	v, err := yamlValue("", doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// yamlValue converts a node at field path at into a tree value.
func yamlValue(at string, n *yaml.Node, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("%s: nested more than %d levels", fieldName(at), maxNesting)
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return nil, fmt.Errorf("%s (line %d): YAML anchors and aliases are not allowed", fieldName(at), n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" && k.ShortTag() != "!!int" {
				return nil, fmt.Errorf("%s (line %d): a key must be plain text", fieldName(at), k.Line)
			}
			if k.Anchor != "" {
				return nil, fmt.Errorf("%s (line %d): YAML anchors and aliases are not allowed", fieldName(at), k.Line)
			}
			key := join(at, k.Value)
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("%s (line %d): given twice", key, k.Line)
			}
			val, err := yamlValue(key, v, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			val, err := yamlValue(fmt.Sprintf("%s[%d]", at, i), c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return n.Value, nil
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			err := n.Decode(&b)
			return b, err
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, fmt.Errorf("%s (line %d): not a whole number that fits", fieldName(at), n.Line)
			}
			return i, nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("%s (line %d): not a number", fieldName(at), n.Line)
			}
			return f, nil
		}
		return nil, fmt.Errorf("%s (line %d): the YAML tag %s is not allowed; write plain text", fieldName(at), n.Line, quote(n.ShortTag()))
	}
	return nil, fmt.Errorf("%s (line %d): not a value a definition holds", fieldName(at), n.Line)
}

// decodeTOML decodes a TOML definition into a tree.
func decodeTOML(data []byte) (map[string]any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("the file is not valid UTF-8")
	}
	var m map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("invalid TOML on line %d: %s", pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("invalid TOML: %w", err)
	}
	v, err := tomlValue("", m, 0)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// tomlValue converts what the TOML decoder gives into a tree value.
func tomlValue(at string, v any, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("%s: nested more than %d levels", fieldName(at), maxNesting)
	}
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, c := range v {
			val, err := tomlValue(join(at, k), c, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = val
		}
		return m, nil
	case []map[string]any:
		s := make([]any, len(v))
		for i, c := range v {
			s[i] = c
		}
		return tomlValue(at, s, depth)
	case []any:
		s := make([]any, len(v))
		for i, c := range v {
			val, err := tomlValue(fmt.Sprintf("%s[%d]", at, i), c, depth+1)
			if err != nil {
				return nil, err
			}
			s[i] = val
		}
		return s, nil
	case string, int64, bool:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: not a finite number", fieldName(at))
		}
		return v, nil
	case time.Time:
		return nil, fmt.Errorf("%s: a date or time is not a value a definition holds", fieldName(at))
	}
	return nil, fmt.Errorf("%s: not a value a definition holds", fieldName(at))
}

// join makes a field path: "mcp_servers" and "files" give "mcp_servers.files".
func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// fieldName names a field path for an error, quoting it when it holds
// anything but plain characters, and cutting it when long.
func fieldName(at string) string {
	if at == "" {
		return "frontmatter"
	}
	for _, c := range at {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '[' || c == ']' || c == '/' || c == '*') {
			return quote(at)
		}
	}
	if len(at) > 80 {
		return quote(at)
	}
	return at
}

// quote quotes a value for an error, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q...", strings.ToValidUTF8(s[:64], ""))
	}
	return fmt.Sprintf("%q", s)
}
