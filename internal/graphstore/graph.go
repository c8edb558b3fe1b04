package graphstore

import (
	"bytes"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"
)

// This file holds the graph in memory: entities and relations in the
// order the reference keeps them (the order they were made in), with
// indexes so that a change costs time in proportion to what it touches,
// not to the size of the graph.

// An Entity is a node of the graph: a name, a type and observations. Names
// are unique but in a file that repeats one (see format.go).
type Entity struct {
	Name         string
	EntityType   string
	Observations []string
}

// A Relation is a directed, typed edge between two entity names. Its
// endpoints need not exist, as in the reference.
type Relation struct {
	From         string
	To           string
	RelationType string
}

// Observations names observations of one entity: those to add or delete,
// or those that were added.
type Observations struct {
	EntityName string
	Contents   []string
}

// A Graph is a set of entities and relations, in the graph's order.
type Graph struct {
	Entities  []Entity
	Relations []Relation
}

// obsSetMin is the number of observations from which an entity keeps a set
// of them, to add without scanning the list.
const obsSetMin = 16

type entity struct {
	Entity
	x    *extras // nil for most
	live bool
}

type relation struct {
	Relation
	x *extras
	// The previous slot in the chains of relations from From (next[0]) and
	// to To (next[1]), or -1; see graph.byEnd.
	next [2]int32
	live bool
}

// extras is what few entities and relations need.
type extras struct {
	members string              // members the line had beyond its own, each after a comma
	raw     string              // the line as read, while unchanged and unlike what the store would write
	obsSet  map[string]struct{} // an entity's observations, once they are many
}

type graph struct {
	ents     pages[entity]
	blooms   bloomPages         // each entity's, at its index
	byName   map[string]int32   // the first entity of each name
	dupNames map[string][]int32 // the later ones, where a file repeats a name
	deadEnts int

	rels     pages[relation]
	byRel    map[Relation]int32   // the first copy of each relation
	dupRels  map[Relation][]int32 // the later ones, where a file repeats one
	deadRels int
	// The relations from or to each name, as a chain: slot 2i stands for
	// relation i as seen from its From, 2i+1 from its To. byEnd holds a
	// name's latest slot; the relation's next the one before.
	byEnd map[string]int32

	opaque []string // lines that are neither entity nor relation, in order
}

// pageBits sets the size of the pages entities and relations are kept in.
const pageBits = 10

// pages is a growable array kept in pages of fixed size, so that growing
// it never moves what it holds: a write costs the same in a graph of any
// size.
type pages[T any] struct {
	p [][]T
	n int
}

func (v *pages[T]) at(i int32) *T { return &v.p[i>>pageBits][i&(1<<pageBits-1)] }

func (v *pages[T]) push(x T) int32 {
	if v.n>>pageBits == len(v.p) {
		v.p = append(v.p, make([]T, 1<<pageBits))
	}
	i := int32(v.n)
	v.n++
	*v.at(i) = x
	return i
}

func (v *pages[T]) len() int { return v.n }

// join appends the pages of w after those of v. A last page of v that is
// not full keeps its zero values at the end, as holes: deleted slots.
func (v *pages[T]) join(w pages[T]) (holes int) {
	if v.n&(1<<pageBits-1) != 0 {
		holes = len(v.p)<<pageBits - v.n
	}
	v.p = append(v.p, w.p...)
	v.n = (v.n + holes) + w.n
	return holes
}

func newGraph(ents, rels int) *graph {
	return &graph{
		byName: make(map[string]int32, ents),
		byRel:  make(map[Relation]int32, rels),
		byEnd:  make(map[string]int32, min(ents, 2*rels)),
	}
}

func (e *entity) extras() *extras {
	if e.x == nil {
		e.x = &extras{}
	}
	return e.x
}

// loadEntity adds an entity at the end. A name the graph has already is
// kept as a later copy: a file can repeat one.
func (g *graph) loadEntity(e entity) {
	e.live = true
	i := g.ents.push(e)
	g.blooms.push(bloomOf(&e.Entity, nil))
	g.indexEntity(e.Name, i)
}

