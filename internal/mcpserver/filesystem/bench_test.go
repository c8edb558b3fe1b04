package filesystem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zero-dev/zero/internal/guard/fsroot"
)

// benchTree builds the benchmark tree: 5,000 files in 100 directories, and a
// small file at the top.
func benchTree(b *testing.B) (*server, string) {
	b.Helper()
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("dir%02d", d))
		os.Mkdir(sub, 0o755)
		for f := range 50 {
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.txt", f)), []byte(fmt.Sprintf("file %d in dir %d\n", f, d)), 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("hello from a small file\n"), 0o644)
	set, err := fsroot.Open([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { set.Close() })
	return &server{cli: set, sessions: map[*mcp.ServerSession]*sessionRoots{}}, dir
}

func check(b *testing.B, res *mcp.CallToolResult, err error) {
	if err != nil || res.IsError {
		b.Fatalf("call failed: %v", err)
	}
}

// The benchmarks below call the tool handlers directly: the cost of the tool
// itself, without the protocol. bench/filesystem.sh measures whole calls.

func BenchmarkReadTextFile(b *testing.B) {
	s, dir := benchTree(b)
	req, in := &mcp.CallToolRequest{}, &readTextArgs{Path: filepath.Join(dir, "small.txt")}
	for b.Loop() {
		res, err := s.readTextFile(context.Background(), req, in)
		check(b, res, err)
	}
}

// BenchmarkDirectoryTree times the walk and the quoted tree it writes;
// called outside a server, the handler would also read the text back, which
// only HTTP does.
func BenchmarkDirectoryTree(b *testing.B) {
	s, dir := benchTree(b)
	p, err := s.cli.Resolve(dir)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.quotedTree(context.Background(), p, func(string) bool { return false }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearchFiles(b *testing.B) {
	s, dir := benchTree(b)
	req, in := &mcp.CallToolRequest{}, &searchArgs{Path: dir, Pattern: "**/*7.txt"}
	for b.Loop() {
		res, err := s.searchFiles(context.Background(), req, in)
		check(b, res, err)
	}
}
