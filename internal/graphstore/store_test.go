package graphstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func openT(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ent(name, typ string, obs ...string) Entity {
	if obs == nil {
		obs = []string{}
	}
	return Entity{Name: name, EntityType: typ, Observations: obs}
}

func rel(from, to, typ string) Relation { return Relation{From: from, To: to, RelationType: typ} }

// readAll returns the graph as a fresh Store on the same file reads it.
func readAll(t testing.TB, path string) Graph {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	return must(s.Read())(t)
}

func TestSemantics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := openT(t, path)

	created := must(s.CreateEntities([]Entity{ent("a", "person", "likes tea"), ent("b", "place"), ent("a", "dup"), ent("c", "Thing", "Mixed CASE")}))(t)
	if diff := cmp.Diff([]Entity{ent("a", "person", "likes tea"), ent("b", "place"), ent("c", "Thing", "Mixed CASE")}, created); diff != "" {
		t.Errorf("CreateEntities (-want +got):\n%s", diff)
	}
	if again := must(s.CreateEntities([]Entity{ent("a", "other")}))(t); len(again) != 0 {
		t.Errorf("creating an existing name returned %v", again)
	}
	rels := must(s.CreateRelations([]Relation{rel("a", "b", "visits"), rel("a", "b", "visits"), rel("b", "c", "holds"), rel("x", "a", "knows")}))(t)
	if diff := cmp.Diff([]Relation{rel("a", "b", "visits"), rel("b", "c", "holds"), rel("x", "a", "knows")}, rels); diff != "" {
		t.Errorf("CreateRelations (-want +got):\n%s", diff)
	}

	added := must(s.AddObservations([]Observations{{"a", []string{"likes tea", "new", "new"}}, {"b", []string{"x"}}, {"a", []string{"new", "newer"}}}))(t)
	if diff := cmp.Diff([]Observations{{"a", []string{"new"}}, {"b", []string{"x"}}, {"a", []string{"newer"}}}, added); diff != "" {
		t.Errorf("AddObservations (-want +got):\n%s", diff)
	}
	_, err := s.AddObservations([]Observations{{"b", []string{"never"}}, {"nobody", []string{"y"}}})
	var nf *EntityNotFoundError
	if !errors.As(err, &nf) || nf.Name != "nobody" {
		t.Errorf("AddObservations on a missing entity: %v", err)
	}

	want := Graph{
		Entities:  []Entity{ent("a", "person", "likes tea", "new", "newer"), ent("b", "place", "x"), ent("c", "Thing", "Mixed CASE")},
		Relations: []Relation{rel("a", "b", "visits"), rel("b", "c", "holds"), rel("x", "a", "knows")},
	}
	if diff := cmp.Diff(want, must(s.Read())(t)); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}

	searches := map[string]Graph{
		"mixed case": {Entities: []Entity{want.Entities[2]}, Relations: []Relation{rel("b", "c", "holds")}},
		"PERSON":     {Entities: []Entity{want.Entities[0]}, Relations: []Relation{rel("a", "b", "visits"), rel("x", "a", "knows")}},
		"nothing":    {Entities: []Entity{}, Relations: []Relation{}},
		"":           want,
		"X":          {Entities: []Entity{want.Entities[1], want.Entities[2]}, Relations: []Relation{rel("a", "b", "visits"), rel("b", "c", "holds")}},
		"\x00":       {Entities: []Entity{}, Relations: []Relation{}},
	}
	for q, w := range searches {
		if diff := cmp.Diff(w, must(s.Search(q))(t)); diff != "" {
			t.Errorf("Search(%q) (-want +got):\n%s", q, diff)
		}
	}
	nodes := must(s.Nodes([]string{"c", "a", "missing", "a"}))(t)
	wantNodes := Graph{Entities: []Entity{want.Entities[0], want.Entities[2]}, Relations: want.Relations}
	if diff := cmp.Diff(wantNodes, nodes); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}

	if err := s.DeleteObservations([]Observations{{"a", []string{"new", "absent"}}, {"nobody", []string{"x"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRelations([]Relation{rel("b", "c", "holds"), rel("b", "c", "other")}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEntities([]string{"a", "ghost"}); err != nil {
		t.Fatal(err)
	}
	want = Graph{Entities: []Entity{ent("b", "place", "x"), ent("c", "Thing", "Mixed CASE")}, Relations: []Relation{}}
	if diff := cmp.Diff(want, must(s.Read())(t)); diff != "" {
		t.Errorf("after deletes (-want +got):\n%s", diff)
	}
	// A deleted name can be created again, at the end.
	must(s.CreateEntities([]Entity{ent("a", "again")}))(t)
	want.Entities = append(want.Entities, ent("a", "again"))
	if diff := cmp.Diff(want, must(s.Read())(t)); diff != "" {
		t.Errorf("after re-creating (-want +got):\n%s", diff)
	}
	// Another Store on the file, which replays the log, sees the same.
	if diff := cmp.Diff(want, readAll(t, path)); diff != "" {
		t.Errorf("reopened (-want +got):\n%s", diff)
	}
}

// TestDeleteEntitiesCascades deletes relations from and to deleted names,
// even names no entity has, as the reference does.
func TestDeleteEntitiesCascades(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "m.jsonl"))
	must(s.CreateEntities([]Entity{ent("a", "t"), ent("b", "t")}))(t)
	must(s.CreateRelations([]Relation{rel("a", "b", "r"), rel("b", "a", "r"), rel("a", "a", "self"), rel("b", "b", "self"), rel("ghost", "b", "r")}))(t)
	if err := s.DeleteEntities([]string{"a", "ghost"}); err != nil {
		t.Fatal(err)
	}
	want := Graph{Entities: []Entity{ent("b", "t")}, Relations: []Relation{rel("b", "b", "self")}}
	if diff := cmp.Diff(want, must(s.Read())(t)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestManyDeletes goes past the point where the store drops deleted slots,
// and checks order and indexes after it.
func TestManyDeletes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	s := openT(t, path)
	var es []Entity
	var rs []Relation
	for i := range 5000 {
		es = append(es, ent(name(i), "t"))
		rs = append(rs, rel(name(i), name((i+1)%5000), "next"))
	}
	must(s.CreateEntities(es))(t)
	must(s.CreateRelations(rs))(t)
	var del []string
	for i := 0; i < 5000; i += 3 {
		if i%2 == 0 {
			del = append(del, name(i))
		}
	}
	for i := range 5000 {
		if i%3 != 0 {
			del = append(del, name(i))
		}
		if len(del) >= 4900 {
			break
		}
	}
	if err := s.DeleteEntities(del); err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for _, d := range del {
		gone[d] = true
	}
	var want Graph
	want.Relations = []Relation{}
	for _, e := range es {
		if !gone[e.Name] {
			want.Entities = append(want.Entities, e)
		}
	}
	for _, r := range rs {
		if !gone[r.From] && !gone[r.To] {
			want.Relations = append(want.Relations, r)
		}
	}
	got := must(s.Read())(t)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, e := range want.Entities {
		n := must(s.Nodes([]string{e.Name}))(t)
		if len(n.Entities) != 1 || n.Entities[0].Name != e.Name {
			t.Fatalf("Nodes(%s) = %v", e.Name, n)
		}
	}
	if diff := cmp.Diff(want, readAll(t, path)); diff != "" {
		t.Errorf("reopened (-want +got):\n%s", diff)
	}
}

func name(i int) string { return "entity-" + strings.Repeat("0", 5-len(itoa(i))) + itoa(i) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestResultsDoNotAlias checks that results cannot reach into the graph.
func TestResultsDoNotAlias(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "m.jsonl"))
	in := []Entity{ent("a", "t", "one", "two")}
	must(s.CreateEntities(in))(t)
	in[0].Observations[0] = "changed by caller"
	g := must(s.Read())(t)
	_ = append(g.Entities[0].Observations, "appended by caller")
	must(s.AddObservations([]Observations{{"a", []string{"three"}}}))(t)
	if diff := cmp.Diff([]string{"one", "two", "three"}, must(s.Read())(t).Entities[0].Observations); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestConcurrentWritersOneStore runs many goroutines against one Store.
func TestConcurrentWritersOneStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	s := openT(t, path)
	s.compactAt = 2 << 10
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				n := itoa(w) + "-" + itoa(i)
				if _, err := s.CreateEntities([]Entity{ent(n, "t")}); err != nil {
					t.Error(err)
				}
				if _, err := s.AddObservations([]Observations{{n, []string{"o" + n}}}); err != nil {
					t.Error(err)
				}
				if _, err := s.Search(n); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	g := readAll(t, path)
	if len(g.Entities) != 400 {
		t.Fatalf("%d entities, want 400", len(g.Entities))
	}
	for _, e := range g.Entities {
		if !slices.Equal(e.Observations, []string{"o" + e.Name}) {
			t.Errorf("%s: observations %q", e.Name, e.Observations)
		}
	}
}

// TestTwoStoresShareFile has two Stores, as two processes would, write to
// one file at once, with frequent compactions; none of their writes is lost
// and each sees the other's.
func TestTwoStoresShareFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	a, b := openT(t, path), openT(t, path)
	a.compactAt, b.compactAt = 1<<10, 3<<10
	var wg sync.WaitGroup
	for w, s := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for i := range 100 {
				n := itoa(w) + "-" + itoa(i)
				if _, err := s.CreateEntities([]Entity{ent(n, "t")}); err != nil {
					t.Error(err)
				}
				if i%10 == 9 {
					if err := s.DeleteEntities([]string{itoa(w) + "-" + itoa(i-1)}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	ga, gb := must(a.Read())(t), must(b.Read())(t)
	if diff := cmp.Diff(ga, gb); diff != "" {
		t.Errorf("the two stores disagree (-a +b):\n%s", diff)
	}
	if len(ga.Entities) != 4*90 {
		t.Errorf("%d entities, want %d", len(ga.Entities), 4*90)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + LogSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the change log is still there after both closed: %v", err)
	}
	if diff := cmp.Diff(ga, readAll(t, path)); diff != "" {
		t.Errorf("main file after close (-want +got):\n%s", diff)
	}
}

// TestSeesReferenceRewrite replaces the main file behind the store's back,
// as the reference server does, and checks that the store reads it and
// merges its own logged changes over it.
func TestSeesReferenceRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("zero", "t", "from zero")}))(t)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	must(s.AddObservations([]Observations{{"zero", []string{"logged only"}}}))(t)
	// The reference read the main file (without "logged only"), added an
	// entity and wrote it back through a rename.
	ref := `{"type":"entity","name":"zero","entityType":"t","observations":["from zero"]}` + "\n" +
		`{"type":"entity","name":"ref","entityType":"t","observations":["from the reference"]}`
	replaceFile(t, path, ref)
	want := Graph{Entities: []Entity{ent("zero", "t", "from zero", "logged only"), ent("ref", "t", "from the reference")}, Relations: []Relation{}}
	if diff := cmp.Diff(want, must(s.Read())(t)); diff != "" {
		t.Errorf("after the reference's rewrite (-want +got):\n%s", diff)
	}
	// The next write compacts, so the reference sees Zero's changes.
	must(s.CreateEntities([]Entity{ent("later", "t")}))(t)
	if log, _ := os.ReadFile(path + LogSuffix); strings.Count(string(log), "\n") != 1 {
		t.Errorf("no compaction after the merge; the log holds:\n%s", log)
	}
	b, _ := os.ReadFile(path)
	wantFile := `{"type":"entity","name":"zero","entityType":"t","observations":["from zero","logged only"]}` + "\n" +
		`{"type":"entity","name":"ref","entityType":"t","observations":["from the reference"]}` + "\n" +
		`{"type":"entity","name":"later","entityType":"t","observations":[]}`
	if string(b) != wantFile {
		t.Errorf("main file:\n%s\nwant:\n%s", b, wantFile)
	}
	want.Entities = append(want.Entities, ent("later", "t"))
	if diff := cmp.Diff(want, readAll(t, path)); diff != "" {
		t.Errorf("another store (-want +got):\n%s", diff)
	}
}