func (g *graph) indexEntity(name string, i int32) {
	if _, ok := g.byName[name]; !ok {
		g.byName[name] = i
		return
	}
	if g.dupNames == nil {
		g.dupNames = map[string][]int32{}
	}
	g.dupNames[name] = append(g.dupNames[name], i)
}

// loadRelation adds a relation at the end; one the graph has already is
// kept as a later copy.
func (g *graph) loadRelation(r relation) {
	r.live = true
	g.indexRelation(g.rels.push(r))
}

// indexRelation adds relation i, which is live, to the maps.
func (g *graph) indexRelation(i int32) {
	r := g.rels.at(i)
	r.next = [2]int32{-1, -1}
	if _, ok := g.byRel[r.Relation]; !ok {
		g.byRel[r.Relation] = i
	} else {
		if g.dupRels == nil {
			g.dupRels = map[Relation][]int32{}
		}
		g.dupRels[r.Relation] = append(g.dupRels[r.Relation], i)
	}
	g.link(r.From, 2*i)
	if r.To != r.From {
		g.link(r.To, 2*i+1)
	}
}

// copies appends the indexes of the entities named name, in order.
func (g *graph) copies(dst []int32, name string) []int32 {
	if i, ok := g.byName[name]; ok {
		dst = append(dst, i)
		dst = append(dst, g.dupNames[name]...)
	}
	return dst
}

func (g *graph) nextSlot(slot int32) *int32 { return &g.rels.at(slot / 2).next[slot%2] }

func (g *graph) link(name string, slot int32) {
	if h, ok := g.byEnd[name]; ok {
		*g.nextSlot(slot) = h
	}
	g.byEnd[name] = slot
}

func (g *graph) unlink(name string, slot int32) {
	h := g.byEnd[name]
	if h == slot {
		if prev := *g.nextSlot(slot); prev < 0 {
			delete(g.byEnd, name)
		} else {
			g.byEnd[name] = prev
		}
		return
	}
	for *g.nextSlot(h) != slot {
		h = *g.nextSlot(h)
	}
	*g.nextSlot(h) = *g.nextSlot(slot)
}

// appendEnds appends the indexes of the relations from or to name.
func (g *graph) appendEnds(dst []int32, name string) []int32 {
	slot, ok := g.byEnd[name]
	for ok && slot >= 0 {
		dst = append(dst, slot/2)
		slot = *g.nextSlot(slot)
	}
	return dst
}

func (g *graph) entity(name string) *entity {
	if i, ok := g.byName[name]; ok {
		return g.ents.at(i)
	}
	return nil
}

// changed updates what depends on the observations of e, at index i.
func (g *graph) changed(e *entity, i int32) {
	if e.x != nil {
		e.x.raw = ""
	}
	g.blooms.set(i, bloomOf(&e.Entity, nil))
}

func (e *entity) hasObservation(o string) bool {
	if e.x != nil && e.x.obsSet != nil {
		_, ok := e.x.obsSet[o]
		return ok
	}
	return slices.Contains(e.Observations, o)
}

// addObservations appends the contents e, at index i, lacks, and returns
// them.
func (g *graph) addObservations(e *entity, i int32, contents []string) []string {
	var added []string
	for _, c := range contents {
		if len(e.Observations) >= obsSetMin && (e.x == nil || e.x.obsSet == nil) {
			set := make(map[string]struct{}, len(e.Observations)*2)
			for _, o := range e.Observations {
				set[o] = struct{}{}
			}
			e.extras().obsSet = set
		}
		if e.hasObservation(c) {
			continue
		}
		e.Observations = append(e.Observations, c)
		if e.x != nil && e.x.obsSet != nil {
			e.x.obsSet[c] = struct{}{}
		}
		added = append(added, c)
	}
	if len(added) > 0 {
		g.changed(e, i)
	}
	return added
}

