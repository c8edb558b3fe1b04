package filesystem

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/mcpserver"
	"github.com/zero-dev/zero/internal/textdiff"
)

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (a *writeArgs) Validate() error {
	if a.Content == nil {
		return errors.New("content is required")
	}
	return required("path", a.Path)
}

func (s *server) writeFile(_ context.Context, req *mcp.CallToolRequest, in *writeArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	if err := p.WriteFile([]byte(*in.Content)); err != nil {
		return nil, err
	}
	return mcpserver.TextResult("Successfully wrote to " + in.Path), nil
}

type edit struct {
	OldText *string `json:"oldText"`
	NewText *string `json:"newText"`
}

type editArgs struct {
	Path   string `json:"path"`
	Edits  []edit `json:"edits"`
	DryRun bool   `json:"dryRun"`
}

func (a *editArgs) Validate() error {
	if err := required("path", a.Path); err != nil {
		return err
	}
	if len(a.Edits) == 0 {
		return errors.New("edits must hold at least one edit")
	}
	for i, e := range a.Edits {
		switch {
		case e.OldText == nil || e.NewText == nil:
			return fmt.Errorf("edits[%d] needs both oldText and newText", i)
		case *e.OldText == "":
			return fmt.Errorf("edits[%d].oldText is empty; it must name the text to replace", i)
		}
	}
	return nil
}

func (s *server) editFile(_ context.Context, req *mcp.CallToolRequest, in *editArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	raw, err := p.ReadFile()
	if err != nil {
		return nil, err
	}
	crlf := strings.Contains(string(raw), "\r\n")
	original := toLF(string(raw))
	modified := original
	for i, e := range in.Edits {
		if modified, err = applyEdit(modified, toLF(*e.OldText), toLF(*e.NewText)); err != nil {
			return nil, fmt.Errorf("edits[%d]: %w", i, err)
		}
	}
	diff := textdiff.Unified(p.Abs, p.Abs, original, modified, "original", "modified")
	if !in.DryRun {
		out := modified
		if crlf {
			out = strings.ReplaceAll(modified, "\n", "\r\n")
		}
		if err := p.WriteFile([]byte(out)); err != nil {
			return nil, err
		}
	}
	return mcpserver.TextResult(fenced(diff)), nil
}

// toLF turns CRLF line endings into LF. A file written with CRLF gets them
// back when the edit is saved.
func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// applyEdit replaces the first exact occurrence of old in content with new.
// Failing that, it looks for lines that match old's lines ignoring leading
// and trailing whitespace, and replaces them keeping their indentation, as
// the reference server does.
func applyEdit(content, old, new string) (string, error) {
	if i := strings.Index(content, old); i >= 0 {
		return content[:i] + new + content[i+len(old):], nil
	}
	oldLines := strings.Split(old, "\n")
	lines := strings.Split(content, "\n")
	for i := 0; i+len(oldLines) <= len(lines); i++ {
		if !linesMatch(lines[i:i+len(oldLines)], oldLines) {
			continue
		}
		indent := leadingSpace(lines[i])
		newLines := strings.Split(new, "\n")
		for j, line := range newLines {
			if j == 0 {
				newLines[j] = indent + strings.TrimLeft(line, " \t")
				continue
			}
			// Later lines keep their indentation relative to old's.
			var oldIndent string
			if j < len(oldLines) {
				oldIndent = leadingSpace(oldLines[j])
			}
			newIndent := leadingSpace(line)
			if oldIndent != "" && newIndent != "" {
				newLines[j] = indent + strings.Repeat(" ", max(0, len(newIndent)-len(oldIndent))) + strings.TrimLeft(line, " \t")
			}
		}
		out := append(append(append([]string{}, lines[:i]...), newLines...), lines[i+len(oldLines):]...)
		return strings.Join(out, "\n"), nil
	}
	return "", fmt.Errorf("could not find a match for oldText:\n%s", old)
}

func linesMatch(lines, want []string) bool {
	for i := range want {
		if strings.TrimSpace(lines[i]) != strings.TrimSpace(want[i]) {
			return false
		}
	}
	return true
}

func leadingSpace(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// fenced wraps a diff in a code fence longer than any backtick run inside it.
func fenced(diff string) string {
	fence := "```"
	for strings.Contains(diff, fence) {
		fence += "`"
	}
	return fence + "diff\n" + diff + fence + "\n\n"
}

func (s *server) createDirectory(_ context.Context, req *mcp.CallToolRequest, in *pathArgs) (*mcp.CallToolResult, error) {
	p, err := s.resolve(req, in.Path)
	if err != nil {
		return nil, err
	}
	if err := p.MkdirAll(); err != nil {
		return nil, err
	}
	return mcpserver.TextResult("Successfully created directory " + in.Path), nil
}

type moveArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

func (a *moveArgs) Validate() error {
	if err := required("source", a.Source); err != nil {
		return err
	}
	return required("destination", a.Destination)
}

func (s *server) moveFile(_ context.Context, req *mcp.CallToolRequest, in *moveArgs) (*mcp.CallToolResult, error) {
	src, err := s.resolve(req, in.Source)
	if err != nil {
		return nil, err
	}
	dst, err := s.resolve(req, in.Destination)
	if err != nil {
		return nil, err
	}
	if err := fsroot.Move(src, dst); err != nil {
		return nil, err
	}
	return mcpserver.TextResult(fmt.Sprintf("Successfully moved %s to %s", in.Source, in.Destination)), nil
}
