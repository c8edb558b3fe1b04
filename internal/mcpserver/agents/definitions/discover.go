package definitions

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/zero-dev/zero/internal/guard/fsroot"
)

// maxFiles bounds the definition files one discovery reads.
const maxFiles = 1000

// Discover walks the four places in precedence order under the workspace's
// root (the first of roots), through roots: nothing outside the workspace is
// read, and a link leading out is left out. It reads the definition files at
// most [MaxDepth] levels below each place, names sorted, at most
// [MaxFileSize] bytes each. The first definition of a name wins. An invalid
// file, and a later definition of a name, is reported through warn in one
// line naming the file (and, for an invalid one, the field) and skipped;
// OpenCode's primary agents are skipped without a word. The result is sorted
// by name. It fails only when it cannot search at all.
func Discover(roots *fsroot.Set, warn func(string)) ([]Definition, error) {
	if roots == nil || roots.Len() == 0 {
		return nil, errors.New("discover agent definitions: no workspace")
	}
	if warn == nil {
		warn = func(string) {}
	}
	first := map[string]string{} // name to the file defining it
	var defs []Definition
	files := 0
	for _, place := range Places {
		p, err := roots.Resolve(place)
		switch {
		case errors.Is(err, fsroot.ErrOutside):
			warn(fmt.Sprintf("agent definitions: %s leads outside the workspace; it is not read", place))
			continue
		case err != nil:
			warn(fmt.Sprintf("agent definitions: %s: %v", place, err))
			continue
		case !p.Exists:
			continue
		}
		if fi, err := p.Stat(); err != nil || !fi.IsDir() {
			warn(fmt.Sprintf("agent definitions: %s is not a directory; it is not read", place))
			continue
		}
		var found []string
		err = p.Walk(func(rel string, e fsroot.Entry) bool {
			depth := strings.Count(rel, "/") + 1
			if e.Dir {
				return !e.Link && depth < MaxDepth
			}
			if isDefinitionFile(place, e.Name) {
				found = append(found, path.Join(place, rel))
			}
			return false
		})
		if err != nil {
			warn(fmt.Sprintf("agent definitions: %s: %v", place, err))
		}
		for _, src := range found {
			if files == maxFiles {
				warn(fmt.Sprintf("agent definitions: more than %d files; the rest are not read", maxFiles))
				return sorted(defs), nil
			}
			files++
			d, err := read(roots, place, src)
			switch {
			case errors.Is(err, ErrNotSubagent):
				continue
			case err != nil:
				warn(fmt.Sprintf("agent definition %s: %v; skipped", showPath(src), err))
				continue
			}
			if by, ok := first[d.Name]; ok {
				warn(fmt.Sprintf("agent definition %s: the name %q is defined first by %s; this one is not used", showPath(src), d.Name, showPath(by)))
				continue
			}
			first[d.Name] = src
			defs = append(defs, d)
		}
	}
	return sorted(defs), nil
}

// read reads and parses one file, through roots.
func read(roots *fsroot.Set, place, src string) (Definition, error) {
	p, err := roots.Resolve(src)
	if errors.Is(err, fsroot.ErrOutside) {
		return Definition{}, errors.New("leads outside the workspace; it is not read")
	}
	if err != nil {
		return Definition{}, err
	}
	fi, err := p.Stat()
	if err != nil {
		return Definition{}, err
	}
	if fi.Size() > MaxFileSize {
		return Definition{}, fmt.Errorf("%d bytes, more than the %d a definition may hold", fi.Size(), MaxFileSize)
	}
	data, err := p.ReadFileLimit(MaxFileSize)
	if err != nil {
		return Definition{}, fmt.Errorf("cannot be read: more than %d bytes, or %w", MaxFileSize, err)
	}
	return Parse(place, src, data)
}

func sorted(defs []Definition) []Definition {
	slices.SortFunc(defs, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return defs
}

// showPath shows a file's path in a warning: quoted when it holds anything
// but printable characters and no space.
func showPath(p string) string {
	for _, c := range p {
		if !unicode.IsPrint(c) || c == ' ' {
			return quote(p)
		}
	}
	return p
}
