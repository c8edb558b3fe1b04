package runtime

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// A Drift is how a listing differs from the approved tool set: the names
// of the tools changed (another hash), added and removed, each list
// alphabetical, and for each changed tool what differs.
type Drift struct {
	Changed []string   `json:"changed"`
	Added   []string   `json:"added"`
	Removed []string   `json:"removed"`
	Diffs   []ToolDiff `json:"diffs,omitempty"`
}

// Empty reports whether the listing is the approved set.
func (d Drift) Empty() bool {
	return len(d.Changed)+len(d.Added)+len(d.Removed) == 0
}

// A ToolDiff is what differs in one changed tool, field by field (the
// fields the hash covers, and the title and output schema, which a review
// shows too), and the annotation escalations among it.
type ToolDiff struct {
	Name        string       `json:"name"`
	Fields      []FieldDiff  `json:"fields"`
	Escalations []Escalation `json:"escalations,omitempty"`
}

// A FieldDiff is one field of a tool as approved and as listed now: text,
// or canonical JSON for a schema or the annotations. The field "hash" says
// that the tool was approved under the first tool hash, which did not
// cover its title and output schema, and is otherwise as approved.
type FieldDiff struct {
	Field    string `json:"field"` // description, title, input_schema, output_schema, annotations, hash
	Approved string `json:"approved"`
	Listed   string `json:"listed"`
}

// An Escalation is an annotation hint that went from its safe value to
// its unsafe one between the approved tool and the listed one. A hint that
// is missing counts as its unsafe value, as the MCP defaults have it
// (readOnlyHint false, destructiveHint true, idempotentHint false,
// openWorldHint true).
type Escalation struct {
	Hint     string `json:"hint"`
	Approved bool   `json:"approved"`
	Listed   bool   `json:"listed"`
}

// hints are the annotation hints, each with its unsafe value.
var hints = []struct {
	name   string
	unsafe bool
}{
	{"readOnlyHint", false},
	{"destructiveHint", true},
	{"idempotentHint", false},
	{"openWorldHint", true},
}

// Compare reports how listed differs from approved (each by name, as a
// Listing holds them). A nil approved set counts as empty: every tool is
// added.
func Compare(approved, listed []Tool) Drift {
	d := Drift{Changed: []string{}, Added: []string{}, Removed: []string{}}
	before := map[string]Tool{}
	for _, t := range approved {
		before[t.Name] = t
	}
	now := map[string]bool{}
	for _, t := range listed {
		now[t.Name] = true
		a, ok := before[t.Name]
		switch {
		case !ok:
			d.Added = append(d.Added, t.Name)
		case a.Hash != t.Hash:
			d.Changed = append(d.Changed, t.Name)
			d.Diffs = append(d.Diffs, diff(a, t))
		}
	}
	for _, t := range approved {
		if !now[t.Name] {
			d.Removed = append(d.Removed, t.Name)
		}
	}
	slices.Sort(d.Changed)
	slices.Sort(d.Added)
	slices.Sort(d.Removed)
	slices.SortFunc(d.Diffs, func(a, b ToolDiff) int { return strings.Compare(a.Name, b.Name) })
	return d
}

// What each tool hash covers, as a review shows it.
const (
	hashV1Fields = "first tool hash (zero-mcp-tool-v1): name, description, input schema, annotations"
	hashFields   = "tool hash v2 (zero-mcp-tool-v2): name, title, description, input and output schemas, annotations"
)

// diff lists what differs between an approved tool and the same tool
// listed now.
func diff(a, b Tool) ToolDiff {
	d := ToolDiff{Name: b.Name, Fields: []FieldDiff{}}
	add := func(field, before, after string) {
		if before != after {
			d.Fields = append(d.Fields, FieldDiff{field, before, after})
		}
	}
	add("description", a.Description, b.Description)
	add("title", a.Title, b.Title)
	add("input_schema", compactJSON(a.InputSchema), compactJSON(b.InputSchema))
	add("output_schema", compactJSON(a.OutputSchema), compactJSON(b.OutputSchema))
	add("annotations", compactJSON(a.Annotations), compactJSON(b.Annotations))
	if a.Hash == b.HashV1 {
		add("hash", hashV1Fields, hashFields)
	}
	d.Escalations = Escalations(a.Annotations, b.Annotations)
	return d
}

// Escalations lists the hints that went from safe to unsafe between two
// tools' annotations (JSON objects; null or missing means no hints).
func Escalations(approved, listed json.RawMessage) []Escalation {
	before, after := hintsOf(approved), hintsOf(listed)
	var out []Escalation
	for _, h := range hints {
		if before[h.name] != h.unsafe && after[h.name] == h.unsafe {
			out = append(out, Escalation{Hint: h.name, Approved: before[h.name], Listed: after[h.name]})
		}
	}
	return out
}

// hintsOf reads the four hints of an annotations object, a missing or
// non-boolean one as its unsafe value.
func hintsOf(raw json.RawMessage) map[string]bool {
	var fields map[string]json.RawMessage
	json.Unmarshal(raw, &fields)
	out := map[string]bool{}
	for _, h := range hints {
		out[h.name] = h.unsafe
		var v bool
		if f, ok := fields[h.name]; ok && json.Unmarshal(f, &v) == nil {
			out[h.name] = v
		}
	}
	return out
}

// compactJSON is raw without insignificant space, "" for none.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