// replaceFile replaces path through a rename, as the reference writes.
func replaceFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".ref.tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestTornLogTail appends half a line to the log, as a crash in the middle
// of a write leaves it: it is ignored, and dropped at the next write.
func TestTornLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	f, err := os.OpenFile(path+LogSuffix, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := appendFramed(nil, appendRecordJSON(nil, &record{op: opCreateEntities, entities: []Entity{ent("torn", "t")}}))
	f.Write(torn[:len(torn)/2])
	f.Close()

	if diff := cmp.Diff([]Entity{ent("a", "t")}, readAll(t, path).Entities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	s2 := openT(t, path)
	must(s2.CreateEntities([]Entity{ent("b", "t")}))(t)
	if diff := cmp.Diff([]Entity{ent("a", "t"), ent("b", "t")}, must(s.Read())(t).Entities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Entity{ent("a", "t"), ent("b", "t")}, readAll(t, path).Entities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStaleLogAfterCrashInCompaction leaves the log as a crash between the
// rename of a compacted main file and the log's removal leaves it.
func TestStaleLogAfterCrashInCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t", "one")}))(t)
	must(s.AddObservations([]Observations{{"a", []string{"two"}}}))(t)
	log, _ := os.ReadFile(path + LogSuffix)
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(path)
	sum := sha256hex(main)
	// The log as it was, plus the compaction's line.
	log = appendFramed(log, appendCompacted(nil, sum))
	if err := os.WriteFile(path+LogSuffix, log, 0o600); err != nil {
		t.Fatal(err)
	}
	// Replaying the log over the new main file would add nothing here, but
	// a deletion would be repeated: check the log is seen as stale.
	s2 := openT(t, path)
	if s2.logMode != modeStale || s2.logLive != 0 {
		t.Errorf("log mode %v, %d live changes; want stale, 0", s2.logMode, s2.logLive)
	}
	want := Graph{Entities: []Entity{ent("a", "t", "one", "two")}, Relations: []Relation{}}
	if diff := cmp.Diff(want, must(s2.Read())(t)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	must(s2.CreateEntities([]Entity{ent("b", "t")}))(t)
	want.Entities = append(want.Entities, ent("b", "t"))
	if diff := cmp.Diff(want, readAll(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestClosed checks that a closed store refuses work.
func TestClosed(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "m.jsonl"))
	s.Close()
	if _, err := s.Read(); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if _, err := s.CreateEntities([]Entity{ent("a", "t")}); !errors.Is(err, ErrClosed) {
		t.Errorf("CreateEntities after Close: %v", err)
	}
}

// TestNewFilesArePrivate checks the permissions of the files the store
// creates, and that a compaction keeps those of an existing main file.
func TestNewFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	for _, p := range []string{path + LockSuffix, path + LogSuffix} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want -rw-------", p, fi.Mode(), err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("main file: %v %v, want -rw-------", fi.Mode(), err)
	}
	os.Chmod(path, 0o640)
	s = openT(t, path)
	must(s.CreateEntities([]Entity{ent("b", "t")}))(t)
	s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("main file after compaction: %v %v, want -rw-r-----", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestSearchMatchesScan compares Search, with its index kept up to date
// through changes, with a plain scan of every field.
func TestSearchMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	words := []string{"Tea", "tEA", "coffee", "Zürich", "ZÜRICH", "日本", "ǅ", "İstanbul", "ΣΊΣΥΦΟΣ", "a", "ab", "x\x00y", "quote\"", "\\back", "tab\t", ""}
	text := func() string {
		var b strings.Builder
		for range r.IntN(4) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	s := openT(t, filepath.Join(t.TempDir(), "m.jsonl"))
	var names []string
	for step := range 3000 {
		switch k := r.IntN(10); {
		case k < 4 || len(names) == 0:
			n := itoa(step) + " " + text()
			names = append(names, n)
			obs := []string{}
			for range r.IntN(3) {
				obs = append(obs, text())
			}
			must(s.CreateEntities([]Entity{{Name: n, EntityType: text(), Observations: obs}}))(t)
		case k < 6:
			s.AddObservations([]Observations{{names[r.IntN(len(names))], []string{text()}}}) // may be deleted
		case k < 7:
			e := must(s.Nodes([]string{names[r.IntN(len(names))]}))(t).Entities
			if len(e) > 0 && len(e[0].Observations) > 0 {
				s.DeleteObservations([]Observations{{e[0].Name, e[0].Observations[:1]}})
			}
		case k < 8:
			s.DeleteEntities([]string{names[r.IntN(len(names))]})
		default:
			q := words[r.IntN(len(words))]
			if r.IntN(2) == 0 && len(q) > 1 {
				q = q[r.IntN(len(q)-1):]
			}
			got := must(s.Search(q))(t)
			all := must(s.Read())(t)
			want := []Entity{}
			for _, e := range all.Entities {
				if matchScan(e, q) {
					want = append(want, e)
				}
			}
			if diff := cmp.Diff(want, got.Entities); diff != "" {
				t.Fatalf("step %d: Search(%q) (-scan +index):\n%s", step, q, diff)
			}
		}
	}
}

// matchScan is the reference's test, with Go's lower-casing.
func matchScan(e Entity, q string) bool {
	q = strings.ToLower(q)
	if strings.Contains(strings.ToLower(e.Name), q) || strings.Contains(strings.ToLower(e.EntityType), q) {
		return true
	}
	for _, o := range e.Observations {
		if strings.Contains(strings.ToLower(o), q) {
			return true
		}
	}
	return false
}

// TestLargeFileParsesInParts reads a file large enough to be parsed in
// parts, with a name repeated across the parts (kept as a second copy, in
// its place), then the same file with a bad line in its second half.
func TestLargeFileParsesInParts(t *testing.T) {
	var lines []string
	want := Graph{Relations: []Relation{}}
	for i := 0; len(lines) < 60000; i++ {
		e := ent(name(i), "t", strings.Repeat("o", 50))
		lines = append(lines, string(appendEntity(nil, &entity{Entity: e})))
		want.Entities = append(want.Entities, e)
	}
	lines = append(lines, `{"type":"entity","name":"entity-00000","entityType":"t","observations":["again"]}`)
	want.Entities = append(want.Entities, ent(name(0), "t", "again"))
	lines = append(lines, `{"type":"relation","from":"a","to":"b","relationType":"r"}`, `{"other":1}`)
	want.Relations = append(want.Relations, rel("a", "b", "r"))
	data := strings.Join(lines, "\n")
	if len(data) < 4<<20 {
		t.Fatalf("only %d bytes: not parsed in parts", len(data))
	}
	path := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(path, []byte(data), 0o600)
	if diff := cmp.Diff(want, readAll(t, path)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bad := 50000
	lines[bad] = `{"type":"entity"` + "\x01"
	offset := len(strings.Join(lines[:bad], "\n")) + 1 + len(`{"type":"entity"`)
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600)
	_, err := Open(path)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != bad+1 || ce.Offset != int64(offset) {
		t.Errorf("got %v; want line %d, offset %d", err, bad+1, offset)
	}
}

// TestCloseRemovesTemporaryFiles leaves temporary files as a crash in a
// compaction would, and one of another graph's; Close removes only the
// first.
func TestCloseRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	left := path + ".123456" + tmpSuffix
	other := path + ".x.123456" + tmpSuffix
	unrelated := filepath.Join(dir, "123456"+tmpSuffix)
	for _, p := range []string{left, other, unrelated} {
		os.WriteFile(p, []byte("partial"), 0o600)
	}
	s := openT(t, path)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", left, err)
	}
	for _, p := range []string{other, unrelated} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, another graph's, was removed: %v", p, err)
		}
	}
}