// removeEntity removes every entity named name.
func (g *graph) removeEntity(name string) {
	for _, i := range g.copies(nil, name) {
		*g.ents.at(i) = entity{}
		g.blooms.set(i, bloom{})
		g.deadEnts++
	}
	delete(g.byName, name)
	delete(g.dupNames, name)
	if g.deadEnts > 1024 && g.deadEnts > g.ents.len()/2 {
		// Drop the deleted slots.
		old, oldBlooms := g.ents, g.blooms
		g.ents, g.blooms, g.deadEnts = pages[entity]{}, bloomPages{}, 0
		clear(g.byName)
		g.dupNames = nil
		for j := range int32(old.len()) {
			if e := old.at(j); e.live {
				g.blooms.push(oldBlooms.at(j))
				g.indexEntity(e.Name, g.ents.push(*e))
			}
		}
	}
}

// removeRelation removes every copy of rel.
func (g *graph) removeRelation(rel Relation) {
	first, ok := g.byRel[rel]
	if !ok {
		return
	}
	drop := func(i int32) {
		g.unlink(rel.From, 2*i)
		if rel.To != rel.From {
			g.unlink(rel.To, 2*i+1)
		}
		*g.rels.at(i) = relation{}
		g.deadRels++
	}
	drop(first)
	for _, i := range g.dupRels[rel] {
		drop(i)
	}
	delete(g.byRel, rel)
	delete(g.dupRels, rel)
	if g.deadRels > 1024 && g.deadRels > g.rels.len()/2 {
		old := g.rels
		g.rels, g.deadRels, g.dupRels = pages[relation]{}, 0, nil
		clear(g.byRel)
		clear(g.byEnd)
		for j := range int32(old.len()) {
			if r := old.at(j); r.live {
				g.loadRelation(*r)
			}
		}
	}
}

// A record is one change: what a mutation did, as the change log holds it.
// Applying a record to the graph it was planned on repeats the change
// exactly; applying it to another graph (one the reference server rewrote)
// does what still can be done: creating what is missing, adding to and
// deleting from what exists.
type record struct {
	op        string
	entities  []Entity
	relations []Relation
	obs       []Observations
	names     []string
}

const (
	opCreateEntities     = "createEntities"
	opCreateRelations    = "createRelations"
	opAddObservations    = "addObservations"
	opDeleteEntities     = "deleteEntities"
	opDeleteObservations = "deleteObservations"
	opDeleteRelations    = "deleteRelations"
)

func (g *graph) apply(r *record) {
	switch r.op {
	case opCreateEntities:
		for _, e := range r.entities {
			if _, ok := g.byName[e.Name]; !ok {
				e.Observations = slices.Clip(e.Observations)
				g.loadEntity(entity{Entity: e})
			}
		}
	case opCreateRelations:
		for _, rel := range r.relations {
			if _, ok := g.byRel[rel]; !ok {
				g.loadRelation(relation{Relation: rel})
			}
		}
	case opAddObservations:
		for _, o := range r.obs {
			if i, ok := g.byName[o.EntityName]; ok {
				g.addObservations(g.ents.at(i), i, o.Contents)
			}
		}
	case opDeleteEntities:
		for _, name := range r.names {
			g.removeEntity(name)
			var gone []Relation
			for _, i := range g.appendEnds(nil, name) {
				gone = append(gone, g.rels.at(i).Relation)
			}
			for _, rel := range gone {
				g.removeRelation(rel) // all copies at the first; a repeat finds none
			}
		}
	case opDeleteObservations:
		for _, o := range r.obs {
			drop := make(map[string]struct{}, len(o.Contents))
			for _, c := range o.Contents {
				drop[c] = struct{}{}
			}
			for _, i := range g.copies(nil, o.EntityName) {
				e := g.ents.at(i)
				kept := make([]string, 0, len(e.Observations))
				for _, c := range e.Observations {
					if _, ok := drop[c]; !ok {
						kept = append(kept, c)
					}
				}
				if len(kept) != len(e.Observations) {
					e.Observations = kept
					if e.x != nil {
						e.x.obsSet = nil
					}
					g.changed(e, i)
				}
			}
		}
	case opDeleteRelations:
		for _, rel := range r.relations {
			g.removeRelation(rel)
		}
	}
}

