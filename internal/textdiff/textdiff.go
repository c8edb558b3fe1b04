// Package textdiff makes line-based unified diffs in the format of jsdiff's
// createTwoFilesPatch, which the filesystem MCP server's edit_file tool
// returns.
package textdiff

import (
	"math"
	"strconv"
	"strings"
)

const (
	// contextLines is jsdiff's default number of context lines around a change.
	contextLines = 4
	// maxNodes bounds the memory of the search: each node takes 8 bytes.
	maxNodes = 1 << 21
	// maxWork bounds the time of the search, counted in diagonals visited
	// plus lines compared.
	maxWork = 1 << 25
)

// Unified returns a unified diff of oldText to newText in the format of
// jsdiff's createTwoFilesPatch with default options (4 lines of context).
//
// Lines end after each '\n'. The headers are always written after a tab, as
// jsdiff does when they are given. The diff is a minimal one, chosen as
// jsdiff's Myers search chooses it, unless the search would be too costly:
// then the rest of the text after the furthest point reached is shown as
// deleted and inserted.
func Unified(oldName, newName, oldText, newText, oldHeader, newHeader string) string {
	a, b := splitLines(oldText), splitLines(newText)
	var sb strings.Builder
	if oldName == newName {
		sb.WriteString("Index: " + oldName + "\n")
	}
	sb.WriteString("===================================================================\n")
	sb.WriteString("--- " + oldName + "\t" + oldHeader + "\n")
	sb.WriteString("+++ " + newName + "\t" + newHeader + "\n")
	writeHunks(&sb, a, b, diff(a, b))
	return sb.String()
}

