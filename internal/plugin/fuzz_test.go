package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/pin"
)

// maxError bounds what one Parse error may say.
const maxError = len("invalid plugin.json: ") + maxProblems*(maxProblem+len("…; ")) + len("and 1000000 more problems")

// FuzzParse reads untrusted manifests. Seeds: every refusal of
// TestParseRefuses, the manifests TestParseAccepts reads, and the example.
// Parse must never panic, must give the same answer twice, must refuse
// with ErrManifest and a bounded error, and what it accepts must hold
// everything its doc promises.
func FuzzParse(f *testing.F) {
	for _, r := range refusals {
		f.Add([]byte(r.json))
	}
	f.Add([]byte(`{"name": "p"}`))
	f.Add([]byte(withTools(`{"fs.read": ["notes"], "fs.write": ["out"], "network.hosts": ["[::1]:8080"], "process": true, "secrets": ["K"], "limits": {"timeout_ms": 1000}}`,
		tool("reader", `{"fs.read": ["notes/a", "out"]}`), tool("caller", `{"network.hosts": ["[::1]:8080"], "process": true}`))))
	f.Add([]byte(withParams(`{"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}`)))
	example, err := os.ReadFile(filepath.Join(exampleDir, ManifestFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		m2, err2 := Parse(data)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Parse is not deterministic: %v, then %v", err, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrManifest) {
				t.Fatalf("error %v does not wrap ErrManifest", err)
			}
			if len(err.Error()) > maxError {
				t.Fatalf("error of %d bytes, over %d", len(err.Error()), maxError)
			}
			return
		}
		if diff := cmp.Diff(m, m2); diff != "" {
			t.Fatalf("Parse is not deterministic (-first +second):\n%s", diff)
		}
		if len(data) > MaxManifest {
			t.Fatalf("accepted %d bytes", len(data))
		}
		if why := NameProblem(m.Name); why != "" {
			t.Fatalf("accepted the name %q, which %s", m.Name, why)
		}
		if m.Zero == nil {
			return
		}
		checkExtension(t, m.Zero)
	})
}

// checkExtension checks what Parse promises of an accepted Zero's part.
func checkExtension(t *testing.T, e *Extension) {
	if why := entryProblem(e.Entry); why != "" {
		t.Fatalf("accepted the entry %q, which %s", e.Entry, why)
	}
	if err := e.Capabilities.Check(); err != nil {
		t.Fatalf("accepted capabilities that Check refuses: %v", err)
	}
	if _, err := e.Capabilities.Hash(); err != nil {
		t.Fatal(err)
	}
	if len(e.Tools) == 0 {
		t.Fatal("accepted no tools")
	}
	names := map[string]bool{}
	for i := range e.Tools {
		tl := &e.Tools[i]
		if why := ToolNameProblem(tl.Name); why != "" {
			t.Fatalf("accepted the tool name %q, which %s", tl.Name, why)
		}
		if names[strings.ToLower(tl.Name)] {
			t.Fatalf("accepted the tool name %q twice", tl.Name)
		}
		names[strings.ToLower(tl.Name)] = true
		if err := tl.Capabilities.Check(); err != nil {
			t.Fatalf("tool %q: accepted capabilities that Check refuses: %v", tl.Name, err)
		}
		if tl.Capabilities.Limits != nil {
			t.Fatalf("tool %q: accepted limits", tl.Name)
		}
		within := tl.Capabilities
		within.Limits = e.Capabilities.Limits
		if beyond := within.Beyond(e.Capabilities); len(beyond) > 0 {
			t.Fatalf("tool %q: accepted capabilities beyond the plugin's: %v", tl.Name, beyond)
		}
		if canon, err := pin.CanonicalJSON(tl.Parameters); err != nil || !bytes.Equal(canon, tl.Parameters) {
			t.Fatalf("tool %q: parameters %q are not in canonical form: %v", tl.Name, tl.Parameters, err)
		}
		if _, err := tl.Hash(); err != nil {
			t.Fatalf("tool %q: %v", tl.Name, err)
		}
		schema, err := tl.InputSchema()
		if err != nil {
			t.Fatalf("tool %q: %v", tl.Name, err)
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
			t.Fatalf("tool %q: input schema %s is not of type object: %v", tl.Name, schema, err)
		}
		for j, name := range s.Required {
			if _, ok := s.Properties[name]; !ok || slices.Index(s.Required, name) != j {
				t.Fatalf("tool %q: required %q is not a property, or is listed twice", tl.Name, name)
			}
		}
	}
}
