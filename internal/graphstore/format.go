package graphstore

import (
	"bufio"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file reads and writes the main file in the reference server's
// format: one JSON object a line,
//
//	{"type":"entity","name":"…","entityType":"…","observations":["…"]}
//	{"type":"relation","from":"…","to":"…","relationType":"…"}
//
// entities first, then relations, lines separated by "\n" with none after
// the last, strings escaped as JSON.stringify escapes them.
//
// Reading is as lenient as the reference's where that loses nothing, and
// stricter where the reference would load something it then fails on:
//   - blank lines are skipped (JavaScript's trim decides what is blank);
//   - a line that is not JSON is an error;
//   - an entity line needs string "name" and "entityType" and an array of
//     strings "observations", a relation line string "from", "to" and
//     "relationType", or it is an error;
//   - any other JSON line (another "type", no "type", not an object) is
//     kept as it is and written back unchanged, after the graph;
//   - members an entity or relation line has beyond its own are kept and
//     written back after them; a line is written back byte for byte while
//     its entity or relation is unchanged;
//   - a name or a relation that repeats (hand edits leave that, and so do
//     the reference's lost updates and its calls that repeat a name) is
//     kept, each copy in its place: reads show every copy, as the
//     reference's do; adding observations changes the first copy, as the
//     reference does; deletes reach every copy; a rewrite loses none.

// A CorruptError reports a line of a file that could not be read. The file
// is left as it is.
type CorruptError struct {
	Path   string
	Line   int   // from 1
	Offset int64 // of the error, in bytes from the start of the file
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: line %d, byte offset %d: %s; the file was left unchanged: fix or remove that line", e.Path, e.Line, e.Offset, e.Reason)
}

type lineKind int

const (
	lineBlank lineKind = iota
	lineEntity
	lineRelation
	lineOpaque
)

// member is one member of a line's object, as parsed.
type member struct {
	key        string
	start, end int // of `"key":value` in the line
	str        string
	strs       []string
	kind       byte // 's' string, 'a' array of strings, 0 anything else
}

// parseLine reads one line of the main file. On error, pos is where in the
// line it was found. scratch is a buffer to reuse.
func parseLine(line string, scratch *[]byte) (kind lineKind, e entity, r relation, pos int, err error) {
	if kind, e, r, ok := parsePlain(line); ok {
		return kind, e, r, 0, nil
	}
	return parseAny(line, scratch)
}

// parseAny is parseLine for any line.
func parseAny(line string, scratch *[]byte) (kind lineKind, e entity, r relation, pos int, err error) {
	if jsBlank(line) {
		return lineBlank, e, r, 0, nil
	}
	sc := scanner{s: line}
	if sc.peek() != '{' {
		if err := sc.skip(0); err != nil {
			return 0, e, r, sc.i, err
		}
		if err := sc.end(); err != nil {
			return 0, e, r, sc.i, err
		}
		return lineOpaque, e, r, 0, nil
	}
	var buf [8]member
	ms, typ, err := sc.lineMembers(buf[:0])
	if err == nil {
		err = sc.end()
	}
	if err != nil {
		return 0, e, r, sc.i, err
	}
	var members string
	switch typ {
	case "entity":
		e.Name, e.EntityType, e.Observations, members, err = entityFields(line, ms)
		if err != nil {
			return 0, e, r, 0, err
		}
		if members != "" {
			e.extras().members = members
		}
		if !canonicalEntity(line, &sc, ms, &e) {
			*scratch = appendEntity((*scratch)[:0], &e)
			if string(*scratch) != line {
				e.extras().raw = line
			}
		}
		return lineEntity, e, r, 0, nil
	case "relation":
		r.From, r.To, r.RelationType, members, err = relationFields(line, ms)
		if err != nil {
			return 0, e, r, 0, err
		}
		if members != "" {
			r.x = &extras{members: members}
		}
		*scratch = appendRelation((*scratch)[:0], &r)
		if string(*scratch) != line {
			if r.x == nil {
				r.x = &extras{}
			}
			r.x.raw = line
		}
		return lineRelation, e, r, 0, nil
	}
	return lineOpaque, e, r, 0, nil
}

// Heads of the lines the store writes.
const (
	entityHead   = `{"type":"entity","name":`
	relationHead = `{"type":"relation","from":`
)

// parsePlain reads a line that is exactly what appendEntity or
// appendRelation writes for its entity or relation, with no members beyond
// the reference's and no string that needs an escape: most lines of most
// files. It returns false for any other line, which parseLine then reads
// in full; for a line it takes, the result is the one that would give.
func parsePlain(line string) (lineKind, entity, relation, bool) {
	var e entity
	var r relation
	sc := scanner{s: line}
	switch {
	case strings.HasPrefix(line, entityHead):
		sc.i = len(entityHead)
		var buf [8]string
		obs := buf[:0]
		name, ok1 := sc.plainStr()
		typ, ok2 := "", ok1 && sc.follows(`,"entityType":`)
		if ok2 {
			typ, ok2 = sc.plainStr()
		}
		if !ok2 || !sc.follows(`,"observations":[`) {
			return 0, e, r, false
		}
		for more := !sc.follows("]"); more; {
			o, ok := sc.plainStr()
			if !ok {
				return 0, e, r, false
			}
			obs = append(obs, o)
			switch {
			case sc.follows(","):
			case sc.follows("]"):
				more = false
			default:
				return 0, e, r, false
			}
		}
		if !sc.follows("}") || sc.i != len(line) {
			return 0, e, r, false
		}
		e.Name, e.EntityType, e.Observations = name, typ, append(make([]string, 0, len(obs)), obs...)
		return lineEntity, e, r, true
	case strings.HasPrefix(line, relationHead):
		sc.i = len(relationHead)
		from, ok := sc.plainStr()
		to, ok2 := "", ok && sc.follows(`,"to":`)
		if ok2 {
			to, ok2 = sc.plainStr()
		}
		typ, ok3 := "", ok2 && sc.follows(`,"relationType":`)
		if ok3 {
			typ, ok3 = sc.plainStr()
		}
		if !ok3 || !sc.follows("}") || sc.i != len(line) {
			return 0, e, r, false
		}
		r.From, r.To, r.RelationType = from, to, typ
		return lineRelation, e, r, true
	}
	return 0, e, r, false
}

// canonicalEntity is a quick check that line is what appendEntity writes
// for e: the members in the order it writes them, strings as they stand in
// the line (which then need no escaping), and no byte more.
func canonicalEntity(line string, sc *scanner, ms []member, e *entity) bool {
	if sc.altered || len(ms) != 4 || ms[0].key != "type" || ms[1].key != "name" || ms[2].key != "entityType" || ms[3].key != "observations" {
		return false
	}
	n := len(`{"type":"entity","name":"","entityType":"","observations":[]}`) + len(e.Name) + len(e.EntityType)
	for i, o := range e.Observations {
		n += len(o) + 2
		if i > 0 {
			n++
		}
	}
	return n == len(line)
}

// lineMembers reads the members of a line's object, appending them to ms,
// and returns its "type" (the last one, as JavaScript reads it) if it is a
// string.
func (sc *scanner) lineMembers(ms []member) (_ []member, typ string, err error) {
	sc.i++ // the '{'
	if sc.peek() == '}' {
		sc.i++
		return ms, "", nil
	}
	for {
		sc.ws()
		m := member{start: sc.i}
		if m.key, err = sc.str(); err != nil {
			return nil, "", err
		}
		if err := sc.expect(':'); err != nil {
			return nil, "", err
		}
		switch sc.peek() {
		case '"':
			if m.str, err = sc.str(); err != nil {
				return nil, "", err
			}
			m.kind = 's'
		case '[':
			ss, ok, err := sc.strs()
			if err != nil {
				return nil, "", err
			}
			if ok {
				m.strs, m.kind = ss, 'a'
			} else if err := sc.skip(1); err != nil {
				return nil, "", err
			}
		default:
			if err := sc.skip(1); err != nil {
				return nil, "", err
			}
		}
		m.end = sc.i
		if m.key == "type" {
			typ = m.str // "" unless a string
		}
		ms = append(ms, m)
		switch sc.peek() {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return ms, typ, nil
		default:
			return nil, "", sc.unexpected("',' or '}'")
		}
	}
}

func entityFields(line string, ms []member) (name, typ string, obs []string, members string, err error) {
	var haveName, haveType, haveObs bool
	var b strings.Builder
	for _, m := range ms {
		switch m.key {
		case "type":
		case "name":
			name, haveName = m.str, m.kind == 's'
		case "entityType":
			typ, haveType = m.str, m.kind == 's'
		case "observations":
			obs, haveObs = m.strs, m.kind == 'a'
		default:
			b.WriteByte(',')
			b.WriteString(line[m.start:m.end])
		}
	}
	switch {
	case !haveName:
		err = errors.New(`entity without a string "name"`)
	case !haveType:
		err = errors.New(`entity without a string "entityType"`)
	case !haveObs:
		err = errors.New(`entity without an array of strings "observations"`)
	}
	return name, typ, obs, b.String(), err
}

func relationFields(line string, ms []member) (from, to, typ, members string, err error) {
	var haveFrom, haveTo, haveType bool
	var b strings.Builder
	for _, m := range ms {
		switch m.key {
		case "type":
		case "from":
			from, haveFrom = m.str, m.kind == 's'
		case "to":
			to, haveTo = m.str, m.kind == 's'
		case "relationType":
			typ, haveType = m.str, m.kind == 's'
		default:
			b.WriteByte(',')
			b.WriteString(line[m.start:m.end])
		}
	}
	switch {
	case !haveFrom:
		err = errors.New(`relation without a string "from"`)
	case !haveTo:
		err = errors.New(`relation without a string "to"`)
	case !haveType:
		err = errors.New(`relation without a string "relationType"`)
	}
	return from, to, typ, b.String(), err
}

// jsBlank reports whether JavaScript's String.prototype.trim leaves
// nothing of s: the reference skips such lines.
func jsBlank(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case ' ', '\t', '\n', '\v', '\f', '\r':
				i++
				continue
			}
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0xA0, r == 0x1680, r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029,
			r == 0x202F, r == 0x205F, r == 0x3000, r == 0xFEFF:
			i += size
		default:
			return false
		}
	}
	return true
}

