package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/glob"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// maxWalkEntries bounds how many entries one directory_tree or search_files
// call visits, so that a call on a huge tree ends with a clear error instead
// of exhausting memory.
const maxWalkEntries = 200_000

var errTooMany = fmt.Errorf("more than %d entries: choose a deeper path or add excludePatterns", maxWalkEntries)

func kind(e fsroot.Entry) string {
	if e.Dir {
		return "[DIR]"
	}
	return "[FILE]"
}

// readDir lists the directory at path.
func (s *server) readDir(req *mcp.CallToolRequest, path string) ([]fsroot.Entry, error) {
	p, err := s.resolve(req, path)
	if err != nil {
		return nil, err
	}
	return p.ReadDir()
}

// listArgs are list_directory's arguments.
type listArgs struct {
	Path string `json:"path"`
}

func (a *listArgs) Validate() error { return required("path", a.Path) }

func (a *listArgs) ReplyHint() string { return listHint }

const listHint = "list a subdirectory, or find some of the entries with search_files and a pattern"

func (s *server) listDirectory(_ context.Context, req *mcp.CallToolRequest, in *listArgs) (*mcp.CallToolResult, error) {
	entries, err := s.readDir(req, in.Path)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = kind(e) + " " + e.Name
	}
	return mcpserver.TextResult(strings.Join(lines, "\n")), nil
}

type listSizesArgs struct {
	Path   string `json:"path"`
	SortBy string `json:"sortBy"`
}

func (a *listSizesArgs) Validate() error {
	switch a.SortBy {
	case "":
		a.SortBy = "name"
	case "name", "size":
	default:
		return fmt.Errorf(`sortBy must be "name" or "size", got %q`, a.SortBy)
	}
	return required("path", a.Path)
}

func (a *listSizesArgs) ReplyHint() string { return listHint }