// The plan functions work out what a mutation changes, without changing
// anything: the record to log and apply (nil when nothing changes).

func (g *graph) planCreateEntities(in []Entity) (*record, []Entity) {
	created := []Entity{}
	seen := map[string]bool{}
	for _, e := range in {
		e = Entity{Name: validUTF8(e.Name), EntityType: validUTF8(e.EntityType), Observations: slices.Clone(validAll(e.Observations))}
		if e.Observations == nil {
			e.Observations = []string{}
		}
		if _, ok := g.byName[e.Name]; ok || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		created = append(created, e)
	}
	if len(created) == 0 {
		return nil, created
	}
	return &record{op: opCreateEntities, entities: created}, created
}

func (g *graph) planCreateRelations(in []Relation) (*record, []Relation) {
	created := []Relation{}
	seen := map[Relation]bool{}
	for _, r := range in {
		r = Relation{From: validUTF8(r.From), To: validUTF8(r.To), RelationType: validUTF8(r.RelationType)}
		if _, ok := g.byRel[r]; ok || seen[r] {
			continue
		}
		seen[r] = true
		created = append(created, r)
	}
	if len(created) == 0 {
		return nil, created
	}
	return &record{op: opCreateRelations, relations: created}, created
}

func (g *graph) planAddObservations(in []Observations) (*record, []Observations, error) {
	for _, o := range in {
		if g.entity(validUTF8(o.EntityName)) == nil {
			return nil, nil, &EntityNotFoundError{Name: o.EntityName}
		}
	}
	results := make([]Observations, 0, len(in))
	var adds []Observations
	pending := map[string]map[string]bool{} // added by earlier items of this call
	for _, o := range in {
		name := validUTF8(o.EntityName)
		e := g.entity(name)
		added := []string{}
		mine := pending[name]
		if mine == nil {
			mine = map[string]bool{}
			pending[name] = mine
		}
		for _, c := range validAll(o.Contents) {
			if mine[c] || e.hasObservation(c) {
				continue
			}
			mine[c] = true
			added = append(added, c)
		}
		results = append(results, Observations{EntityName: name, Contents: added})
		if len(added) > 0 {
			adds = append(adds, Observations{EntityName: name, Contents: added})
		}
	}
	if adds == nil {
		return nil, results, nil
	}
	return &record{op: opAddObservations, obs: adds}, results, nil
}

func (g *graph) planDeleteEntities(names []string) *record {
	var del []string
	seen := map[string]bool{}
	for _, n := range names {
		n = validUTF8(n)
		if seen[n] {
			continue
		}
		seen[n] = true
		_, isEntity := g.byName[n]
		if _, isEnd := g.byEnd[n]; isEntity || isEnd {
			del = append(del, n)
		}
	}
	if del == nil {
		return nil
	}
	return &record{op: opDeleteEntities, names: del}
}

func (g *graph) planDeleteObservations(in []Observations) *record {
	var dels []Observations
	var idx []int32
	for _, o := range in {
		name := validUTF8(o.EntityName)
		idx = g.copies(idx[:0], name)
		var gone []string
		for _, c := range validAll(o.Contents) {
			if slices.Contains(gone, c) {
				continue
			}
			for _, i := range idx {
				if g.ents.at(i).hasObservation(c) {
					gone = append(gone, c)
					break
				}
			}
		}
		if gone != nil {
			dels = append(dels, Observations{EntityName: name, Contents: gone})
		}
	}
	if dels == nil {
		return nil
	}
	return &record{op: opDeleteObservations, obs: dels}
}