// parseMain reads a whole main file into a graph. A large file is parsed
// in as many parts as there are processors, then put together in order.
func parseMain(path string, data string) (*graph, error) {
	parts := 1
	if len(data) >= 4<<20 {
		parts = runtime.GOMAXPROCS(0)
	}
	chunks := make([]chunk, parts)
	start, line := 0, 1
	for i := range chunks {
		end := len(data)
		if i < parts-1 {
			end = len(data) * (i + 1) / parts
			if nl := strings.IndexByte(data[end:], '\n'); nl >= 0 {
				end += nl
			} else {
				end = len(data)
			}
		}
		if start > end { // an earlier part took it all
			start = end
		}
		chunks[i] = chunk{data: data[start:end], off: start, line: line}
		line += strings.Count(data[start:end], "\n") + 1
		start = end + 1
	}
	var wg sync.WaitGroup
	for i := range chunks {
		if len(chunks) == 1 {
			chunks[i].parse(path)
			break
		}
		wg.Go(func() { chunks[i].parse(path) })
	}
	wg.Wait()
	var nEnts, nRels int
	for i := range chunks {
		if err := chunks[i].err; err != nil {
			return nil, err
		}
		nEnts += chunks[i].ents.len()
		nRels += chunks[i].rels.len()
	}
	// The parts' pages become the graph's as they are; the end of a part's
	// last page is left as deleted slots.
	g := newGraph(nEnts, nRels)
	for i := range chunks {
		g.deadEnts += g.ents.join(chunks[i].ents)
		g.blooms.join(chunks[i].blooms)
		g.deadRels += g.rels.join(chunks[i].rels)
		g.opaque = append(g.opaque, chunks[i].opaque...)
	}
	// Entities and relations are indexed apart: they share nothing.
	wg.Go(func() {
		for i := range int32(g.rels.len()) {
			if g.rels.at(i).live {
				g.indexRelation(i)
			}
		}
	})
	for i := range int32(g.ents.len()) {
		if e := g.ents.at(i); e.live {
			g.indexEntity(e.Name, i)
		}
	}
	wg.Wait()
	return g, nil
}

