package skills

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// An Entry is one skill in the catalog Zero ships: a folder of a public
// GitHub repository, curated and pinned to a commit.
type Entry struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Repo is "owner/name" on GitHub.
	Repo string `json:"repo"`
	// Folder is the skill's folder in the repository, a clean relative
	// slash path.
	Folder string `json:"folder"`
	// Commit is the pinned commit, 40 lower-case hex digits.
	Commit string `json:"commit"`
	// Licence is the SPDX ID as curated. It is shown only: what Zero may
	// copy is decided by [Classify] on the files fetched.
	Licence string `json:"licence"`
}

//go:embed catalog.json
var catalogJSON []byte

var loadCatalog = sync.OnceValues(func() ([]Entry, error) { return parseCatalog(catalogJSON) })

// Catalog returns the catalog's entries, in the order curated.
func Catalog() ([]Entry, error) {
	entries, err := loadCatalog()
	return slices.Clone(entries), err
}

// Lookup returns the catalog entry with the given ID.
func Lookup(id string) (Entry, bool) {
	entries, err := loadCatalog()
	if err != nil {
		return Entry{}, false
	}
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.ID == id })
	if i < 0 {
		return Entry{}, false
	}
	return entries[i], true
}

const (
	maxIDLen          = 64
	maxNameLen        = 64
	maxDescriptionLen = 1024
	maxFolderLen      = 256
	maxLicenceLen     = 64
)

// parseCatalog parses a catalog, a JSON array of entries, and checks every
// entry. Unknown fields, trailing data and duplicate IDs are refused.
func parseCatalog(data []byte) ([]Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var entries []Entry
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("parse catalog: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("parse catalog: data after the list")
	}
	seen := make(map[string]bool)
	for i, e := range entries {
		if err := checkEntry(e); err != nil {
			return nil, fmt.Errorf("catalog entry %d: %w", i, err)
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("catalog entry %d: duplicate id %q", i, e.ID)
		}
		seen[e.ID] = true
	}
	return entries, nil
}

func checkEntry(e Entry) error {
	switch {
	case !validID(e.ID):
		return fmt.Errorf("bad id %q: want 1 to %d of a-z, 0-9 and inner hyphens", e.ID, maxIDLen)
	case !validText(e.Name, maxNameLen):
		return fmt.Errorf("%s: bad name %q", e.ID, e.Name)
	case !validText(e.Description, maxDescriptionLen):
		return fmt.Errorf("%s: bad description", e.ID)
	case !validRepo(e.Repo):
		return fmt.Errorf("%s: bad repo %q: want owner/name", e.ID, e.Repo)
	case !validFolder(e.Folder):
		return fmt.Errorf("%s: bad folder %q: want a clean relative path", e.ID, e.Folder)
	case !validCommit(e.Commit):
		return fmt.Errorf("%s: bad commit %q: want 40 lower-case hex digits", e.ID, e.Commit)
	case !validText(e.Licence, maxLicenceLen):
		return fmt.Errorf("%s: bad licence %q", e.ID, e.Licence)
	}
	return nil
}

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen || id[0] == '-' || id[len(id)-1] == '-' {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validText reports whether s is non-empty, at most limit bytes, and valid
// UTF-8 without control characters.
func validText(s string, limit int) bool {
	if strings.TrimSpace(s) == "" || len(s) > limit || !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// validRepo follows GitHub's rules: an owner of 1 to 39 letters, digits and
// inner hyphens, and a name of 1 to 100 letters, digits, '.', '_' and '-'
// that is not "." or "..".
func validRepo(repo string) bool {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || len(owner) > 39 || len(name) > 100 || name == "." || name == ".." {
		return false
	}
	if owner == "" || owner[0] == '-' || owner[len(owner)-1] == '-' || !onlyBytes(owner, "-") {
		return false
	}
	return name != "" && onlyBytes(name, "._-")
}

// validFolder reports whether folder is a clean relative slash path whose
// elements are letters, digits, '.', '_' and '-', none of them "." or "..".
func validFolder(folder string) bool {
	if folder == "" || len(folder) > maxFolderLen || path.Clean(folder) != folder || path.IsAbs(folder) {
		return false
	}
	for elem := range strings.SplitSeq(folder, "/") {
		if elem == "." || elem == ".." || !onlyBytes(elem, "._-") {
			return false
		}
	}
	return true
}

func validCommit(commit string) bool {
	if len(commit) != 40 {
		return false
	}
	for _, c := range []byte(commit) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// onlyBytes reports whether s holds only ASCII letters, digits and bytes
// of extra.
func onlyBytes(s, extra string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}
