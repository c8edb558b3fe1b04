package memory

import (
	"github.com/zero-dev/zero/internal/graphstore"
)

// The tools answer as the reference does: the text is JSON.stringify(value,
// null, 2) of the result, byte for byte; the structured content is the same
// value, compact. Both are written here directly, rather than through
// encoding/json, whose escaping differs from JavaScript's.

// A style is compact JSON or JSON.stringify's two-space indentation.
type style bool

const (
	compact  style = false
	indented style = true
)

// newline starts a line at depth when indenting.
func (st style) newline(b []byte, depth int) []byte {
	if st == compact {
		return b
	}
	b = append(b, '\n')
	for range depth {
		b = append(b, "  "...)
	}
	return b
}

func (st style) key(b []byte, depth int, first bool, name string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = st.newline(b, depth)
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	if st == indented {
		b = append(b, ' ')
	}
	return b
}

// list appends a JSON array of n items, each written by item at depth+1.
func (st style) list(b []byte, depth, n int, item func(b []byte, i, depth int) []byte) []byte {
	if n == 0 {
		return append(b, '[', ']')
	}
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = st.newline(b, depth+1)
		b = item(b, i, depth+1)
	}
	b = st.newline(b, depth)
	return append(b, ']')
}

func (st style) strings(b []byte, depth int, ss []string) []byte {
	return st.list(b, depth, len(ss), func(b []byte, i, _ int) []byte { return graphstore.AppendJSONString(b, ss[i]) })
}

func (st style) entity(b []byte, depth int, e *graphstore.Entity) []byte {
	b = append(b, '{')
	b = st.key(b, depth+1, true, "name")
	b = graphstore.AppendJSONString(b, e.Name)
	b = st.key(b, depth+1, false, "entityType")
	b = graphstore.AppendJSONString(b, e.EntityType)
	b = st.key(b, depth+1, false, "observations")
	b = st.strings(b, depth+1, e.Observations)
	b = st.newline(b, depth)
	return append(b, '}')
}

func (st style) relation(b []byte, depth int, r *graphstore.Relation) []byte {
	b = append(b, '{')
	b = st.key(b, depth+1, true, "from")
	b = graphstore.AppendJSONString(b, r.From)
	b = st.key(b, depth+1, false, "to")
	b = graphstore.AppendJSONString(b, r.To)
	b = st.key(b, depth+1, false, "relationType")
	b = graphstore.AppendJSONString(b, r.RelationType)
	b = st.newline(b, depth)
	return append(b, '}')
}

func (st style) entities(b []byte, depth int, es []graphstore.Entity) []byte {
	return st.list(b, depth, len(es), func(b []byte, i, depth int) []byte { return st.entity(b, depth, &es[i]) })
}

func (st style) relations(b []byte, depth int, rs []graphstore.Relation) []byte {
	return st.list(b, depth, len(rs), func(b []byte, i, depth int) []byte { return st.relation(b, depth, &rs[i]) })
}

func (st style) results(b []byte, depth int, rs []graphstore.Observations) []byte {
	return st.list(b, depth, len(rs), func(b []byte, i, depth int) []byte {
		b = append(b, '{')
		b = st.key(b, depth+1, true, "entityName")
		b = graphstore.AppendJSONString(b, rs[i].EntityName)
		b = st.key(b, depth+1, false, "addedObservations")
		b = st.strings(b, depth+1, rs[i].Contents)
		b = st.newline(b, depth)
		return append(b, '}')
	})
}

// appendGraph appends {"entities": [...], "relations": [...]}.
func appendGraph(b []byte, g graphstore.Graph, st style) []byte {
	b = append(b, '{')
	b = st.key(b, 1, true, "entities")
	b = st.entities(b, 1, g.Entities)
	b = st.key(b, 1, false, "relations")
	b = st.relations(b, 1, g.Relations)
	b = st.newline(b, 0)
	return append(b, '}')
}

// appendField appends {"name": value}, value written by f at depth 1.
func appendField(b []byte, st style, name string, f func(b []byte, depth int) []byte) []byte {
	b = append(b, '{')
	b = st.key(b, 1, true, name)
	b = f(b, 1)
	b = st.newline(b, 0)
	return append(b, '}')
}
