package definitions

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse: Parse never panics, gives the same answer twice, and its
// errors are one line of at most maxErrorLength bytes (and "...");
// what it accepts holds a valid name, a known wire API, max_turns in range,
// and servers each with one transport.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"openrouter.toml", "claude.md", "codex.toml", "opencode.md"} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(0), file, data)
	}
	f.Add(uint8(1), "a.md", []byte(md("mcpServers:\n  - s: {command: c, env: {A: \"${B}\"}}")))
	f.Add(uint8(3), "a.md", []byte(md("tools:\n  x/y: true\npermission: {bash: {\"*\": ask}}")))
	f.Add(uint8(0), "a.md", []byte(md("x: &a [*a]")))
	f.Fuzz(func(t *testing.T, p uint8, file string, data []byte) {
		place := Places[int(p)%len(Places)]
		src := place + "/" + file
		d1, err1 := Parse(place, src, data)
		d2, err2 := Parse(place, src, data)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("two answers: %v / %v", err1, err2)
		}
		if diff := cmp.Diff(d1, d2); diff != "" {
			t.Fatalf("two definitions:\n%s", diff)
		}
		if err1 != nil {
			msg := err1.Error()
			if strings.Contains(msg, "\n") || len(msg) > maxErrorLength+3 || !utf8.ValidString(msg) {
				t.Fatalf("error not one bounded line: %q", msg)
			}
			if errors.Is(err1, ErrNotSubagent) && place != PlaceOpenCode && place != PlaceClaude {
				t.Fatalf("ErrNotSubagent from %s", place)
			}
			return
		}
		if checkName("name", d1.Name) != nil || d1.MaxTurns < 1 || d1.MaxTurns > MaxMaxTurns || d1.EnvKey == "" || d1.BaseURL == "" {
			t.Fatalf("accepted an invalid definition: %+v", d1)
		}
		switch d1.WireAPI {
		case wireChat, wireResponses, wireAnthropic:
		default:
			t.Fatalf("wire API %q", d1.WireAPI)
		}
		for _, s := range d1.Servers {
			if (s.Command == "") == (s.URL == "") {
				t.Fatalf("server %q with one transport not exactly: %+v", s.Name, s)
			}
		}
	})
}
