package workspace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

// A toolReview is a changed or new tool as the drift review shows it: the
// fields that differ from the approved tool (all of a new tool's), each as
// approved and as listed now. The template shows every line of them with
// its hidden characters escaped (visible), the tool's name too.
type toolReview struct {
	Name   string
	New    bool // no approved fields to show
	Fields []fieldReview
}

// A fieldReview is one field of a tool: its label, its name as the API
// says it, and its lines as approved and as listed now (none when it is
// empty or null).
type fieldReview struct {
	Label, Field     string
	Approved, Listed []string
}

// fieldLabels name the fields a runtime.FieldDiff holds.
var fieldLabels = map[string]string{
	"description": "Description", "title": "Title", "input_schema": "Input schema",
	"output_schema": "Output schema", "annotations": "Annotations",
}

// reviewField shows one field: text as it is, a schema or the annotations
// indented (white space only), each cut into its lines.
func reviewField(field, approved, listed string) fieldReview {
	if field != "description" && field != "title" {
		approved, listed = indentJSON(approved), indentJSON(listed)
	}
	return fieldReview{Label: cmp.Or(fieldLabels[field], field), Field: field, Approved: textLines(approved), Listed: textLines(listed)}
}

// textLines cuts text into its lines; none for "".
func textLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// indentJSON indents a JSON value, which adds white space only; null is
// none, and text that is not JSON stays as it is.
func indentJSON(text string) string {
	var b bytes.Buffer
	if text == "null" {
		return ""
	}
	if json.Indent(&b, []byte(text), "", "  ") != nil {
		return text
	}
	return b.String()
}

// toolReviews lists what the owner reviews of s's drift: each changed tool
// with the fields that differ, and each new tool with all of its fields as
// listed now. A removed tool is its name only, which the page lists.
func toolReviews(s servers.Server) (changed, added []toolReview) {
	if s.Drift == nil {
		return nil, nil
	}
	for _, d := range s.Drift.Diffs {
		r := toolReview{Name: d.Name}
		for _, f := range d.Fields {
			r.Fields = append(r.Fields, reviewField(f.Field, f.Approved, f.Listed))
		}
		changed = append(changed, r)
	}
	for _, t := range s.ListedTools {
		if !slices.Contains(s.Drift.Added, t.Name) {
			continue
		}
		r := toolReview{Name: t.Name, New: true}
		for _, f := range []struct{ field, value string }{
			{"title", t.Title}, {"description", t.Description}, {"input_schema", string(t.InputSchema)},
			{"output_schema", string(t.OutputSchema)}, {"annotations", string(t.Annotations)},
		} {
			if f.value != "" && f.value != "null" || f.field == "annotations" { // none: each hint counts as unsafe
				r.Fields = append(r.Fields, reviewField(f.field, "", f.value))
			}
		}
		added = append(added, r)
	}
	return changed, added
}
