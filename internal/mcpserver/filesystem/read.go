package filesystem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver"
)

// pathArgs are the arguments of the tools that take one path.
type pathArgs struct {
	Path string `json:"path"`
}

func (a *pathArgs) Validate() error { return required("path", a.Path) }

func required(name, value string) error {
	if value == "" {
		return fmt.Errorf("%s is required and must not be empty", name)
	}
	return nil
}

type readTextArgs struct {
	Path string `json:"path"`
	Head *int   `json:"head"`
	Tail *int   `json:"tail"`
}

func (a *readTextArgs) Validate() error {
	if err := required("path", a.Path); err != nil {
		return err
	}
	if a.Head != nil && a.Tail != nil {
		return errors.New("give head or tail, not both")
	}
	if a.Head != nil && *a.Head < 1 {
		return fmt.Errorf("head must be at least 1, got %d", *a.Head)
	}
	if a.Tail != nil && *a.Tail < 1 {
		return fmt.Errorf("tail must be at least 1, got %d", *a.Tail)
	}
	return nil
}

func (s *server) readTextFile(ctx context.Context, req *mcp.CallToolRequest, in *readTextArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	var text string
	switch {
	case in.Head != nil:
		text, err = head(p, *in.Head)
	case in.Tail != nil:
		text, err = tail(p, *in.Tail)
	default:
		var b []byte
		b, err = p.ReadFile()
		text = string(b)
	}
	if err != nil {
		return nil, err
	}
	if !mcpserver.TextFits(ctx, text) {
		hint := partsHint(ctx, text, in.Tail == nil, in.Head == nil)
		return nil, fmt.Errorf("%s: %w", p.Requested, mcpserver.BudgetError(ctx, mcpserver.ResultSize(mcpserver.TextResult(text)), hint))
	}
	return mcpserver.TextResult(text), nil
}

// partsHint says how many lines of text, from its start (when it is the
// start of the file) and from its end (when it is the end of the file), fit
// the reply budget.
func partsHint(ctx context.Context, text string, start, end bool) string {
	limit := mcpserver.TextLimit(ctx)
	fit := func(lines []string) int {
		used := 2
		for i, l := range lines {
			if used += mcpserver.QuotedSize(l) - 2; used > limit {
				return i
			}
		}
		return len(lines)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
	first := fit(lines)
	slices.Reverse(lines)
	last := fit(lines)
	switch {
	case start && end && first+last == 0:
		return "not even its first or last line fits, so this tool cannot return it"
	case start && end:
		return fmt.Sprintf("read it in parts with head or tail: head %d fits, and so does tail %d", first, last)
	case start && first > 0:
		return fmt.Sprintf("ask for fewer lines: head %d fits", first)
	case end && last > 0:
		return fmt.Sprintf("ask for fewer lines: tail %d fits", last)
	}
	return "not even one of those lines fits, so this tool cannot return it"
}

// head returns the first n lines of the file, each with its line ending, as
// head -n does.
func head(p *fsroot.Path, n int) (string, error) {
	f, err := p.Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var sb strings.Builder
	for range n {
		line, err := r.ReadString('\n')
		sb.WriteString(line)
		if sb.Len() > fsroot.MaxReadSize {
			return "", fmt.Errorf("%s: the first %d lines are more than %d bytes", p.Requested, n, fsroot.MaxReadSize)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.Requested, err)
		}
	}
	return sb.String(), nil
}

// tail returns the last n lines of the file, each with its line ending, as
// tail -n does. It reads the file backwards from the end.
func tail(p *fsroot.Path, n int) (string, error) {
	f, err := p.Open()
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s: %w", p.Requested, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s: is a directory", p.Requested)
	}
	size := fi.Size()
	const chunk = 64 << 10
	var buf []byte // the end of the file read so far
	start := size
	for start > 0 {
		step := min(chunk, start)
		start -= step
		b := make([]byte, step, int(step)+len(buf))
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return "", fmt.Errorf("%s: %w", p.Requested, err)
		}
		buf = append(b, buf...)
		if cut, ok := lastLines(buf, n); ok {
			return string(buf[cut:]), nil
		}
		if len(buf) > fsroot.MaxReadSize {
			return "", fmt.Errorf("%s: the last %d lines are more than %d bytes", p.Requested, n, fsroot.MaxReadSize)
		}
	}
	return string(buf), nil
}