// A chunk is a part of a main file, from a line's start to the end of a
// line, and what it holds.
type chunk struct {
	data      string
	off, line int // where data starts in the file

	ents   pages[entity]
	blooms bloomPages // of ents, computed here, where the work is parallel
	rels   pages[relation]
	opaque []string
	err    error
}

func (c *chunk) parse(path string) {
	var scratch, lower []byte
	lineNo := c.line - 1
	for off := 0; off <= len(c.data); {
		lineNo++
		end := strings.IndexByte(c.data[off:], '\n')
		if end < 0 {
			end = len(c.data)
		} else {
			end += off
		}
		line := c.data[off:end]
		kind, e, r, pos, err := parseLine(line, &scratch)
		if err != nil {
			c.err = &CorruptError{Path: path, Line: lineNo, Offset: int64(c.off + off + pos), Reason: err.Error()}
			return
		}
		switch kind {
		case lineEntity:
			e.live = true
			c.ents.push(e)
			c.blooms.push(bloomOf(&e.Entity, &lower))
		case lineRelation:
			r.live = true
			c.rels.push(r)
		case lineOpaque:
			c.opaque = append(c.opaque, line)
		}
		off = end + 1
	}
}

// appendEntity appends e's line: the line as read while it is unchanged,
// or the reference's form with any unknown members after it.
func appendEntity(dst []byte, e *entity) []byte {
	if e.x != nil && e.x.raw != "" {
		return append(dst, e.x.raw...)
	}
	dst = append(dst, `{"type":"entity","name":`...)
	dst = AppendJSONString(dst, e.Name)
	dst = append(dst, `,"entityType":`...)
	dst = AppendJSONString(dst, e.EntityType)
	dst = append(dst, `,"observations":[`...)
	for i, o := range e.Observations {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, o)
	}
	dst = append(dst, ']')
	if e.x != nil {
		dst = append(dst, e.x.members...)
	}
	return append(dst, '}')
}

