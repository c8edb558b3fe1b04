package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxSize bounds .agent-zero.yml and the operator's file, in bytes.
const MaxSize = 64 << 10

// maxDepth bounds how deeply either file may nest; both are shallow.
const maxDepth = 16

var (
	// ErrTooLarge reports a file over MaxSize.
	ErrTooLarge = errors.New("larger than 64 KiB")
	// ErrEndpointOrCredential reports a key named like a credential or an
	// endpoint, or a value holding a URL.
	ErrEndpointOrCredential = errors.New("endpoints and credentials come only from the operator's environment " +
		"(AGENT_ZERO_MODEL_BASE_URL, AGENT_ZERO_MODEL_API_KEY, AGENT_ZERO_GITHUB_TOKEN, AGENT_ZERO_GITLAB_TOKEN, AGENT_ZERO_WEBHOOK_SECRET)")
	// ErrShellOperator reports a check argument that is or holds a shell
	// operator.
	ErrShellOperator = errors.New("strict mode: checks run without a shell")
)

// readDocument parses data as at most one YAML document and checks its
// tree (see checkNode). It reports an empty document: no content, only
// comments, or a lone null. what names the file's fields in the error for a
// root that is not a mapping.
func readDocument(data []byte, what string) (empty bool, err error) {
	if len(data) > MaxSize {
		return false, fmt.Errorf("%d bytes: %w", len(data), ErrTooLarge)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		return false, fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return false, errors.New("more than one YAML document")
	}
	if len(doc.Content) == 0 {
		return true, nil
	}
	root := doc.Content[0]
	if err := checkNode(root, 0); err != nil {
		return false, err
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return true, nil
	}
	if root.Kind != yaml.MappingNode {
		return false, fmt.Errorf("line %d: must be a mapping of fields (%s)", root.Line, what)
	}
	return false, nil
}

// decodeStrict decodes data, already checked by readDocument, into v with
// unknown fields refused.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return errors.New(typeNames.Replace(strings.Join(te.Errors, "; ")))
		}
		return err
	}
	return nil
}

// typeNames rewords yaml.v3's type errors, which name this package's
// decoding types, into the files' own words.
var typeNames = strings.NewReplacer(
	"not found in type policy.repoFile", "is not a policy field (mode, autofix, checks, runner)",
	"not found in type policy.autofixFile", "is not an autofix field (enabled, minConfidence, allowedChangeRisks, requireIsolated)",
	"not found in type policy.runnerFile", "is not a runner field (isolation)",
	"not found in type policy.operatorFile", "is not an operator field (ceiling, isolation, eventModes, repositories, checkTimeout, sandboxReadOnly)",
	"not found in type policy.operatorRepoFile", "is not a repositories field (name, path, remote)",
	"into policy.autofixFile", "into autofix, a mapping",
	"into policy.runnerFile", "into runner, a mapping",
	"into policy.operatorRepoFile", "into a repositories entry, a mapping",
	"into []policy.argvField", "into checks, a list of argv lists",
	"into []policy.operatorRepoFile", "into repositories, a list",
	"into []policy.stringField", "into a list of strings",
	"into map[string]policy.modeField", "into eventModes, a mapping of event kinds to modes",
)

