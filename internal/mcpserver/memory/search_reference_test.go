package memory

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zero-dev/zero/internal/graphstore"
	"github.com/zero-dev/zero/internal/mcpserver/mcptest"
	"github.com/zero-dev/zero/internal/testref"
)

// TestSearchMatchesReferenceOnGeneratedGraphs gives the reference server and
// Zero's the same generated graph and the same search_nodes queries, many
// of them fuzzed (cut from the graph's text, in other cases, one or two
// bytes long, absent), and requires the same answers byte for byte: the
// same entities and relations, in the same order. The words leave out the
// characters where Go's lower-casing departs from JavaScript's (the
// Turkish dotted capital I, a final capital sigma: a stated limit).
func TestSearchMatchesReferenceOnGeneratedGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := []string{"tea", "Tea", "TEA", "coffee", "Zürich", "ZÜRICH", "日本語", "Straße", "ÉCOLE", "école", "Ǆemal",
		"ΑΘΉΝΑ", "x-01", "42", "a", "B", "quote\"d", "back\\slash", "tab\there", "new\nline", "☃", "😀", "<&>", "The End"}
	text := func(n int) string {
		var b strings.Builder
		for i := range 1 + r.IntN(n) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	var g graphstore.Graph
	var fields []string
	for i := range 1500 {
		e := graphstore.Entity{Name: text(2) + " " + strconv.Itoa(i), EntityType: text(1), Observations: []string{}}
		for range r.IntN(4) {
			e.Observations = append(e.Observations, text(5))
		}
		g.Entities = append(g.Entities, e)
		fields = append(append(fields, e.Name, e.EntityType), e.Observations...)
	}
	for range 800 {
		to := g.Entities[r.IntN(len(g.Entities))].Name
		if r.IntN(10) == 0 {
			to = "nobody " + text(1)
		}
		g.Relations = append(g.Relations, graphstore.Relation{From: g.Entities[r.IntN(len(g.Entities))].Name, To: to, RelationType: text(1)})
	}
	var file []byte
	for _, e := range g.Entities {
		file = append(file, `{"type":"entity","name":`...)
		file = graphstore.AppendJSONString(file, e.Name)
		file = append(file, `,"entityType":`...)
		file = graphstore.AppendJSONString(file, e.EntityType)
		file = append(file, `,"observations":[`...)
		for i, o := range e.Observations {
			if i > 0 {
				file = append(file, ',')
			}
			file = graphstore.AppendJSONString(file, o)
		}
		file = append(file, "]}\n"...)
	}
	for _, rel := range g.Relations {
		file = append(file, `{"type":"relation","from":`...)
		file = graphstore.AppendJSONString(file, rel.From)
		file = append(file, `,"to":`...)
		file = graphstore.AppendJSONString(file, rel.To)
		file = append(file, `,"relationType":`...)
		file = graphstore.AppendJSONString(file, rel.RelationType)
		file = append(file, "}\n"...)
	}
	file = file[:len(file)-1]
	refPath, zeroPath := filepath.Join(t.TempDir(), "memory.jsonl"), filepath.Join(t.TempDir(), "memory.jsonl")
	for _, p := range []string{refPath, zeroPath} {
		if err := os.WriteFile(p, file, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ref := testref.Memory(t, refPath)
	st, err := graphstore.Open(zeroPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	zero := mcptest.Connect(t, New(st, os.Stderr), nil)

	// Each rune of q in upper or lower case, at random.
	mixCase := func(q string) string {
		var b strings.Builder
		for _, c := range q {
			if r.IntN(2) == 0 {
				b.WriteRune(unicode.ToUpper(c))
			} else {
				b.WriteRune(unicode.ToLower(c))
			}
		}
		return b.String()
	}
	// A cut of a field, by runes.
	cut := func() string {
		rs := []rune(fields[r.IntN(len(fields))])
		i := r.IntN(len(rs))
		return string(rs[i : i+1+r.IntN(min(len(rs)-i, 12))])
	}
	queries := []string{"", "a", "A", "ü", "Ü", "日", " ", "\n", "\"", "\\", "zz", "nobody", "no such thing"}
	for _, w := range words {
		rs := []rune(w)
		queries = append(queries, mixCase(w), mixCase(string(rs[:min(3, len(rs))])), mixCase(string(rs[max(0, len(rs)-3):])), w+"x")
	}
	for range 250 {
		queries = append(queries, mixCase(cut()))
	}
	for range 30 {
		queries = append(queries, text(2))
	}
	matched := 0
	for _, q := range queries {
		if !utf8.ValidString(q) {
			t.Fatalf("query %q is not UTF-8", q)
		}
		args := map[string]any{"query": q}
		refText, refErr, _ := call(t, ref, "search_nodes", args)
		zeroText, zeroErr, _ := call(t, zero, "search_nodes", args)
		if refText != zeroText || refErr != zeroErr {
			t.Errorf("search_nodes %q:\nreference %v %.300q\nzero      %v %.300q", q, refErr, refText, zeroErr, zeroText)
		}
		if !strings.Contains(zeroText, `"entities": []`) {
			matched++
		}
	}
	if matched < len(queries)/2 {
		t.Errorf("only %d of %d queries matched anything: the queries do not test the matching", matched, len(queries))
	}
}