func (s *server) listDirectoryWithSizes(_ context.Context, req *mcp.CallToolRequest, in *listSizesArgs) (*mcp.CallToolResult, error) {
	entries, err := s.readDir(req, in.Path)
	if err != nil {
		return nil, err
	}
	type row struct {
		e    fsroot.Entry
		size int64
	}
	rows := make([]row, 0, len(entries))
	var files, dirs int
	var total int64
	for _, e := range entries {
		var size int64
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		rows = append(rows, row{e, size})
		if e.Dir {
			dirs++
		} else {
			files++
			total += size
		}
	}
	if in.SortBy == "size" {
		slices.SortStableFunc(rows, func(a, b row) int { return compareInt64(b.size, a.size) })
	}
	var sb strings.Builder
	for _, r := range rows {
		sb.WriteString(kind(r.e) + " " + padEnd(r.e.Name, 30) + " ")
		if !r.e.Dir {
			sb.WriteString(padStart(formatSize(r.size), 10))
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "\nTotal: %d files, %d directories\nCombined size: %s", files, dirs, formatSize(total))
	return mcpserver.TextResult(sb.String()), nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func padEnd(s string, n int) string {
	if c := utf8.RuneCountInString(s); c < n {
		return s + strings.Repeat(" ", n-c)
	}
	return s
}

func padStart(s string, n int) string {
	if c := utf8.RuneCountInString(s); c < n {
		return strings.Repeat(" ", n-c) + s
	}
	return s
}

// formatSize writes a size as the reference server does: "0 B", "512 B",
// "1.50 KB", up to TB.
func formatSize(n int64) string {
	if n <= 0 {
		return "0 B"
	}
	units := []string{"B", "KB", "MB", "GB", "TB"}
	i, v := 0, float64(n)
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + units[i]
}

type treeArgs struct {
	Path            string   `json:"path"`
	ExcludePatterns []string `json:"excludePatterns"`
}

func (a *treeArgs) Validate() error { return required("path", a.Path) }

func (a *treeArgs) ReplyHint() string {
	return fmt.Sprintf("ask for the tree of a subdirectory of %s, or leave parts out with excludePatterns", a.Path)
}

func (s *server) directoryTree(ctx context.Context, req *mcp.CallToolRequest, in *treeArgs) (*mcp.CallToolResult, error) {
	exclude, err := treeExcluder(in.ExcludePatterns)
	if err != nil {
		return nil, err
	}
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	quoted, err := s.quotedTree(ctx, p, exclude)
	if err != nil {
		return nil, err
	}
	if len(quoted) > mcpserver.TextLimit(ctx) {
		return nil, overBudget(ctx, "the tree", in)
	}
	return mcpserver.QuotedTextResult(ctx, quoted), nil
}

// quotedTree walks p and returns its tree, quoted as a JSON string; it stops
// once the text passes what the reply budget allows.
func (s *server) quotedTree(ctx context.Context, p *fsroot.Path, exclude func(string) bool) ([]byte, error) {
	limit := mcpserver.TextLimit(ctx)
	// Start the text at the size of the last tree, so that it grows once
	// at most.
	w := treeWriter{grow: max(64<<10, min(int(s.lastTree.Load()), limit))}
	count := 0
	err := walk(ctx, p, &count, func(rel string, e fsroot.Entry) bool {
		if exclude(rel) || len(w.b) > limit {
			return false
		}
		dir := e.Dir && !e.Link
		w.entry(strings.Count(rel, "/"), e.Name, dir)
		return dir
	})
	if err != nil {
		return nil, err
	}
	quoted := w.finish()
	s.lastTree.Store(int64(len(quoted)))
	return quoted, nil
}

// overBudget is the error for an answer found, while it is being made, to
// pass the reply budget.
func overBudget(ctx context.Context, what string, args mcpserver.ReplyHinter) error {
	return fmt.Errorf("%s would pass this server's reply budget of %d bytes (--max-reply): %s", what, mcpserver.ReplyBudget(ctx), args.ReplyHint())
}

// treeWriter writes directory_tree's JSON while the walk goes, in the layout
// of JSON.stringify(tree, null, 2), and quoted at once as the JSON string
// that carries it in the reply (see mcpserver.QuotedTextResult), without
// the JSON being written first. Entries arrive depth first,
// and each directory's children array stays open until an entry at its
// depth or above arrives.
type treeWriter struct {
	grow   int // the size to start at
	b      []byte
	counts []int // entries written in each open array, outermost first
}

func (w *treeWriter) entry(depth int, name string, dir bool) {
	if w.counts == nil {
		w.b = append(make([]byte, 0, w.grow), `"[`...)
		w.counts = []int{0}
	}
	for len(w.counts) > depth+1 {
		w.closeDir()
	}
	level := len(w.counts) - 1
	if w.counts[level] > 0 {
		w.b = append(w.b, ',')
	}
	w.counts[level]++
	w.newline(4*level + 2)
	w.b = append(w.b, '{')
	w.newline(4*level + 4)
	w.b = append(w.b, `\"name\": `...)
	w.b = appendQuotedName(w.b, name)
	w.b = append(w.b, ',')
	w.newline(4*level + 4)
	if dir {
		w.b = append(w.b, `\"type\": \"directory\",`...)
		w.newline(4*level + 4)
		w.b = append(w.b, `\"children\": [`...)
		w.counts = append(w.counts, 0)
		return
	}
	w.b = append(w.b, `\"type\": \"file\"`...)
	w.newline(4*level + 2)
	w.b = append(w.b, '}')
}

// closeDir ends the innermost open children array and its directory.
func (w *treeWriter) closeDir() {
	level := len(w.counts) - 1
	if w.counts[level] > 0 {
		w.newline(4 * level)
	}
	w.b = append(w.b, ']')
	w.counts = w.counts[:level]
	w.newline(4*(level-1) + 2)
	w.b = append(w.b, '}')
}

const spaces = "                                                                "

// newline writes a newline, quoted, and indent spaces.
func (w *treeWriter) newline(indent int) {
	w.b = append(w.b, `\n`...)
	for indent > len(spaces) {
		w.b = append(w.b, spaces...)
		indent -= len(spaces)
	}
	w.b = append(w.b, spaces[:indent]...)
}

// finish closes what is open and returns the quoted tree.
func (w *treeWriter) finish() []byte {
	if w.counts == nil {
		return []byte(`"[]"`)
	}
	for len(w.counts) > 1 {
		w.closeDir()
	}
	if w.counts[0] > 0 {
		w.newline(0)
	}
	return append(w.b, ']', '"')
}

// treeExcluder returns directory_tree's exclusion test, as the reference's:
// a pattern with * matches the relative path itself; one without also
// matches a name at any depth and everything below it.
func treeExcluder(patterns []string) (func(rel string) bool, error) {
	var compiled []*glob.Pattern
	for _, pat := range patterns {
		alts := []string{pat}
		if !strings.Contains(pat, "*") {
			alts = append(alts, "**/"+pat, "**/"+pat+"/**")
		}
		for _, a := range alts {
			g, err := glob.Compile(a)
			if err != nil {
				return nil, fmt.Errorf("excludePatterns: %q: %w", pat, err)
			}
			compiled = append(compiled, g)
		}
	}
	return matchAny(compiled), nil
}

func matchAny(patterns []*glob.Pattern) func(string) bool {
	return func(rel string) bool {
		for _, g := range patterns {
			if g.Match(rel) {
				return true
			}
		}
		return false
	}
}

// walk runs p.Walk, stopping at cancellation or after maxWalkEntries.
func walk(ctx context.Context, p *fsroot.Path, count *int, visit func(string, fsroot.Entry) bool) error {
	var stop error
	err := p.Walk(func(rel string, e fsroot.Entry) bool {
		if stop != nil {
			return false
		}
		if *count++; *count > maxWalkEntries {
			stop = errTooMany
			return false
		}
		if *count%1024 == 0 && ctx.Err() != nil {
			stop = ctx.Err()
			return false
		}
		return visit(rel, e)
	})
	return errors.Join(err, stop)
}

// appendQuotedName appends a name as JSON.stringify writes it in a JSON
// text (invalid UTF-8 becoming U+FFFD), and that quoted again, as
// mcpserver.QuotedTextResult wants the text: each escape of the first level
// has its backslash escaped, and U+2028 and U+2029, which JSON.stringify
// leaves alone, are escaped at the second.
func appendQuotedName(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '\\', '"')
	start := 0 // s[start:i] needs no escaping and is not written yet
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			invalid := r == utf8.RuneError && size == 1
			if !invalid && r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		switch r {
		case '"':
			b = append(b, `\\\"`...)
		case '\\':
			b = append(b, `\\\\`...)
		case '\n':
			b = append(b, `\\n`...)
		case '\r':
			b = append(b, `\\r`...)
		case '\t':
			b = append(b, `\\t`...)
		case '\b':
			b = append(b, `\\b`...)
		case '\f':
			b = append(b, `\\f`...)
		case utf8.RuneError:
			b = append(b, "\uFFFD"...)
		case '\u2028', '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, '\\', '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '\\', '"')
}

type searchArgs struct {
	Path            string   `json:"path"`
	Pattern         string   `json:"pattern"`
	ExcludePatterns []string `json:"excludePatterns"`
}

func (a *searchArgs) Validate() error {
	if err := required("path", a.Path); err != nil {
		return err
	}
	return required("pattern", a.Pattern)
}

func (a *searchArgs) ReplyHint() string {
	return "narrow the pattern, search a subdirectory, or leave parts out with excludePatterns"
}

func (s *server) searchFiles(ctx context.Context, req *mcp.CallToolRequest, in *searchArgs) (*mcp.CallToolResult, error) {
	pattern, err := glob.Compile(in.Pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", in.Pattern, err)
	}
	var excludes []*glob.Pattern
	for _, pat := range in.ExcludePatterns {
		g, err := glob.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("excludePatterns: %q: %w", pat, err)
		}
		excludes = append(excludes, g)
	}
	excluded := matchAny(excludes)
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	count := 0
	limit := mcpserver.TextLimit(ctx)
	err = walk(ctx, p, &count, func(rel string, e fsroot.Entry) bool {
		if excluded(rel) || sb.Len() > limit {
			return false
		}
		if pattern.Match(rel) {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(p.Abs)
			if !strings.HasSuffix(p.Abs, "/") {
				sb.WriteByte('/')
			}
			sb.WriteString(rel)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if sb.Len() > limit {
		return nil, overBudget(ctx, "the matches", in)
	}
	if sb.Len() == 0 {
		return mcpserver.TextResult("No matches found"), nil
	}
	return mcpserver.TextResult(sb.String()), nil
}

func (s *server) getFileInfo(_ context.Context, req *mcp.CallToolRequest, in *pathArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	info, err := p.Info()
	if err != nil {
		return nil, err
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return "unknown"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	text := fmt.Sprintf("size: %d\ncreated: %s\nmodified: %s\naccessed: %s\nisDirectory: %t\nisFile: %t\npermissions: %03o",
		info.Size(), stamp(info.Created), stamp(info.ModTime()), stamp(info.Accessed),
		info.IsDir(), info.Mode().IsRegular(), info.Mode().Perm())
	return mcpserver.TextResult(text), nil
}

type noArgs struct{}

func (s *server) listAllowedDirectories(_ context.Context, req *mcp.CallToolRequest, _ *noArgs) (*mcp.CallToolResult, error) {
	set, note := s.roots(req.Session)
	var sb strings.Builder
	sb.WriteString("Allowed directories:")
	for _, r := range set.Roots() {
		sb.WriteString("\n" + r.Given)
		if r.Canonical != r.Given {
			sb.WriteString("\n" + r.Canonical)
		}
	}
	if set.Len() == 0 {
		sb.WriteString("\n(none: " + note + ")")
	}
	return mcpserver.TextResult(sb.String()), nil
}

var _ fs.FileInfo = fsroot.Info{}
