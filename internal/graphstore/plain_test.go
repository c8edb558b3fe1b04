package graphstore

import (
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestParsePlainAsParseAny: every line the quick reader takes, it reads as
// the full reader does, and the full reader has no error on it. The lines
// are those of the test files, hand-made ones at the edges of what the
// quick reader takes, and random mutations of all of them.
func TestParsePlainAsParseAny(t *testing.T) {
	var lines []string
	for _, f := range []string{"testdata/golden.jsonl", "testdata/memory-written-by-reference.jsonl"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(string(data), "\n")...)
	}
	lines = append(lines,
		`{"type":"entity","name":"a","entityType":"b","observations":[]}`,
		`{"type":"entity","name":"","entityType":"","observations":["",""]}`,
		`{"type":"entity","name":"Zürich 日本","entityType":"b","observations":["x","y","z","1","2","3","4","5","6","7"]}`,
		`{"type":"entity","name":"a\"b","entityType":"b","observations":[]}`,
		`{"type":"entity","name":"a\u0041","entityType":"b","observations":[]}`,
		"{\"type\":\"entity\",\"name\":\"a\xffb\",\"entityType\":\"b\",\"observations\":[]}",
		"{\"type\":\"entity\",\"name\":\"a\tb\",\"entityType\":\"b\",\"observations\":[]}",
		`{"type":"entity","name":"a","entityType":"b","observations":[],"extra":1}`,
		`{"type":"entity","name":"a","entityType":"b","observations":[] }`,
		`{"type":"entity","name":"a","entityType":"b","observations":[1]}`,
		`{"type":"entity","name":"a","entityType":"b","observations":["x",]}`,
		`{"type":"entity","name":"a","entityType":"b","observations":[]}x`,
		`{"type":"entity","name":"a","entityType":"b","observations":[]}}`,
		`{"type":"entity","name":"a","entityType":"b","observations":[]`,
		`{"type":"relation","from":"a","to":"b","relationType":"c"}`,
		`{"type":"relation","from":"a","to":"b","relationType":"c","type":"entity"}`,
		`{"type":"relation","from":"a","to":"b","relationType":"c\\"}`,
		`{"type":"relation","from":"a","to":"b","relationType":null}`,
		"{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\xc3\",\"relationType\":\"c\"}",
	)
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"", "a", "Tea", "Zürich", "日本", "x y", "quote\"", "tab\t", "\x00", "\u2028", "\xff"}
	word := func() string { return words[r.IntN(len(words))] + words[r.IntN(len(words))] }
	for range 500 {
		e := entity{Entity: Entity{Name: word(), EntityType: word(), Observations: []string{}}}
		for range r.IntN(10) {
			e.Observations = append(e.Observations, word())
		}
		lines = append(lines, string(appendEntity(nil, &e)))
		rel := relation{Relation: Relation{From: word(), To: word(), RelationType: word()}}
		lines = append(lines, string(appendRelation(nil, &rel)))
	}
	const bytesToTry = "\"\\,]}{[: a0\x00\x1f\xff\xc3\xbc"
	for _, l := range lines[:len(lines):len(lines)] {
		for range 200 {
			b := []byte(l)
			if len(b) == 0 {
				break
			}
			switch i := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b[i] = bytesToTry[r.IntN(len(bytesToTry))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]byte{bytesToTry[r.IntN(len(bytesToTry))]}, b[i:]...)...)
			}
			lines = append(lines, string(b))
		}
	}
	taken := 0
	var scratch []byte
	for _, l := range lines {
		kind, e, rel, ok := parsePlain(l)
		if !ok {
			continue
		}
		taken++
		wantKind, wantE, wantR, _, err := parseAny(l, &scratch)
		if err != nil || kind != wantKind || !reflect.DeepEqual(e, wantE) || !reflect.DeepEqual(rel, wantR) {
			t.Errorf("%q: the quick reader gives %v %+v %+v; the full one %v %+v %+v, %v", l, kind, e, rel, wantKind, wantE, wantR, err)
		}
	}
	if taken < 1000 {
		t.Errorf("the quick reader took only %d of %d lines: the test does not exercise it", taken, len(lines))
	}
}