// lastLines returns where the last n lines of b begin, if b holds the start
// of the first of them. A final line ending does not begin a new line.
func lastLines(b []byte, n int) (int, bool) {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// mediaTypes maps extensions to the MIME types the reference server knows.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".svg": "image/svg+xml",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac",
}

func (s *server) readMediaFile(ctx context.Context, req *mcp.CallToolRequest, in *pathArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	// The data goes out twice, base64: as content and as structured content.
	tooLarge := func(size int64) error {
		return fmt.Errorf("%s: %w", p.Requested, mcpserver.BudgetError(ctx, int(min(size, fsroot.MaxReadSize))*8/3,
			fmt.Sprintf("this tool returns files of at most about %d bytes", mcpserver.ReplyBudget(ctx)*3/8-1024)))
	}
	if fi, err := p.Info(); err == nil && fi.Size()*8/3 > int64(mcpserver.ReplyBudget(ctx)) {
		return nil, tooLarge(fi.Size())
	}
	data, err := p.ReadFile()
	if err != nil {
		return nil, err
	}
	mime, ok := mediaTypes[strings.ToLower(filepath.Ext(p.Abs))]
	if !ok {
		mime = "application/octet-stream"
	}
	var item mcp.Content
	switch {
	case strings.HasPrefix(mime, "image/"):
		item = &mcp.ImageContent{Data: data, MIMEType: mime}
	case strings.HasPrefix(mime, "audio/"):
		item = &mcp.AudioContent{Data: data, MIMEType: mime}
	default:
		u := url.URL{Scheme: "file", Path: p.Abs}
		item = &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: u.String(), MIMEType: mime, Blob: data}}
	}
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{item},
		StructuredContent: map[string][]mcp.Content{"content": {item}},
	}
	if size := mcpserver.ResultSize(res); size > mcpserver.ReplyBudget(ctx) {
		return nil, tooLarge(int64(len(data)))
	}
	return res, nil
}

type readMultipleArgs struct {
	Paths []string `json:"paths"`
}

func (a *readMultipleArgs) Validate() error {
	if len(a.Paths) == 0 {
		return errors.New("paths must hold at least one path")
	}
	for i, p := range a.Paths {
		if p == "" {
			return fmt.Errorf("paths[%d] is empty", i)
		}
	}
	return nil
}

// readMultipleFiles answers in the reference's format: "path:\ncontent\n" for
// each file, "path: Error - message" for each failure, joined by "\n---\n".
// A file that would take the reply past its budget is skipped with an
// error line; the files after it may still fit.
func (s *server) readMultipleFiles(ctx context.Context, req *mcp.CallToolRequest, in *readMultipleArgs) (*mcp.CallToolResult, error) {
	parts := make([]string, len(in.Paths))
	room := mcpserver.TextLimit(ctx) - 1024 // quoted bytes left; some kept for error lines
	for i, path := range in.Paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part, err := s.readForMultiple(ctx, req, path, room)
		if err != nil {
			part = fmt.Sprintf("%s: Error - %v", path, err)
		}
		room -= mcpserver.QuotedSize(part) + len(`\n---\n`)
		parts[i] = part
	}
	return mcpserver.TextResult(strings.Join(parts, "\n---\n")), nil
}

// readForMultiple returns a file's part of read_multiple_files' answer, if
// it takes at most room bytes quoted.
func (s *server) readForMultiple(ctx context.Context, req *mcp.CallToolRequest, path string, room int) (string, error) {
	p, err := s.resolve(req, path)
	if err != nil {
		return "", err
	}
	skipped := fmt.Errorf("skipped: with it, the reply would pass this server's reply budget of %d bytes (--max-reply); "+
		"read it alone, or in parts with read_text_file and head or tail", mcpserver.ReplyBudget(ctx))
	if fi, err := p.Info(); err == nil && fi.Size() > int64(room) {
		return "", skipped
	}
	b, err := p.ReadFile()
	if err != nil {
		return "", err
	}
	part := path + ":\n" + string(b) + "\n"
	if mcpserver.QuotedSize(part) > room {
		return "", skipped
	}
	return part, nil
}