func (g *graph) planDeleteRelations(in []Relation) *record {
	var del []Relation
	seen := map[Relation]bool{}
	for _, r := range in {
		r = Relation{From: validUTF8(r.From), To: validUTF8(r.To), RelationType: validUTF8(r.RelationType)}
		if _, ok := g.byRel[r]; ok && !seen[r] {
			seen[r] = true
			del = append(del, r)
		}
	}
	if del == nil {
		return nil
	}
	return &record{op: opDeleteRelations, relations: del}
}

// Queries. The slices in their results are clipped, so that appending to
// them cannot reach the graph.

func (e *entity) public() Entity {
	return Entity{Name: e.Name, EntityType: e.EntityType, Observations: slices.Clip(e.Observations)}
}

func (g *graph) all() Graph {
	out := Graph{Entities: make([]Entity, 0, g.ents.len()-g.deadEnts), Relations: make([]Relation, 0, g.rels.len()-g.deadRels)}
	for i := range int32(g.ents.len()) {
		if e := g.ents.at(i); e.live {
			out.Entities = append(out.Entities, e.public())
		}
	}
	for i := range int32(g.rels.len()) {
		if r := g.rels.at(i); r.live {
			out.Relations = append(out.Relations, r.Relation)
		}
	}
	return out
}

// around returns the graph's entities at the given indexes, in the graph's
// order, and the relations with at least one end among them.
func (g *graph) around(idx []int32) Graph {
	slices.Sort(idx)
	out := Graph{Entities: make([]Entity, 0, len(idx)), Relations: []Relation{}}
	var rels []int32
	for _, i := range idx {
		e := g.ents.at(i)
		out.Entities = append(out.Entities, e.public())
		rels = g.appendEnds(rels, e.Name)
	}
	slices.Sort(rels)
	rels = slices.Compact(rels)
	for _, i := range rels {
		out.Relations = append(out.Relations, g.rels.at(i).Relation)
	}
	return out
}

func (g *graph) nodes(names []string) Graph {
	var idx []int32
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			idx = g.copies(idx, n)
		}
	}
	return g.around(idx)
}

// search matches query against names, types and observations, ignoring
// case: each is lower-cased (Go's Unicode simple case mapping) and must
// contain the lower-cased query.
//
// Each entity has a filter of the bytes, pairs and trigrams of its
// lower-cased fields (see bloom), kept current by every change, so that a query
// reads the text of only the entities that may match. A query with a NUL
// reads every entity's.
func (g *graph) search(query string) Graph {
	q := appendLower(nil, query)
	var idx []int32
	var buf []byte
	if len(q) == 0 || bytes.IndexByte(q, 0) >= 0 {
		for i := range int32(g.ents.len()) {
			if e := g.ents.at(i); e.live && (len(q) == 0 || matchFields(&e.Entity, q, &buf)) {
				idx = append(idx, i)
			}
		}
		return g.around(idx)
	}
	var m bloom
	addText(&m, q)
	// The words of the query's filter are tested the likeliest to fail
	// first (the most bits; a trigram's bit fails more often than a
	// bigram's, and that more often than a byte's): the first for every
	// entity, the others only for those it passes.
	var o [bloomWords]int
	for w := range o {
		o[w] = w
	}
	weight := func(w int) int {
		n := bits.OnesCount64(m[w])
		switch {
		case w < trigramWords:
			return 16 * n
		case w < trigramWords+bigramWords:
			return 4 * n
		}
		return n
	}
	slices.SortFunc(o[:], func(x, y int) int { return weight(y) - weight(x) })
	m0 := m[o[0]]
	for p, w0 := range g.blooms[o[0]].p {
		for k, f := range w0 {
			if f&m0 != m0 {
				continue
			}
			pass := true
			for _, w := range o[1:] {
				if g.blooms[w].p[p][k]&m[w] != m[w] {
					pass = false
					break
				}
			}
			i := int32(p<<pageBits | k)
			if e := g.ents.at(i); pass && e.live && matchFields(&e.Entity, q, &buf) {
				idx = append(idx, i)
			}
		}
	}
	return g.around(idx)
}

