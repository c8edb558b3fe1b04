// Package skill reads the Agent Skills format: a SKILL.md file whose YAML
// frontmatter names and describes the skill, followed by Markdown
// instructions. See https://agentskills.io/specification.
//
// SKILL.md is untrusted input. [Parse] bounds what it reads (1 MiB of file,
// 64 KiB of frontmatter), refuses YAML anchors and aliases (so an alias bomb
// cannot expand), decodes strictly (an unknown field is an error) and names
// the field in every error. [Skill.Validate] then checks the values against
// the specification. Nothing here acts on a skill: it is only read.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits on what Parse and Validate accept.
const (
	MaxFileSize            = 1 << 20  // bytes of SKILL.md
	MaxFrontmatterSize     = 64 << 10 // bytes between the --- lines
	MaxNameLength          = 64       // characters
	MaxDescriptionLength   = 1024     // characters
	MaxCompatibilityLength = 500      // characters
)

// FileName is the name of the file that makes a folder a skill.
const FileName = "SKILL.md"

// ErrTooLarge reports a SKILL.md or a frontmatter over its limit.
var ErrTooLarge = errors.New("too large")

// A Skill is a parsed SKILL.md.
type Skill struct {
	// The frontmatter fields.
	Name          string
	Description   string
	License       string            // optional
	Compatibility string            // optional: environment requirements
	Metadata      map[string]string // optional
	AllowedTools  string            // optional, "allowed-tools": tools the skill may use, space-separated

	// Body is the Markdown after the frontmatter.
	Body string
	// BodyLine is the line of SKILL.md on which Body starts, from 1.
	BodyLine int
}

// frontmatter is what the YAML decodes into; its fields are the only ones
// allowed.
type frontmatter struct {
	Name          string            `yaml:"name"`
	Description   string            `yaml:"description"`
	License       string            `yaml:"license"`
	Compatibility string            `yaml:"compatibility"`
	Metadata      map[string]string `yaml:"metadata"`
	AllowedTools  string            `yaml:"allowed-tools"`
}

// fields says what kind of YAML value each field takes.
var fields = map[string]yaml.Kind{
	"name":          yaml.ScalarNode,
	"description":   yaml.ScalarNode,
	"license":       yaml.ScalarNode,
	"compatibility": yaml.ScalarNode,
	"metadata":      yaml.MappingNode,
	"allowed-tools": yaml.ScalarNode,
}

// Parse splits SKILL.md into its YAML frontmatter, between a first line ---
// and the next line ---, and its Markdown body, and decodes the frontmatter.
// A UTF-8 byte order mark and CRLF line ends are accepted. Parse checks the
// form of the file, not the values: call [Skill.Validate] for those.
func Parse(data []byte) (*Skill, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("SKILL.md is %d bytes, more than %d: %w", len(data), MaxFileSize, ErrTooLarge)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("SKILL.md is not valid UTF-8")
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	first, rest, ok := cutLine(data)
	if !isDelimiter(first) {
		return nil, errors.New("SKILL.md must start with YAML frontmatter: a line ---, the fields, and a line ---")
	}
	if !ok {
		return nil, errors.New("frontmatter is not closed by a line ---")
	}
	fm, body, line := rest, []byte(nil), 2
	closed := false
	for off := 0; off < len(rest); {
		l, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		next := off + len(l)
		if next < len(rest) {
			next++ // the \n
		}
		if isDelimiter(bytes.TrimSuffix(l, []byte("\r"))) {
			fm, body, closed = rest[:off], rest[next:], true
			break
		}
		if next > MaxFrontmatterSize {
			return nil, fmt.Errorf("frontmatter is more than %d bytes: %w", MaxFrontmatterSize, ErrTooLarge)
		}
		off = next
		line++
	}
	if !closed {
		return nil, errors.New("frontmatter is not closed by a line ---")
	}
	s, err := decode(fm)
	if err != nil {
		return nil, err
	}
	s.Body, s.BodyLine = string(body), line+1
	return s, nil
}

// cutLine returns the first line of b without its line end, the rest after
// it, and whether there was a line end.
func cutLine(b []byte) (line, rest []byte, found bool) {
	line, rest, found = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, found
}

// isDelimiter reports a frontmatter delimiter line, trailing blanks allowed.
func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t")) == "---"
}

// decode checks the frontmatter's YAML tree, then decodes it strictly.
func decode(fm []byte) (*Skill, error) {
	// A blank first line makes the parser's line numbers those of SKILL.md,
	// where the frontmatter starts on line 2.
	src := append([]byte("\n"), fm...)
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("frontmatter is empty; name and description are required")
		}
		return nil, syntaxError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("frontmatter holds more than one YAML document")
	}
	if err := checkTree(&doc); err != nil {
		return nil, err
	}
	var f frontmatter
	strict := yaml.NewDecoder(bytes.NewReader(src))
	strict.KnownFields(true)
	if err := strict.Decode(&f); err != nil {
		return nil, yamlError(err)
	}
	return &Skill{
		Name: f.Name, Description: f.Description, License: f.License, Compatibility: f.Compatibility,
		Metadata: f.Metadata, AllowedTools: f.AllowedTools,
	}, nil
}