// checkNode refuses, anywhere in the tree: anchors, aliases and merge keys;
// tags other than YAML's standard ones; keys that are not plain strings,
// and duplicate keys; empty list items; keys named like a credential or an
// endpoint, and any scalar holding "://".
func checkNode(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: nested more than %d levels", n.Line, maxDepth)
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return fmt.Errorf("line %d: YAML anchors and aliases are not allowed", n.Line)
	}
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp", "!!map", "!!seq":
	case "!!merge":
		return fmt.Errorf("line %d: YAML merge keys (<<) are not allowed", n.Line)
	default:
		return fmt.Errorf("line %d: YAML tag %s is not allowed", n.Line, quoteShort(tag))
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "://") {
			return fmt.Errorf("line %d: a value looks like a URL: %w", n.Line, ErrEndpointOrCredential)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.ShortTag() == "!!null" {
				return fmt.Errorf("line %d: empty list item", c.Line)
			}
			if err := checkNode(c, depth+1); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if err := checkNode(k, depth+1); err != nil {
				return err
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return fmt.Errorf("line %d: a key must be a plain string", k.Line)
			}
			if credentialKey(k.Value) {
				return fmt.Errorf("line %d: key %s: %w", k.Line, quoteShort(k.Value), ErrEndpointOrCredential)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: key %s appears twice", k.Line, quoteShort(k.Value))
			}
			seen[k.Value] = true
			if err := checkNode(n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// credentialWords are refused as a word of a key: "apiKey", "base_url",
// "GITHUB_TOKEN" and "sshKey" all hold one.
var credentialWords = map[string]bool{
	"url": true, "urls": true, "uri": true, "endpoint": true, "endpoints": true,
	"baseurl": true, "apikey": true, "apikeys": true,
	"token": true, "tokens": true, "password": true, "passwords": true, "passwd": true,
	"secret": true, "secrets": true, "credential": true, "credentials": true,
	"key": true, "keys": true,
}

// credentialParts are refused anywhere in a key, joined or not, so that
// "accesstoken" or "dbpassword" cannot pass as one word. "url" and "key"
// are only refused as words: as substrings they are in ordinary words.
var credentialParts = []string{"token", "password", "passwd", "secret", "credential", "apikey", "baseurl", "endpoint"}

// credentialKey reports whether key is named like a credential or an
// endpoint, case-insensitively, at word level (camelCase, snake_case,
// kebab-case and dotted names are split into words).
func credentialKey(key string) bool {
	for _, w := range words(key) {
		if credentialWords[w] {
			return true
		}
	}
	joined := strings.Join(words(key), "")
	for _, p := range credentialParts {
		if strings.Contains(joined, p) {
			return true
		}
	}
	return false
}

// words splits s at non-alphanumerics and at case changes ("baseURL" is
// base, url; "APIKey" is api, key) and lowers each word.
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, strings.ToLower(string(rs[start:end])))
			start = -1
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if !unicode.IsUpper(prev) || nextLower {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return out
}

// Decoding types. Each accepts only its own YAML type: yaml.v3 on its own
// would read `enabled: "yes"` as true and `mode: 3` as the string "3".
// A null leaves a pointer to one nil, which the parsers read as absent.

// stringField is a YAML string.
type stringField string

func (s *stringField) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return typeError(n, "a string")
	}
	*s = stringField(n.Value)
	return nil
}

// boolField is true or false.
type boolField bool

func (b *boolField) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return typeError(n, "true or false")
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		return typeError(n, "true or false")
	}
	*b = boolField(v)
	return nil
}

// floatField is a YAML number.
type floatField float64

func (f *floatField) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") {
		return typeError(n, "a number")
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		return typeError(n, "a number")
	}
	*f = floatField(v)
	return nil
}

// modeField is a mode's name.
type modeField Mode

func (m *modeField) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return typeError(n, "a mode (observe, fix or autonomous)")
	}
	v, err := ParseMode(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*m = modeField(v)
	return nil
}

// argvField is one check: a list of scalars, each taken as written (so
// `[sleep, 5]` is "sleep", "5").
type argvField struct {
	argv []string
	line int
}

func (a *argvField) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return typeError(n, "a check: a list of program and arguments, like [go, test, ./...]")
	}
	a.line = n.Line
	a.argv = make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.ShortTag() == "!!null" {
			return typeError(c, "a program or argument (text)")
		}
		a.argv = append(a.argv, c.Value)
	}
	return nil
}

func typeError(n *yaml.Node, want string) error {
	got := "a " + kindName(n.Kind)
	if n.Kind == yaml.ScalarNode {
		got = n.ShortTag() + " " + quoteShort(n.Value)
	}
	return fmt.Errorf("line %d: want %s, not %s", n.Line, want, got)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

// quoteShort quotes s for an error message, cut to 64 bytes.
func quoteShort(s string) string {
	const limit = 64
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}

// plainText reports what is wrong with s as a name, an argument or a path:
// NUL, other control characters or invalid UTF-8. It returns "" for none.
func plainText(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "contains NUL"
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Sprintf("contains the control character %U", r)
		}
	}
	return ""
}
