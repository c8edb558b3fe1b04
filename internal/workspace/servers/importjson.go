package servers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// Bounds of an import.
const (
	MaxImportSize    = 1 << 20 // bytes of pasted text
	MaxImportEntries = 100     // servers in one import
	maxEntryProblems = 10      // problems listed for one entry; the rest are counted
	maxShown         = 80      // bytes of a name or placeholder quoted in a message
)

// An Imported is one entry of an imported client configuration: the
// configuration of a draft, and the secret values the entry gave (its env
// values, or its header values).
type Imported struct {
	Config  Config
	Secrets Secrets
}

// An ImportMessage is a problem or a note about an import. Entry names the
// server entry it is about, "" for the text as a whole.
type ImportMessage struct {
	Entry   string `json:"entry,omitempty"`
	Message string `json:"message"`
}

func (m ImportMessage) String() string {
	if m.Entry == "" {
		return m.Message
	}
	return fmt.Sprintf("%q: %s", m.Entry, m.Message)
}

// An ImportError lists the problems that refused an import: of its text
// as a whole (Entry ""), or of some of its entries.
type ImportError struct{ Problems []ImportMessage }

func (e *ImportError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// placeholderRE finds a client's placeholders, such as VS Code's
// ${input:token} and ${env:HOME}: none is expanded.
var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}`) })

// entryFields are the fields an entry may have.
const entryFields = "type, command, args and env (a program), or type, url and headers (a remote server)"

// ParseImport reads the server list of an MCP client's configuration:
// Claude Desktop's and Cursor's {"mcpServers": {NAME: {command, args, env}
// | {url, headers}}}, or VS Code's {"servers": {NAME: {type, command, args,
// env, url, headers}}}, whose "inputs" are ignored. Each entry, in the
// text's order, becomes a configuration with its env or header values as
// secrets. Nothing is expanded: an env or header value holding a
// placeholder such as ${input:token} or ${env:HOME} declares its name
// without a value, with a note to set it on the server's Edit page; a
// placeholder anywhere else (the command, an argument, the URL, a name)
// refuses its entry. Other top-level fields are ignored with a note; an
// unknown field in an entry refuses the entry, and a name given twice
// refuses every entry of that name.
//
// The notes say what was ignored or guessed. The entries returned are
// those without problems, for the caller to check further (a name taken,
// its policy) and import each on its own; the *ImportError lists the
// problems of the others, each with its entry, or the problem of the text
// as a whole (then no entry is returned). The text may be at most
// MaxImportSize bytes, with at most MaxImportEntries servers.
func ParseImport(data []byte) ([]Imported, []ImportMessage, error) {
	whole := func(format string, args ...any) ([]Imported, []ImportMessage, error) {
		return nil, nil, &ImportError{Problems: []ImportMessage{{Message: fmt.Sprintf(format, args...)}}}
	}
	if len(data) > MaxImportSize {
		return whole("the text is %d bytes; an import takes at most %d (1 MiB)", len(data), MaxImportSize)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return whole("the text is empty: paste a client's configuration, such as the contents of claude_desktop_config.json")
	}
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return whole("%s", syntaxProblem(data, err))
	}
	top, err := readObject(data)
	if err != nil {
		return whole("want a JSON object holding mcpServers (Claude Desktop, Cursor) or servers (VS Code)")
	}
	var problems, notes []ImportMessage // problems of entries, notes of all
	var list *member
	var ignored []string
	seen := map[string]bool{}
	for i, m := range top {
		switch m.key {
		case "mcpServers", "servers", "inputs":
			if seen[m.key] {
				return whole("the field %s appears twice", m.key)
			}
			seen[m.key] = true
		}
		switch m.key {
		case "mcpServers", "servers":
			if list != nil {
				return whole("the text holds both mcpServers and servers: import one list at a time")
			}
			list = &top[i]
		case "inputs":
			notes = append(notes, ImportMessage{Message: "the inputs list is ignored: Zero prompts for no input; set secret values on each server's Edit page"})
		default:
			ignored = append(ignored, m.key)
		}
	}
	if len(ignored) > 0 {
		notes = append(notes, ImportMessage{Message: "ignored " + nameList(ignored) + ": only the servers are imported"})
	}
	if list == nil {
		return whole("the text holds neither mcpServers (Claude Desktop, Cursor) nor servers (VS Code)")
	}
	entries, err := readObject(list.value)
	if err != nil {
		return whole("%s: want an object of servers by name", list.key)
	}
	switch {
	case len(entries) == 0:
		return whole("%s lists no servers", list.key)
	case len(entries) > MaxImportEntries:
		return whole("%s lists %d servers; an import takes at most %d", list.key, len(entries), MaxImportEntries)
	}
	var out []Imported
	times := map[string]int{}
	for _, e := range entries {
		times[e.key]++
	}
	for _, e := range entries {
		entry := shortName(e.key)
		switch n := times[e.key]; {
		case n > 1: // told once, at its first entry
			problems = append(problems, ImportMessage{Entry: entry, Message: fmt.Sprintf(
				"the name appears %d times in %s, so none of them is imported: keep one, or rename the others", n, list.key)})
			times[e.key] = -n
			continue
		case n < 0:
			continue
		}
		imp, bad, note := parseEntry(e.key, e.value)
		for _, n := range note {
			notes = append(notes, ImportMessage{Entry: entry, Message: n})
		}
		for _, p := range bad {
			problems = append(problems, ImportMessage{Entry: entry, Message: p})
		}
		if len(bad) == 0 {
			out = append(out, imp)
		}
	}
	if len(problems) > 0 {
		return out, notes, &ImportError{Problems: problems}
	}
	return out, notes, nil
}

// parseEntry reads one server entry: its configuration and secrets, or
// what is wrong with it, and notes.
func parseEntry(name string, raw json.RawMessage) (imp Imported, problems, notes []string) {
	n := 0
	bad := func(format string, args ...any) {
		if n++; n <= maxEntryProblems {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	defer func() {
		if n > maxEntryProblems {
			problems = append(problems, fmt.Sprintf("and %d more problems", n-maxEntryProblems))
		}
	}()
	if !nameRE().MatchString(name) {
		bad("the name is not one a server may have: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit; rename the entry")
	}
	fields, err := readObject(raw)
	if err != nil {
		bad("want an object with %s", entryFields)
		return imp, problems, notes
	}
	var typ, command, url string
	var args []string
	var env, headers []member
	seen, has := map[string]bool{}, map[string]bool{} // has: given, and not null
	text := func(f member, into *string) {
		if json.Unmarshal(f.value, into) != nil {
			bad("%s: want a string", f.key)
		}
	}
	for _, f := range fields {
		if seen[f.key] {
			bad("the field %s appears twice", shorten(f.key))
			continue
		}
		seen[f.key] = true
		if string(f.value) == "null" {
			continue
		}
		has[f.key] = true
		switch f.key {
		case "type":
			text(f, &typ)
		case "command":
			text(f, &command)
		case "url":
			text(f, &url)
		case "args":
			if json.Unmarshal(f.value, &args) != nil {
				bad("args: want an array of strings")
			}
		case "env", "headers":
			ms, err := readObject(f.value)
			if err != nil {
				bad("%s: want an object of names and their values", f.key)
			}
			if f.key == "env" {
				env = ms
			} else {
				headers = ms
			}
		default:
			bad("the field %s is not imported: an entry takes %s; remove it", shorten(f.key), entryFields)
		}
	}
	command, url = strings.TrimSpace(command), strings.TrimSpace(url)
	stdioFields := has["command"] || has["args"] || has["env"]
	httpFields := has["url"] || has["headers"]
	kind := typ
	switch typ {
	case "":
		switch {
		case stdioFields && httpFields:
			bad("the entry has both a program (command, args, env) and a remote server (url, headers): want one")
		case stdioFields:
			kind = KindStdio
		case httpFields:
			kind = KindHTTP
			notes = append(notes, "no type given: imported as a streamable HTTP server; if it speaks the older SSE transport, edit its kind before you approve it")
		default:
			bad("the entry has neither command (a program to run) nor url (a remote server)")
		}
	case KindStdio:
		if httpFields {
			bad("a stdio entry has no url or headers")
		}
	case KindHTTP, KindSSE:
		if stdioFields {
			bad("an %s entry has no command, args or env", typ)
		}
	default:
		bad("type %s: want stdio, http or sse", shorten(typ))
	}
	placeholder := func(what, value, fix string) {
		if p := placeholderRE().FindString(value); p != "" {
			bad("%s holds the placeholder %s, and placeholders are not expanded: %s", what, shorten(p), fix)
		}
	}
	// unset notes a value left out for its placeholder.
	unset := func(what, name, p string) {
		notes = append(notes, fmt.Sprintf("the value of %s holds the placeholder %s, which is not expanded: %s is declared without a value; set its whole value on the server's Edit page",
			what, shorten(p), shortName(name)))
	}
	const writeIt = "write the value itself"
	imp.Config = Config{Name: name, Kind: kind}
	switch kind {
	case KindStdio:
		imp.Config.Command, imp.Config.Args = command, args
		if command == "" {
			bad("command is empty")
		}
		placeholder("command", command, writeIt)
		for i, a := range args {
			placeholder(fmt.Sprintf("args[%d]", i), a, writeIt)
		}
		imp.Config.Env, imp.Secrets.Env = values("env", env, func(s string) string { return s }, bad, placeholder, unset)
	case KindHTTP, KindSSE:
		imp.Config.URL = url
		if url == "" {
			bad("url is empty")
		}
		placeholder("url", url, writeIt)
		imp.Config.Headers, imp.Secrets.Headers = values("header", headers, http.CanonicalHeaderKey, bad, placeholder, unset)
	}
	return imp, problems, notes
}

// values reads an entry's env or headers: the names, as canon writes them,
// in the text's order, and their values; a value holding a placeholder is
// left out, its name declared (see unset).
func values(kind string, ms []member, canon func(string) string, bad func(string, ...any), placeholder func(what, value, fix string),
	unset func(what, name, placeholder string)) ([]string, map[string]string) {
	if len(ms) == 0 {
		return nil, nil
	}
	var names []string
	var vals map[string]string
	seen := map[string]bool{}
	for _, m := range ms {
		name := canon(m.key)
		what := kind + " " + shorten(name)
		if seen[name] {
			bad("%s appears twice", what)
			continue
		}
		seen[name] = true
		var v string
		if json.Unmarshal(m.value, &v) != nil {
			bad("%s: want a string value", what)
		}
		placeholder("the "+kind+" name "+shorten(name), name, "rename it")
		names = append(names, name)
		if p := placeholderRE().FindString(v); p != "" {
			unset(what, name, p)
			continue
		}
		if vals == nil {
			vals = map[string]string{}
		}
		vals[name] = v
	}
	return names, vals
}

// A member is one field of a JSON object, in the text's order.
type member struct {
	key   string
	value json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// readObject reads the fields of the JSON object data holds (which must be
// valid JSON), in order, duplicates included.
func readObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string) // the decoder accepts only a string here
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, bytes.TrimSpace(v)})
	}
	return out, nil
}

// syntaxProblem explains why data is not JSON, saying where.
func syntaxProblem(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return "the text is not JSON: " + err.Error()
	}
	if se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "end of JSON input") {
		return "the text is not JSON: it ends before the JSON does (a missing } or ]?)"
	}
	before := data[:max(0, min(se.Offset-1, int64(len(data))))] // up to the character refused
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	hint := ""
	if strings.Contains(se.Error(), "invalid character '/'") {
		hint = "; VS Code's mcp.json may hold comments, which JSON does not allow: remove them"
	}
	return fmt.Sprintf("the text is not JSON: %v (line %d, column %d)%s", se, line, col, hint)
}

// shorten quotes s for a message, bounded.
func shorten(s string) string { return fmt.Sprintf("%q", shortName(s)) }

// shortName bounds a name a message carries.
func shortName(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}

// nameList lists a few names, bounded.
func nameList(names []string) string {
	const most = 5
	var quoted []string
	for i, n := range names {
		if i == most {
			quoted = append(quoted, fmt.Sprintf("and %d more", len(names)-most))
			break
		}
		quoted = append(quoted, shorten(n))
	}
	return strings.Join(quoted, ", ")
}