// TestSymlinkFollowed opens the graph through a symbolic link: the link
// stays, the file it names is written, and the lock is beside that file,
// so that every way to name the graph takes the same lock.
func TestSymlinkFollowed(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	link := filepath.Join(dir, "link.jsonl")
	os.WriteFile(real, nil, 0o600)
	if err := os.Symlink("real.jsonl", link); err != nil {
		t.Fatal(err)
	}
	s := openT(t, link)
	must(s.CreateEntities([]Entity{ent("a", "t")}))(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), `"name":"a"`) {
		t.Errorf("the linked file holds %q", b)
	}
	if _, err := os.Stat(real + LockSuffix); err != nil {
		t.Errorf("no lock beside the linked file: %v", err)
	}
}

// TestBloomOfReadsAsTheQuery: the filter bloomOf computes in place from an
// ASCII field holds the bits addText sets from the field lower-cased,
// which is how a query's bits are computed; a filter missing one would
// hide a match.
func TestBloomOfReadsAsTheQuery(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "aBcD-0\x00Zz ü"
	for range 2000 {
		field := func() string {
			b := make([]byte, r.IntN(12))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			return string(b)
		}
		e := Entity{Name: field(), EntityType: field(), Observations: []string{field(), field()}}
		var want bloom
		for _, s := range append([]string{e.Name, e.EntityType}, e.Observations...) {
			addText(&want, appendLower(nil, s))
		}
		if got := bloomOf(&e, nil); got != want {
			t.Fatalf("bloomOf(%q) = %x, want %x", e, got, want)
		}
	}
}
