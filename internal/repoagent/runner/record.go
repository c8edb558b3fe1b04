package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zero-dev/zero/internal/gitref"
)

// Record returns git's record of the index against head: git diff --cached
// -z -M --raw --numstat --no-abbrev head, with no external diff or textconv,
// so that nothing the repository configures runs or shapes it.
func (s *Scratch) Record(ctx context.Context, head string) ([]byte, error) {
	if !gitref.ValidSHA(head) {
		return nil, fmt.Errorf("commit id %q refused", head)
	}
	out, err := git(ctx, s.roots, s.Dir, nil, nil, "diff", "--cached", "-z", "-M", "--raw", "--numstat", "--no-abbrev",
		"--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=none", head, "--")
	if err != nil {
		return nil, fmt.Errorf("record the change: %w", err)
	}
	return out, nil
}

// IndexFile returns a file's content in the index (after Apply), and false
// when the index has no such file. The path is a literal pathspec (no
// globs, no magic), and only the entry of exactly that path counts.
func (s *Scratch) IndexFile(ctx context.Context, path string) ([]byte, bool, error) {
	if err := checkPath(path); err != nil {
		return nil, false, err
	}
	out, err := git(ctx, s.roots, s.Dir, nil, map[string]string{"GIT_LITERAL_PATHSPECS": "1"},
		"ls-files", "--stage", "-z", "--", path)
	if err != nil {
		return nil, false, err
	}
	for _, e := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(e), "\t")
		if !ok || name != path {
			continue
		}
		f := strings.Fields(meta) // mode, object id, stage
		if len(f) != 3 || !gitref.ValidSHA(f[1]) {
			return nil, false, fmt.Errorf("ls-files: an entry git should not write for %q", path)
		}
		if f[2] != "0" {
			return nil, false, fmt.Errorf("%q is unmerged in the index", path)
		}
		if f[0] == "160000" {
			return nil, false, fmt.Errorf("%q is a submodule, which has no content", path)
		}
		data, err := git(ctx, s.roots, s.Dir, nil, nil, "cat-file", "blob", f[1])
		if err != nil {
			return nil, false, err
		}
		return data, true, nil
	}
	return nil, false, nil
}

// checkPath refuses a path git could read as something else: empty, with a
// NUL, or starting with "-" or "/".
func checkPath(p string) error {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "/") {
		return errors.New("path refused")
	}
	return nil
}
