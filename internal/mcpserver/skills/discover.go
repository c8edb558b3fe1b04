package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/skill"
)

// A place is a directory, relative to the workspace, whose subfolders may be
// skills.
type place struct {
	dir string
	// dedicated places hold only skills: a subfolder that is a link leading
	// outside the workspace is reported there. In the workspace itself, such
	// a link is most likely not meant as a skill and is left out unread.
	dedicated bool
}

// places are searched in this order, and list_skills lists skills in it:
// Zero's own folder, then the Agent Skills convention's (.agents/skills
// first, as agents look), then the workspace itself, where a folder with a
// SKILL.md is the least likely to be meant as one. Of two skills of one
// name, the one found first is used (see shadow).
var places = []place{
	{".zero/skills", true}, {".agents/skills", true}, {".claude/skills", true}, {".opencode/skills", true}, {".", false},
}

// Where says where the server looks, in its order, for the tools' and the
// CLI's texts.
const Where = ".zero/skills, .agents/skills, .claude/skills, .opencode/skills, then the workspace itself"

const (
	// maxPlaceEntries bounds the entries read from one place.
	maxPlaceEntries = 10000
	// maxSkills bounds the skills, valid or not, one discovery reports.
	maxSkills = 1000
)

// A found skill is a folder holding a SKILL.md, valid or not.
type found struct {
	name     string // the folder's name, which a valid skill's name equals
	location string // the folder, slash-separated, relative to the workspace
	skill    *skill.Skill
	err      error        // why it is invalid; nil for a valid skill
	dir      *fsroot.Path // the folder, resolved; nil if it could not be
	raw      []byte       // SKILL.md, as read
}

// A catalog is the result of one discovery.
type catalog struct {
	skills   []*found
	problems []string // places that could not be searched, limits reached
}

// discover searches every place for skills. It reads nothing outside the
// workspace: each place, folder and SKILL.md is resolved through the
// workspace's fsroot set, and a link leading out is reported, not followed.
// A folder reached more than once (through a link, or from two places) is
// one skill, listed once: where it is valid, first (a link named otherwise
// than the folder it leads to is not, so it never hides the folder), else
// where it was first reached.
func (s *server) discover() *catalog {
	c := &catalog{}
	var reached []*found
	folders := map[string]bool{} // canonical folders reached
	n := 0                       // skills reached, each folder once
search:
	for _, pl := range places {
		names, err := s.subfolders(pl.dir)
		if err != nil {
			c.problems = append(c.problems, err.Error())
		}
		for _, name := range names {
			f := s.examine(pl, name)
			if f == nil {
				continue
			}
			if f.dir == nil || !folders[f.dir.Abs] {
				if n == maxSkills {
					c.problems = append(c.problems, fmt.Sprintf("more than %d skills; the rest are not listed", maxSkills))
					break search
				}
				n++
				if f.dir != nil {
					folders[f.dir.Abs] = true
				}
			}
			reached = append(reached, f)
		}
	}
	c.skills = once(reached)
	shadow(c.skills)
	return c
}

// once keeps one of each folder's reaches, in order: its first valid one,
// else its first.
func once(reached []*found) []*found {
	keep := map[string]*found{}
	for _, f := range reached {
		if f.dir == nil {
			continue
		}
		if k, ok := keep[f.dir.Abs]; !ok || (k.err != nil && f.err == nil) {
			keep[f.dir.Abs] = f
		}
	}
	var out []*found
	for _, f := range reached {
		if f.dir == nil || keep[f.dir.Abs] == f {
			out = append(out, f)
		}
	}
	return out
}

// subfolders returns the sorted names in the place dir that are directories
// or symbolic links, without following the links. A place that does not
// exist has none.
func (s *server) subfolders(dir string) ([]string, error) {
	p, err := s.ws.Resolve(dir)
	if errors.Is(err, fsroot.ErrOutside) {
		return nil, fmt.Errorf("%s is a symbolic link leading outside the workspace; skills in it are not read", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !p.Exists {
		return nil, nil
	}
	f, err := p.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory; skills in it are not read", dir)
	}
	entries, err := f.ReadDir(maxPlaceEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var tooMany error
	if len(entries) > maxPlaceEntries {
		entries = entries[:maxPlaceEntries]
		tooMany = fmt.Errorf("%s holds more than %d entries; only %d are searched", dir, maxPlaceEntries, maxPlaceEntries)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, tooMany
}

// examine looks at one subfolder of a place: nil if it is not a skill (no
// SKILL.md, not a directory), else the skill, valid or with its error.
func (s *server) examine(pl place, name string) *found {
	loc := path.Join(pl.dir, name)
	f := &found{name: name, location: loc}
	invalid := func(err error) *found { f.err = err; return f }
	dir, err := s.ws.Resolve(loc)
	switch {
	case errors.Is(err, fsroot.ErrOutside):
		if !pl.dedicated {
			return nil
		}
		return invalid(errors.New("the skill folder is a symbolic link leading outside the workspace; it is not read"))
	case err != nil:
		return invalid(err)
	case !dir.Exists:
		return nil // a dangling link
	}
	if fi, err := dir.Stat(); err != nil || !fi.IsDir() {
		return nil
	}
	f.dir = dir
	md, err := s.ws.Resolve(loc + "/" + skill.FileName)
	switch {
	case errors.Is(err, fsroot.ErrOutside):
		return invalid(errors.New("SKILL.md is a symbolic link leading outside the workspace; it is not read"))
	case err != nil:
		return invalid(err)
	case !md.Exists:
		return nil
	}
	f.raw, err = md.ReadFileLimit(skill.MaxFileSize)
	if err != nil {
		return invalid(err)
	}
	sk, err := skill.Parse(f.raw)
	if err != nil {
		return invalid(err)
	}
	if err := sk.Validate(name); err != nil {
		return invalid(err)
	}
	f.skill = sk
	return f
}

// shadow marks every valid skill whose name a valid skill found before it
// (in an earlier place) has: only the first is used, and the others are
// listed with the reason. Two skills of one name are never in one place: a
// valid skill's name is its folder's.
func shadow(skills []*found) {
	first := map[string]*found{}
	for _, f := range skills {
		if f.err != nil {
			continue
		}
		if w, ok := first[f.name]; ok {
			f.err = fmt.Errorf("shadowed: the skill at %s has the same name and comes first; this one is not used", w.location)
			continue
		}
		first[f.name] = f
	}
}

// lookup returns the valid skill named name, or an error the model can act
// on: unknown, invalid, or conflicting.
func (c *catalog) lookup(name string) (*found, error) {
	var matches []*found
	for _, f := range c.skills {
		if f.name == name {
			if f.err == nil {
				return f, nil
			}
			matches = append(matches, f)
		}
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("no skill named %q in this workspace; list_skills lists them", name)
	}
	var why []string
	for _, f := range matches {
		why = append(why, fmt.Sprintf("%s: %s", f.location, oneLine(f.err.Error())))
	}
	return nil, fmt.Errorf("skill %q cannot be used: %s", name, strings.Join(why, "; "))
}

// oneLine joins the lines of s, such as the problems Validate reports one a
// line, or a folded description.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}
