package graphstore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func copyTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// referenceGraph is what testdata/memory-written-by-reference.jsonl holds.
var referenceGraph = Graph{
	Entities: []Entity{
		ent("Ada Lovelace", "person", "wrote the first program"),
		ent("Analytical Engine", "machine", "designed by Babbage"),
		ent("Zürich ☃ 日本", "place", "unicode: éè 😀", "quote \" and backslash \\ and newline \n inside"),
		ent("Empty", "thing", "no longer empty"),
	},
	Relations: []Relation{
		rel("Ada Lovelace", "Analytical Engine", "wrote programs for"),
		rel("Analytical Engine", "Zürich ☃ 日本", "exhibited in"),
	},
}

// TestReadsReferenceFile reads a file the reference server wrote, and
// writes it back byte for byte.
func TestReadsReferenceFile(t *testing.T) {
	path := copyTestdata(t, "memory-written-by-reference.jsonl")
	orig, _ := os.ReadFile(path)
	s := openT(t, path)
	if diff := cmp.Diff(referenceGraph, must(s.Read())(t)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A change and its undoing leave a log; closing compacts it.
	must(s.CreateEntities([]Entity{ent("tmp", "t")}))(t)
	if err := s.DeleteEntities([]string{"tmp"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Errorf("rewritten file differs:\n%s\nwant:\n%s", got, orig)
	}
}

// goldenGraph has the characters JSON escapes differently from one encoder
// to another.
var goldenGraph = Graph{
	Entities: []Entity{
		ent("Zoë \"the quoted\"", "person", "back\\slash", "line one\nline two", "tab\there", "ctrl \x01\x1f\x7f", "html <b>&amp;</b>", "seps \u2028 \u2029", "emoji 😀 日本語", "slash / done"),
		ent("empty", "thing"),
	},
	Relations: []Relation{rel("Zoë \"the quoted\"", "empty", "owns \"it\"")},
}

// TestFormatGolden writes a small graph and compares the file, byte for
// byte, with testdata/golden.jsonl, which the reference server writes for
// the same graph (TestReferenceWritesGolden).
func TestFormatGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := openT(t, path)
	must(s.CreateEntities(goldenGraph.Entities))(t)
	must(s.CreateRelations(goldenGraph.Relations))(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden.jsonl")
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("file differs from %s:\n%s\nwant:\n%s", golden, got, want)
	}
	if diff := cmp.Diff(goldenGraph, readAll(t, path)); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

func TestAppendJSONString(t *testing.T) {
	// What JSON.stringify writes (checked in Node 20).
	tests := map[string]string{
		"plain":         `"plain"`,
		"\"\\/":         `"\"\\/"`,
		"\b\f\n\r\t":    `"\b\f\n\r\t"`,
		"\x00\x01\x1f":  `"\u0000\u0001\u001f"`,
		"\x7f<>&":       "\"\x7f<>&\"",
		"\u2028\u2029":  "\"\u2028\u2029\"",
		"é😀":            `"é😀"`,
		"bad \xff utf8": "\"bad \uFFFD utf8\"",
	}
	for in, want := range tests {
		if got := string(AppendJSONString(nil, in)); got != want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestCorruptFileFailsAndStaysUnchanged gives the store files with a line
// it cannot read: opening fails with an error naming the line and the byte
// offset, and the files' bytes do not change.
func TestCorruptFileFailsAndStaysUnchanged(t *testing.T) {
	good := `{"type":"entity","name":"a","entityType":"t","observations":[]}`
	tests := []struct {
		name, content string
		line          int
		offset        int64
		reason        string
	}{
		{"not JSON", good + "\n{not json}\n" + good, 2, int64(len(good)) + 2, "invalid character 'n'"},
		{"cut short", good + "\n" + good[:30], 2, int64(len(good)) + 1 + 30, "unterminated string"},
		{"no name", good + "\n" + `{"type":"entity","entityType":"t","observations":[]}`, 2, int64(len(good)) + 1, `entity without a string "name"`},
		{"number observation", `{"type":"entity","name":"a","entityType":"t","observations":[1]}`, 1, 0, "observations"},
		{"relation without to", `{"type":"relation","from":"a","relationType":"r"}`, 1, 0, `relation without a string "to"`},
		{"control character", "{\"type\":\"entity\",\"name\":\"a\x01\"}", 1, 26, "control character"},
		{"trailing data", good + " x", 1, int64(len(good)) + 1, "invalid character 'x'"},
		{"two objects", good + good, 1, int64(len(good)), "invalid character '{'"},
		{"bad escape", `{"type":"x","v":"\q"}`, 1, 17, "invalid escape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "memory.jsonl")
			os.WriteFile(path, []byte(tt.content), 0o644)
			s, err := Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CorruptError", err)
			}
			if ce.Line != tt.line || ce.Offset != tt.offset || !strings.Contains(ce.Reason, tt.reason) {
				t.Errorf("got line %d, offset %d, %q; want line %d, offset %d, %q", ce.Line, ce.Offset, ce.Reason, tt.line, tt.offset, tt.reason)
			}
			if !strings.Contains(err.Error(), "line ") || !strings.Contains(err.Error(), "byte offset ") {
				t.Errorf("message %q names no line or offset", err)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("file changed to %q", b)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 { // the file and its lock
				t.Errorf("files in the directory: %v", entries)
			}
		})
	}
}

// TestOpenEvenIfCorrupt opens a file with a bad line, and a change log
// beside it, for a server that must start: every operation, Close
// included, fails with the *CorruptError and writes nothing, until the
// line is fixed; then the graph reads, with the log's changes.
func TestOpenEvenIfCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	must(s.CreateEntities([]Entity{ent("logged", "t")}))(t)
	good, _ := os.ReadFile(path)
	log, _ := os.ReadFile(path + LogSuffix)
	bad := string(good) + "\n{oops"
	os.WriteFile(path, []byte(bad), 0o644)
	if _, err := Open(path); err == nil {
		t.Fatal("Open succeeded on a corrupt file")
	}

	c, err := OpenEvenIfCorrupt(path)
	if err != nil {
		t.Fatalf("OpenEvenIfCorrupt: %v", err)
	}
	var ce *CorruptError
	if err := c.Check(); !errors.As(err, &ce) || ce.Line != 2 || ce.Path != path {
		t.Errorf("Check: %v", err)
	}
	ops := map[string]func() error{
		"Read":               func() error { _, err := c.Read(); return err },
		"Search":             func() error { _, err := c.Search("a"); return err },
		"Nodes":              func() error { _, err := c.Nodes([]string{"a"}); return err },
		"CreateEntities":     func() error { _, err := c.CreateEntities([]Entity{ent("b", "t")}); return err },
		"CreateRelations":    func() error { _, err := c.CreateRelations([]Relation{rel("a", "b", "r")}); return err },
		"AddObservations":    func() error { _, err := c.AddObservations([]Observations{{"a", []string{"o"}}}); return err },
		"DeleteEntities":     func() error { return c.DeleteEntities([]string{"a"}) },
		"DeleteObservations": func() error { return c.DeleteObservations([]Observations{{"a", []string{"o"}}}) },
		"DeleteRelations":    func() error { return c.DeleteRelations([]Relation{rel("a", "b", "r")}) },
		"Compact":            c.Compact,
	}
	for name, op := range ops {
		if err := op(); !errors.As(err, &ce) || !strings.Contains(err.Error(), "line 2, byte offset ") || !strings.Contains(err.Error(), "fix or remove that line") {
			t.Errorf("%s: %v", name, err)
		}
	}
	unchanged := func(when string) {
		t.Helper()
		if b, _ := os.ReadFile(path); string(b) != bad {
			t.Errorf("%s: the file changed to %q", when, b)
		}
		if b, _ := os.ReadFile(path + LogSuffix); !bytes.Equal(b, log) {
			t.Errorf("%s: the change log changed to %q", when, b)
		}
	}
	unchanged("after the operations")
	if err := c.Close(); !errors.As(err, &ce) {
		t.Errorf("Close: %v", err)
	}
	unchanged("after Close")

	// Fixed while open: the next operation reads it.
	c, err = OpenEvenIfCorrupt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(); err == nil {
		t.Fatal("Read succeeded on a corrupt file")
	}
	os.WriteFile(path, good, 0o644)
	if err := c.Check(); err != nil {
		t.Errorf("Check after the fix: %v", err)
	}
	want := Graph{Entities: []Entity{ent("a", "t"), ent("logged", "t")}, Relations: []Relation{}}
	if diff := cmp.Diff(want, must(c.Read())(t)); diff != "" {
		t.Errorf("after the fix (-want +got):\n%s", diff)
	}
}

// TestOpenRefusesUnusablePaths checks that a path no graph can be kept at
// fails to open, OpenEvenIfCorrupt included, and leaves nothing behind.
func TestOpenRefusesUnusablePaths(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for _, path := range []string{sub, filepath.Join(dir, "missing", "memory.jsonl")} {
		for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenEvenIfCorrupt": OpenEvenIfCorrupt} {
			if s, err := open(path); err == nil {
				s.Close()
				t.Errorf("%s(%s) succeeded", name, path)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left in the directory: %v", entries)
	}
}

// TestCorruptionWhileOpenStopsWrites corrupts the main file, then the log,
// under an open store: operations fail with the error, and nothing is
// written over the files.
func TestCorruptionWhileOpenStopsWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	bad := `{"type":"entity","name":"a","entityType":"t","observations":[]}` + "\n" + `{"type":"entity",`
	replaceFile(t, path, bad)
	var ce *CorruptError
	if _, err := s.Read(); !errors.As(err, &ce) || ce.Line != 2 {
		t.Errorf("Read: %v", err)
	}
	if _, err := s.CreateEntities([]Entity{ent("b", "t")}); !errors.As(err, &ce) {
		t.Errorf("CreateEntities: %v", err)
	}
	if err := s.Close(); !errors.As(err, &ce) {
		t.Errorf("Close: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("file changed to %q", b)
	}

	// A log line whose CRC does not match, before the last line.
	path = filepath.Join(t.TempDir(), "memory.jsonl")
	s = openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	must(s.CreateEntities([]Entity{ent("b", "t")}))(t)
	log, _ := os.ReadFile(path + LogSuffix)
	i := bytes.Index(log, []byte(`"a"`))
	log[i+1] = 'z'
	os.WriteFile(path+LogSuffix, log, 0o600)
	_, err := Open(path)
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Reason != "CRC mismatch" {
		t.Errorf("Open with a bad log line: %v", err)
	}
	if _, err := s.CreateEntities([]Entity{ent("c", "t")}); err == nil {
		t.Errorf("a write went through with a corrupt log")
	}
	if b, _ := os.ReadFile(path + LogSuffix); !bytes.Equal(b, log) {
		t.Errorf("log changed")
	}
}

// TestUnknownLinesKept reads lines the reference would drop (other types,
// unknown members, other spellings of the same JSON) and checks that they
// are written back byte for byte, and unknown members kept when their
// entity changes.
func TestUnknownLinesKept(t *testing.T) {
	lines := []string{
		`{"type":"entity","name":"plain","entityType":"t","observations":["a"]}`,
		`{"name":"spaced", "type":"entity", "entityType":"t", "observations":[]}`,
		`{"type":"entity","name":"extra","entityType":"t","observations":["x"],"createdAt":"2026-01-01","weight":{"v":[1,2.5e3,null]}}`,
		`{"type":"entity","name":"esc\u0061ped","entityType":"t","observations":[]}`,
		`{"type":"relation","from":"plain","to":"extra","relationType":"r","since":1999}`,
		`{"type":"note","text":"not an entity"}`,
		`{"no type":true}`,
		`[1,2,3]`,
		`"just a string"`,
		`{"type":"relation","from":"extra","to":"plain","relationType":"r"}`,
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n\n  \n"), 0o644)
	s := openT(t, path)
	want := Graph{
		Entities:  []Entity{ent("plain", "t", "a"), ent("spaced", "t"), ent("extra", "t", "x"), ent("escaped", "t")},
		Relations: []Relation{rel("plain", "extra", "r"), rel("extra", "plain", "r")},
	}
	if diff := cmp.Diff(want, must(s.Read())(t)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	must(s.CreateEntities([]Entity{ent("new", "t")}))(t)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	wantFile := strings.Join([]string{lines[0], lines[1], lines[2], lines[3],
		`{"type":"entity","name":"new","entityType":"t","observations":[]}`,
		lines[4], lines[9], lines[5], lines[6], lines[7], lines[8]}, "\n")
	if b, _ := os.ReadFile(path); string(b) != wantFile {
		t.Errorf("file:\n%s\nwant:\n%s", b, wantFile)
	}
	// Changing the entity with unknown members keeps them, after its own.
	must(s.AddObservations([]Observations{{"extra", []string{"y"}}, {"spaced", []string{"z"}}}))(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantFile = strings.Join([]string{lines[0],
		`{"type":"entity","name":"spaced","entityType":"t","observations":["z"]}`,
		`{"type":"entity","name":"extra","entityType":"t","observations":["x","y"],"createdAt":"2026-01-01","weight":{"v":[1,2.5e3,null]}}`,
		lines[3],
		`{"type":"entity","name":"new","entityType":"t","observations":[]}`,
		lines[4], lines[9], lines[5], lines[6], lines[7], lines[8]}, "\n")
	if b, _ := os.ReadFile(path); string(b) != wantFile {
		t.Errorf("file:\n%s\nwant:\n%s", b, wantFile)
	}
}

// TestDuplicateNamesKept reads a file with a name and a relation twice, as
// hand edits or the reference's lost updates leave it. Reads show every
// copy, in the file's order, as the reference's do; add_observations acts
// on the first copy, as the reference's does; deleting an observation or an
// entity reaches every copy; and a rewrite keeps each line it did not
// change byte for byte.
func TestDuplicateNamesKept(t *testing.T) {
	lines := []string{
		`{"type":"entity","name":"a","entityType":"t","observations":["x","y"]}`,
		`{"type":"entity","name":"b","entityType":"t","observations":[]}`,
		`{"type":"entity","name":"a","entityType":"u","observations":["y","z"],"since":1}`,
		`{"type":"relation","from":"a","to":"b","relationType":"r"}`,
		`{"type":"relation","from":"a","to":"b","relationType":"r"}`,
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
	s := openT(t, path)
	both := []Relation{rel("a", "b", "r"), rel("a", "b", "r")}
	whole := Graph{Entities: []Entity{ent("a", "t", "x", "y"), ent("b", "t"), ent("a", "u", "y", "z")}, Relations: both}
	if diff := cmp.Diff(whole, must(s.Read())(t)); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Graph{Entities: []Entity{ent("a", "u", "y", "z")}, Relations: both}, must(s.Search("Z"))(t)); diff != "" {
		t.Errorf("Search (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Graph{Entities: []Entity{ent("a", "t", "x", "y"), ent("a", "u", "y", "z")}, Relations: both}, must(s.Nodes([]string{"a"}))(t)); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}

	// A rewrite keeps both copies, byte for byte.
	must(s.CreateEntities([]Entity{ent("a", "again"), ent("c", "t")}))(t)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{lines[0], lines[1], lines[2], `{"type":"entity","name":"c","entityType":"t","observations":[]}`, lines[3], lines[4]}, "\n")
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("after a compaction:\n%s\nwant:\n%s", b, want)
	}

	// add_observations changes the first copy only; the second stays as it was.
	added := must(s.AddObservations([]Observations{{"a", []string{"z", "w"}}}))(t)
	if diff := cmp.Diff([]Observations{{"a", []string{"z", "w"}}}, added); diff != "" {
		t.Errorf("AddObservations (-want +got):\n%s", diff)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	want = strings.Join([]string{`{"type":"entity","name":"a","entityType":"t","observations":["x","y","z","w"]}`, lines[1], lines[2],
		`{"type":"entity","name":"c","entityType":"t","observations":[]}`, lines[3], lines[4]}, "\n")
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("after add_observations:\n%s\nwant:\n%s", b, want)
	}

	// A deleted observation leaves every copy.
	if err := s.DeleteObservations([]Observations{{"a", []string{"y"}}}); err != nil {
		t.Fatal(err)
	}
	if g := must(s.Nodes([]string{"a"}))(t); len(g.Entities) != 2 || slices.Contains(g.Entities[0].Observations, "y") || slices.Contains(g.Entities[1].Observations, "y") {
		t.Errorf("after deleting y: %+v", g.Entities)
	}
	// Deleting the relation or the entity removes every copy.
	if err := s.DeleteRelations([]Relation{rel("a", "b", "r")}); err != nil {
		t.Fatal(err)
	}
	if g := must(s.Read())(t); len(g.Relations) != 0 {
		t.Errorf("relations after delete_relations: %v", g.Relations)
	}
	must(s.CreateRelations([]Relation{rel("c", "a", "r")}))(t)
	if err := s.DeleteEntities([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want = lines[1] + "\n" + `{"type":"entity","name":"c","entityType":"t","observations":[]}`
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("after delete_entities:\n%s\nwant:\n%s", b, want)
	}
}

// FuzzLoad feeds the main file reader arbitrary bytes. It must not panic;
// whatever it accepts must agree, line by line, with encoding/json, and
// writing it back and reading that again must give the same graph and the
// same bytes.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"memory-written-by-reference.jsonl", "golden.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"type":"entity","name":"a\ud83d\ude00\ud800","entityType":"t","observations":["\u00e9"],"x":[{}]}` + "\n" + `{"type":"relation","from":"a","to":"b","relationType":"r"}` + "\n" + `[1]`)
	f.Add("{\"type\":\"entity\",\"name\":\"\xff\",\"entityType\":\"t\",\"observations\":[]}\r\n\n \u00a0\n")
	f.Fuzz(func(t *testing.T, data string) {
		g, err := parseMain("fuzz", data)
		checkAgainstStdlib(t, data, err)
		if err != nil {
			return
		}
		var first bytes.Buffer
		w := bufio.NewWriter(&first)
		writeMain(w, g)
		g2, err := parseMain("fuzz", first.String())
		if err != nil {
			t.Fatalf("written file does not read: %v\n%q", err, first.String())
		}
		if diff := cmp.Diff(g.all(), g2.all()); diff != "" {
			t.Fatalf("graph changed through a write (-first +second):\n%s", diff)
		}
		var second bytes.Buffer
		w = bufio.NewWriter(&second)
		writeMain(w, g2)
		if first.String() != second.String() {
			t.Fatalf("second write differs:\n%q\n%q", first.String(), second.String())
		}
		// Nothing is lost: the lines written are the lines read, but for
		// blank ones, each byte for byte (entities, relations, then others).
		var read, written []string
		for _, l := range strings.Split(data, "\n") {
			if !jsBlank(l) {
				read = append(read, l)
			}
		}
		if first.Len() > 0 {
			written = strings.Split(first.String(), "\n")
		}
		slices.Sort(read)
		slices.Sort(written)
		if diff := cmp.Diff(read, written); diff != "" {
			t.Fatalf("lines read and written differ (-read +written):\n%s", diff)
		}
	})
}

// checkAgainstStdlib checks the reader's verdict on each line against
// encoding/json's.
func checkAgainstStdlib(t *testing.T, data string, loadErr error) {
	var ce *CorruptError
	errors.As(loadErr, &ce)
	var scratch []byte
	for i, line := range strings.Split(data, "\n") {
		if ce != nil && i+1 > ce.Line {
			return
		}
		if jsBlank(line) || strings.Count(line, "[")+strings.Count(line, "{") > maxDepth/2 {
			continue
		}
		kind, e, r, _, perr := parseLine(line, &scratch)
		valid := json.Valid([]byte(line))
		if ce != nil && i+1 == ce.Line {
			if valid {
				v, err2 := decodeObject(line)
				if err2 != nil || (v["type"] != "entity" && v["type"] != "relation") {
					t.Fatalf("line %d rejected (%v), but it is valid JSON and not an entity or relation: %q", i+1, perr, line)
				}
			}
			return
		}
		if !valid {
			t.Fatalf("line %d accepted, but encoding/json finds it invalid: %q", i+1, line)
		}
		v, err := decodeObject(line)
		if err != nil {
			if kind == lineEntity || kind == lineRelation {
				t.Fatalf("line %d is not an object for encoding/json but read as kind %d", i+1, kind)
			}
			continue
		}
		switch kind {
		case lineEntity:
			obs := []string{}
			for _, o := range v["observations"].([]any) {
				obs = append(obs, o.(string))
			}
			want := ent(v["name"].(string), v["entityType"].(string), obs...)
			if diff := cmp.Diff(want, e.Entity); v["type"] != "entity" || diff != "" {
				t.Fatalf("line %d: entity differs from encoding/json's (-stdlib +ours):\n%s", i+1, diff)
			}
		case lineRelation:
			want := rel(v["from"].(string), v["to"].(string), v["relationType"].(string))
			if v["type"] != "relation" || want != r.Relation {
				t.Fatalf("line %d: relation %v, encoding/json reads %v", i+1, r.Relation, want)
			}
		case lineOpaque:
			if v["type"] == "entity" || v["type"] == "relation" {
				t.Fatalf("line %d: kept as unknown, but encoding/json reads type %v", i+1, v["type"])
			}
		}
		if kind == lineEntity || kind == lineRelation {
			for _, s := range append(append([]string{}, e.Observations...), e.Name, e.EntityType, r.From, r.To, r.RelationType) {
				if !utf8.ValidString(s) {
					t.Fatalf("line %d: invalid UTF-8 in %q", i+1, s)
				}
			}
		}
	}
}

func decodeObject(line string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var v map[string]any
	err := d.Decode(&v)
	return v, err
}
