package risk

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zero-dev/zero/internal/gitref"
)

// A Change is one file as git recorded the change of the index against the
// reviewed head.
type Change struct {
	Status           byte   // git's letter: 'A' added, 'C' copied, 'D' deleted, 'M' modified, 'R' renamed, 'T' type changed; anything else is unclassified
	Score            int    // similarity, for R and C
	OldMode, NewMode string // as git writes them: "100644", "100755", "120000" (link), "160000" (submodule), "000000" (none)
	OldPath, NewPath string // OldPath is "" for A, NewPath "" for D; both set (and equal for M and T)
	Added, Removed   int    // lines, from --numstat; -1 for a binary file
}

// Modes as git writes them.
const (
	modeNone    = "000000"
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
	modeGitlink = "160000"
)

// maxLineCount bounds a numstat count, so that sums cannot overflow.
const maxLineCount = 1 << 40

// ParseRecord parses runner.Scratch.Record's output (git diff --cached -z -M
// --raw --numstat --no-abbrev HEAD): every raw entry, then one numstat entry
// for each, in the same order. Anything out of that shape is an error, and
// the caller must then treat the change as Unclassified.
func ParseRecord(raw []byte) ([]Change, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if raw[len(raw)-1] != 0 {
		return nil, errors.New("the record does not end in NUL")
	}
	fields := bytes.Split(raw[:len(raw)-1], []byte{0})
	i := 0
	next := func() (string, bool) {
		if i >= len(fields) {
			return "", false
		}
		i++
		return string(fields[i-1]), true
	}
	var changes []Change
	for i < len(fields) && bytes.HasPrefix(fields[i], []byte(":")) {
		head, _ := next()
		c, err := parseRaw(head)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", len(changes)+1, err)
		}
		p, ok := next()
		if !ok || p == "" {
			return nil, fmt.Errorf("entry %d: no path", len(changes)+1)
		}
		switch c.Status {
		case 'R', 'C':
			q, ok := next()
			if !ok || q == "" {
				return nil, fmt.Errorf("entry %d: a %c without its new path", len(changes)+1, c.Status)
			}
			c.OldPath, c.NewPath = p, q
		case 'A':
			c.NewPath = p
		case 'D':
			c.OldPath = p
		default:
			c.OldPath, c.NewPath = p, p
		}
		if err := c.consistent(); err != nil {
			return nil, fmt.Errorf("entry %d: %w", len(changes)+1, err)
		}
		changes = append(changes, c)
	}
	for n := range changes {
		c := &changes[n]
		stat, ok := next()
		if !ok {
			return nil, fmt.Errorf("entry %d has no numstat", n+1)
		}
		parts := strings.SplitN(stat, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("numstat %d: not three fields", n+1)
		}
		added, okA := lineCount(parts[0])
		removed, okR := lineCount(parts[1])
		if !okA || !okR || (added < 0) != (removed < 0) {
			return nil, fmt.Errorf("numstat %d: bad counts", n+1)
		}
		c.Added, c.Removed = added, removed
		if c.Status == 'R' || c.Status == 'C' {
			from, ok1 := next()
			to, ok2 := next()
			if parts[2] != "" || !ok1 || !ok2 || from != c.OldPath || to != c.NewPath {
				return nil, fmt.Errorf("numstat %d does not name entry %d's paths", n+1, n+1)
			}
			continue
		}
		if want := c.path(); parts[2] != want {
			return nil, fmt.Errorf("numstat %d does not name entry %d's path", n+1, n+1)
		}
	}
	if i != len(fields) {
		return nil, errors.New("the record goes on after its numstat")
	}
	return changes, nil
}

// parseRaw reads ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS[SCORE]".
func parseRaw(head string) (Change, error) {
	var c Change
	f := strings.Split(strings.TrimPrefix(head, ":"), " ")
	if len(f) != 5 {
		return c, errors.New("not five fields")
	}
	if !isMode(f[0]) || !isMode(f[1]) {
		return c, errors.New("bad mode")
	}
	if !gitref.ValidSHA(f[2]) || !gitref.ValidSHA(f[3]) || len(f[2]) != len(f[3]) {
		return c, errors.New("bad object id")
	}
	st := f[4]
	if st == "" || st[0] < 'A' || st[0] > 'Z' {
		return c, errors.New("bad status")
	}
	c.Status, c.OldMode, c.NewMode = st[0], f[0], f[1]
	if score := st[1:]; score != "" {
		// git writes the score as three digits.
		n, err := strconv.Atoi(score)
		if len(score) != 3 || strings.Trim(score, "0123456789") != "" || err != nil || n > 100 || c.Status != 'R' && c.Status != 'C' {
			return c, errors.New("bad score")
		}
		c.Score = n
	} else if c.Status == 'R' || c.Status == 'C' {
		return c, errors.New("a rename or copy without a score")
	}
	return c, nil
}

// consistent checks the modes against the status.
func (c Change) consistent() error {
	switch {
	case c.Status == 'A' && c.OldMode != modeNone, c.Status != 'A' && c.OldMode == modeNone && isKnownStatus(c.Status):
		return errors.New("the old mode does not fit the status")
	case c.Status == 'D' && c.NewMode != modeNone, c.Status != 'D' && c.NewMode == modeNone && isKnownStatus(c.Status):
		return errors.New("the new mode does not fit the status")
	}
	return nil
}

func isKnownStatus(s byte) bool { return strings.IndexByte("ACDMRT", s) >= 0 }

// path is the name the change is reported under: the new path, or the old
// one for a deletion.
func (c Change) path() string {
	if c.NewPath != "" {
		return c.NewPath
	}
	return c.OldPath
}

func isMode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// lineCount reads a numstat count: digits, or "-" (-1) for a binary file.
func lineCount(s string) (int, bool) {
	if s == "-" {
		return -1, true
	}
	if s == "" || len(s) > 13 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxLineCount {
		return 0, false
	}
	return n, true
}