func appendRelation(dst []byte, r *relation) []byte {
	if r.x != nil && r.x.raw != "" {
		return append(dst, r.x.raw...)
	}
	dst = append(dst, `{"type":"relation","from":`...)
	dst = AppendJSONString(dst, r.From)
	dst = append(dst, `,"to":`...)
	dst = AppendJSONString(dst, r.To)
	dst = append(dst, `,"relationType":`...)
	dst = AppendJSONString(dst, r.RelationType)
	if r.x != nil {
		dst = append(dst, r.x.members...)
	}
	return append(dst, '}')
}

// writeMain writes g in the main file's format.
func writeMain(w *bufio.Writer, g *graph) error {
	var buf []byte
	first := true
	line := func(b []byte) {
		if !first {
			w.WriteByte('\n')
		}
		first = false
		w.Write(b)
	}
	for i := range int32(g.ents.len()) {
		if e := g.ents.at(i); e.live {
			buf = appendEntity(buf[:0], e)
			line(buf)
		}
	}
	for i := range int32(g.rels.len()) {
		if r := g.rels.at(i); r.live {
			buf = appendRelation(buf[:0], r)
			line(buf)
		}
	}
	for _, o := range g.opaque {
		if !first {
			w.WriteByte('\n')
		}
		first = false
		w.WriteString(o)
	}
	return w.Flush()
}