func matchFields(e *Entity, q []byte, buf *[]byte) bool {
	match := func(s string) bool {
		*buf = appendLower((*buf)[:0], s)
		return bytes.Contains(*buf, q)
	}
	if match(e.Name) || match(e.EntityType) {
		return true
	}
	return slices.ContainsFunc(e.Observations, match)
}

// appendLower appends s with each rune lower-cased as unicode.ToLower does,
// and each byte of invalid UTF-8 as U+FFFD.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, lowerASCII[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
		i += size
	}
	return dst
}

var lowerASCII = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	return t
}()

// A bloom is a filter of an entity's fields, each lower-cased: one bit of
// 256 for each trigram and one of 256 for each pair of bytes (Bloom
// filters), and one of 128 for each byte (its low seven bits). Trigrams
// and pairs that hold a NUL are left out. A field's text that holds the
// query holds its trigrams, pairs and bytes, so an entity whose filter
// lacks a bit of the query's cannot match.
type bloom [bloomWords]uint64

const (
	trigramWords = 4
	bigramWords  = 4
	bloomWords   = trigramWords + bigramWords + 2
)

// bloomPages holds the filters of the entities, one word of each filter
// in each pages, so that a search reads one word of every filter in one
// pass, and the other words only of the filters that pass.
type bloomPages [bloomWords]pages[uint64]

func (b *bloomPages) push(f bloom) {
	for w := range b {
		b[w].push(f[w])
	}
}

func (b *bloomPages) at(i int32) bloom {
	var f bloom
	for w := range b {
		f[w] = *b[w].at(i)
	}
	return f
}

func (b *bloomPages) set(i int32, f bloom) {
	for w := range b {
		*b[w].at(i) = f[w]
	}
}

func (b *bloomPages) join(c bloomPages) {
	for w := range b {
		b[w].join(c[w])
	}
}

// trigramBit and bigramBit return the filter bit of three or two bytes,
// packed in w with the first in the lowest byte.
func trigramBit(w uint32) uint32 { return w * 0x9E3779B1 >> (32 - 8) }

func bigramBit(w uint32) uint32 { return w * 0x85EBCA77 >> (32 - 8) }

// addByte sets in f the bit of byte c.
func (f *bloom) addByte(c byte) { f[trigramWords+bigramWords+c>>6&1] |= 1 << (c & 63) }

func (f *bloom) addTrigram(bit uint32) { f[bit/64] |= 1 << (bit % 64) }

func (f *bloom) addBigram(bit uint32) { f[trigramWords+bit/64] |= 1 << (bit % 64) }

// addText sets in f the bits of text.
func addText(f *bloom, text []byte) {
	for i, c := range text {
		f.addByte(c)
		if i+2 > len(text) || c == 0 || text[i+1] == 0 {
			continue
		}
		w := uint32(c) | uint32(text[i+1])<<8
		f.addBigram(bigramBit(w))
		if i+3 <= len(text) && text[i+2] != 0 {
			f.addTrigram(trigramBit(w | uint32(text[i+2])<<16))
		}
	}
}

// bloomOf returns the filter of e. A field in ASCII is read in place; any
// other is lower-cased into scratch (which may be nil) first.
func bloomOf(e *Entity, scratch *[]byte) bloom {
	var f bloom
	var buf []byte
	if scratch == nil {
		scratch = &buf
	}
	field := func(s string) {
		var w uint32
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= utf8.RuneSelf {
				*scratch = appendLower((*scratch)[:0], s)
				addText(&f, *scratch)
				return
			}
			c = lowerASCII[c]
			f.addByte(c)
			w = w>>8 | uint32(c)<<16 // the last three bytes, packed as trigramBit takes them
			if i >= 1 && w&0xFF00 != 0 && w&0xFF0000 != 0 {
				f.addBigram(bigramBit(w >> 8))
				if i >= 2 && w&0xFF != 0 {
					f.addTrigram(trigramBit(w))
				}
			}
		}
	}
	field(e.Name)
	field(e.EntityType)
	for _, o := range e.Observations {
		field(o)
	}
	return f
}