// syntaxError rewords a YAML syntax error. The parser's line numbers can be
// one short (it counts some from 0, some from 1), hence "near".
func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, text, ok := strings.Cut(rest, ": "); ok {
			return fmt.Errorf("frontmatter: invalid YAML near line %s: %s", n, text)
		}
	}
	return fmt.Errorf("frontmatter: invalid YAML: %s", msg)
}

// yamlError rewords an error of the strict decoder, whose line numbers are
// those of SKILL.md.
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	return fmt.Errorf("frontmatter: %s", msg)
}

// checkTree rejects what the strict decoder would accept but a skill must not
// hold: anchors and aliases, a document that is not a mapping, a field of the
// wrong shape, a value with a custom tag.
func checkTree(doc *yaml.Node) error {
	if err := noAliases(doc, 0); err != nil {
		return err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return errors.New("frontmatter must be a YAML mapping of fields (name: ..., description: ...)")
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("frontmatter line %d: a field name must be plain text", k.Line)
		}
		want, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("frontmatter line %d: unknown field %q (allowed: name, description, license, compatibility, metadata, allowed-tools)", k.Line, k.Value)
		}
		if isNull(v) {
			continue
		}
		if v.Kind != want {
			return fmt.Errorf("%s (line %d): must be %s", k.Value, v.Line, kindName(want))
		}
		if want == yaml.ScalarNode {
			if err := plainScalar(k.Value, v); err != nil {
				return err
			}
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			mk, mv := v.Content[j], v.Content[j+1]
			if mk.Kind != yaml.ScalarNode || mv.Kind != yaml.ScalarNode {
				return fmt.Errorf("metadata (line %d): must map names to text values", mk.Line)
			}
			if err := plainScalar("metadata key", mk); err != nil {
				return err
			}
			if err := plainScalar(fmt.Sprintf("metadata %q", mk.Value), mv); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxDepth bounds how deep noAliases recurses; frontmatter is shallow.
const maxDepth = 32

func noAliases(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("frontmatter line %d: nested more than %d levels", n.Line, maxDepth)
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return fmt.Errorf("frontmatter line %d: YAML anchors and aliases are not allowed", n.Line)
	}
	for _, c := range n.Content {
		if err := noAliases(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// plainScalar accepts text, numbers and booleans, which decode as their
// text, and refuses other tags (!!binary, !!timestamp, custom ones).
func plainScalar(field string, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool", "!!null":
		return nil
	}
	return fmt.Errorf("%s (line %d): the YAML tag %s is not allowed; write plain text", field, n.Line, n.ShortTag())
}

func kindName(k yaml.Kind) string {
	if k == yaml.MappingNode {
		return "a mapping of names to text values"
	}
	return "text"
}

// Validate checks the fields against the Agent Skills specification; folder
// is the name of the folder holding SKILL.md, which the name must equal. It
// reports every problem it finds, each naming its field.
func (s *Skill) Validate(folder string) error {
	var errs []error
	switch n := utf8.RuneCountInString(s.Name); {
	case n == 0:
		errs = append(errs, errors.New("name: required"))
	case n > MaxNameLength:
		errs = append(errs, fmt.Errorf("name: %d characters, more than %d", n, MaxNameLength))
	default:
		if err := checkName(s.Name); err != nil {
			errs = append(errs, err)
		} else if s.Name != folder {
			errs = append(errs, fmt.Errorf("name: %q does not match the folder name %q", s.Name, folder))
		}
	}
	switch n := utf8.RuneCountInString(s.Description); {
	case strings.TrimSpace(s.Description) == "":
		errs = append(errs, errors.New("description: required"))
	case n > MaxDescriptionLength:
		errs = append(errs, fmt.Errorf("description: %d characters, more than %d", n, MaxDescriptionLength))
	}
	if n := utf8.RuneCountInString(s.Compatibility); n > MaxCompatibilityLength {
		errs = append(errs, fmt.Errorf("compatibility: %d characters, more than %d", n, MaxCompatibilityLength))
	}
	return errors.Join(errs...)
}

// checkName checks a name's characters: lower-case letters, digits and
// single hyphens, neither first nor last.
func checkName(name string) error {
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("name: %q may hold only lower-case letters a-z, digits and hyphens", name)
		}
	}
	switch {
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Errorf("name: %q must not start or end with a hyphen", name)
	case strings.Contains(name, "--"):
		return fmt.Errorf("name: %q must not hold two hyphens in a row", name)
	}
	return nil
}
