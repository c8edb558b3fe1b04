package filesystem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
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

func (s *server) readTextFile(_ context.Context, req *mcp.CallToolRequest, in *readTextArgs) (*mcp.CallToolResult, error) {
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
	return mcpserver.TextResult(text), nil
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

func (s *server) readMediaFile(_ context.Context, req *mcp.CallToolRequest, in *pathArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
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
	return &mcp.CallToolResult{
		Content:           []mcp.Content{item},
		StructuredContent: map[string][]mcp.Content{"content": {item}},
	}, nil
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
// All the contents together are limited as one whole-file read is.
func (s *server) readMultipleFiles(ctx context.Context, req *mcp.CallToolRequest, in *readMultipleArgs) (*mcp.CallToolResult, error) {
	parts := make([]string, len(in.Paths))
	budget := fsroot.MaxReadSize
	for i, path := range in.Paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		content, err := s.readForMultiple(req, path, budget)
		if err != nil {
			parts[i] = fmt.Sprintf("%s: Error - %v", path, err)
			continue
		}
		budget -= len(content)
		parts[i] = path + ":\n" + content + "\n"
	}
	return mcpserver.TextResult(strings.Join(parts, "\n---\n")), nil
}

func (s *server) readForMultiple(req *mcp.CallToolRequest, path string, budget int) (string, error) {
	p, err := s.resolve(req, path)
	if err != nil {
		return "", err
	}
	b, err := p.ReadFile()
	if err != nil {
		return "", err
	}
	if len(b) > budget {
		return "", fmt.Errorf("skipped: the files read in this call would exceed %d bytes together", fsroot.MaxReadSize)
	}
	return string(b), nil
}