// splitLines splits s after each '\n'. The last line lacks the '\n' if s
// does not end with one. This equals jsdiff's line tokens, "\r\n" included.
func splitLines(s string) []string {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	lines := make([]string, 0, n)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

type opKind uint8

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// A run is n consecutive lines with the same operation, as one jsdiff
// change object.
type run struct {
	kind opKind
	n    int
}

type script []run

// add appends n lines of kind k, merging with the last run as jsdiff does.
func (s *script) add(k opKind, n int) {
	if n <= 0 {
		return
	}
	if l := len(*s); l > 0 && (*s)[l-1].kind == k {
		(*s)[l-1].n += n
		return
	}
	*s = append(*s, run{k, n})
}

// diff returns the edit script from a to b.
func diff(a, b []string) script {
	var s script
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s.add(opEqual, p)
	a, b = a[p:], b[p:]
	if len(a) == 0 || len(b) == 0 || len(a) >= math.MaxInt32/2 || len(b) >= math.MaxInt32/2 {
		s.add(opDelete, len(a))
		s.add(opInsert, len(b))
		return s
	}
	ia, ib := intern(a, b)
	myers(ia, ib, &s)
	return s
}

// intern maps equal lines to equal numbers, so comparisons take constant time.
func intern(a, b []string) ([]int32, []int32) {
	ids := make(map[string]int32, len(a))
	conv := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// A node is a path of the search: its last edit, then a snake of equal
// lines ending after x lines of a.
type node struct {
	x int32
	// from is the previous node's index times 2, plus 1 if the last edit
	// inserts a line of b, 0 if it deletes a line of a; -1 for the start.
	from int32
}

// nodeBlock is the number of nodes in each block of an arena.
const nodeBlock = 1 << 14

// An arena holds nodes in blocks, so that growing it copies little. Every
// block but the last holds nodeBlock nodes.
type arena [][]node

func (ar *arena) at(i int32) node { return (*ar)[i/nodeBlock][i%nodeBlock] }

func (ar *arena) len() int {
	bs := *ar
	return (len(bs)-1)*nodeBlock + len(bs[len(bs)-1])
}

func (ar *arena) add(nd node) int32 {
	bs := *ar
	if len(bs[len(bs)-1]) == nodeBlock {
		bs = append(bs, make([]node, 0, nodeBlock))
	}
	last := &bs[len(bs)-1]
	*last = append(*last, nd)
	*ar = bs
	return int32(ar.len() - 1)
}

// myers appends an edit script from a to b to s. It follows jsdiff's
// Diff.diffWithOptionsObj step by step, so that among minimal scripts it
// picks the one jsdiff picks. A diagonal k holds the points with x-y == k,
// where x lines of a and y lines of b are consumed.
func myers(a, b []int32, s *script) {
	n, m := len(a), len(b)
	x0 := 0
	for x0 < n && x0 < m && a[x0] == b[x0] {
		x0++
	}
	if x0 == n && x0 == m {
		s.add(opEqual, n)
		return
	}
	nodes := arena{{{x: int32(x0), from: -1}}}
	// v[k+off] is the index of the furthest path on diagonal k, or -1.
	off := m + 1
	v := make([]int32, n+m+3)
	for i := range v {
		v[i] = -1
	}
	v[off] = 0
	get := func(k int) int32 {
		if k+off < 0 || k+off >= len(v) {
			return -1
		}
		return v[k+off]
	}
	lo, hi := math.MinInt, math.MaxInt // jsdiff's min/maxDiagonalToConsider
	// best is the furthest path (most lines consumed, then most deleted) as
	// of the last finished step, where the fallback starts; cand is the
	// furthest so far.
	best, cand, candSum := int32(0), int32(0), 2*x0
	work := 0
	for d := 1; d <= n+m; d++ {
		for k := max(lo, -d); k <= min(hi, d); k += 2 {
			if nodes.len() >= maxNodes || work >= maxWork {
				fallback(a, b, &nodes, best, s)
				return
			}
			work++
			if k < -m-1 || k > n+1 {
				// jsdiff's lo and hi keep k in range; were it not, both
				// neighbours would be empty and the step would do nothing.
				continue
			}
			ri, ai := get(k-1), get(k+1)
			if ri >= 0 {
				v[k-1+off] = -1
			}
			canAdd := false
			if ai >= 0 {
				y := int(nodes.at(ai).x) - k
				canAdd = y >= 1 && y <= m
			}
			canRemove := ri >= 0 && int(nodes.at(ri).x) < n
			if !canAdd && !canRemove {
				v[k+off] = -1
				continue
			}
			var x int
			var from int32
			if !canRemove || (canAdd && nodes.at(ri).x < nodes.at(ai).x) {
				x, from = int(nodes.at(ai).x), ai<<1|1
			} else {
				x, from = int(nodes.at(ri).x)+1, ri<<1
			}
			y := x - k
			x1 := x
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			work += x - x1
			idx := nodes.add(node{x: int32(x), from: from})
			if x >= n && y >= m {
				path(&nodes, idx, s)
				return
			}
			v[k+off] = idx
			if x >= n {
				hi = min(hi, k-1)
			}
			if y >= m {
				lo = max(lo, k+1)
			}
			if x+y > candSum || x+y == candSum && x > int(nodes.at(cand).x) {
				cand, candSum = idx, x+y
			}
		}
		best = cand
	}
	// Not reached: jsdiff's search always ends by d == n+m.
	fallback(a, b, &nodes, best, s)
}

// path appends the edits of the path ending at node idx to s and returns
// the point where it ends.
func path(nodes *arena, idx int32, s *script) (x, y int) {
	var chain []int32
	for i := idx; i >= 0; i = nodes.at(i).from >> 1 { // the start's from is -1
		chain = append(chain, i)
	}
	k := 0
	for i := len(chain) - 1; i >= 0; i-- {
		nd := nodes.at(chain[i])
		switch {
		case nd.from < 0:
		case nd.from&1 == 1:
			s.add(opInsert, 1)
			k--
		default:
			s.add(opDelete, 1)
			x++
			k++
		}
		s.add(opEqual, int(nd.x)-x)
		x = int(nd.x)
		y = x - k
	}
	return x, y
}

// fallback appends the path ending at node best, then shows the rest of a
// as deleted and the rest of b as inserted, except for their common suffix.
func fallback(a, b []int32, nodes *arena, best int32, s *script) {
	x, y := path(nodes, best, s)
	n, m := len(a), len(b)
	suffix := 0
	for suffix < n-x && suffix < m-y && a[n-1-suffix] == b[m-1-suffix] {
		suffix++
	}
	s.add(opDelete, n-x-suffix)
	s.add(opInsert, m-y-suffix)
	s.add(opEqual, suffix)
}

type hunkLine struct {
	op   byte
	text string
}

// writeHunks writes the hunks of script s from a to b, grouping changes as
// jsdiff's structuredPatch and formatPatch do.
func writeHunks(sb *strings.Builder, a, b []string, s script) {
	s = append(s, run{opEqual, 0}) // jsdiff's trailing empty change object
	var lines []hunkLine
	oldStart, newStart := 0, 0 // 0 while no hunk is open
	oldLine, newLine := 1, 1
	ai, bi := 0, 0
	for i, r := range s {
		if r.kind == opEqual {
			if oldStart != 0 {
				if r.n <= 2*contextLines && i < len(s)-2 {
					for _, t := range a[ai : ai+r.n] {
						lines = append(lines, hunkLine{' ', t})
					}
				} else {
					c := min(r.n, contextLines)
					for _, t := range a[ai : ai+c] {
						lines = append(lines, hunkLine{' ', t})
					}
					writeHunk(sb, oldStart, oldLine-oldStart+c, newStart, newLine-newStart+c, lines)
					oldStart, newStart, lines = 0, 0, lines[:0]
				}
			}
			ai += r.n
			bi += r.n
			oldLine += r.n
			newLine += r.n
			continue
		}
		if oldStart == 0 {
			oldStart, newStart = oldLine, newLine
			if i > 0 { // the previous run is equal
				c := min(s[i-1].n, contextLines)
				for _, t := range a[ai-c : ai] {
					lines = append(lines, hunkLine{' ', t})
				}
				oldStart -= c
				newStart -= c
			}
		}
		if r.kind == opDelete {
			for _, t := range a[ai : ai+r.n] {
				lines = append(lines, hunkLine{'-', t})
			}
			ai += r.n
			oldLine += r.n
		} else {
			for _, t := range b[bi : bi+r.n] {
				lines = append(lines, hunkLine{'+', t})
			}
			bi += r.n
			newLine += r.n
		}
	}
}

func writeHunk(sb *strings.Builder, oldStart, oldLines, newStart, newLines int, lines []hunkLine) {
	// An empty range names the line before it, as in jsdiff.
	if oldLines == 0 {
		oldStart--
	}
	if newLines == 0 {
		newStart--
	}
	sb.WriteString("@@ -" + strconv.Itoa(oldStart) + "," + strconv.Itoa(oldLines) +
		" +" + strconv.Itoa(newStart) + "," + strconv.Itoa(newLines) + " @@\n")
	for _, l := range lines {
		sb.WriteByte(l.op)
		if t, ok := strings.CutSuffix(l.text, "\n"); ok {
			sb.WriteString(t)
			sb.WriteByte('\n')
		} else {
			sb.WriteString(l.text)
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}
