package risk

import (
	"path"
	"strings"

	"golang.org/x/mod/modfile"
)

// goModuleBase strips a module path's major version suffix (/vN with N >= 2,
// or gopkg.in's .vN), so that the same module at two majors compares.
func goModuleBase(p string) string {
	dir, last := path.Split(p)
	if strings.HasPrefix(p, "gopkg.in/") {
		if i := strings.LastIndex(last, ".v"); i > 0 && isDigits(last[i+2:]) {
			return dir + last[:i]
		}
		return p
	}
	if dir != "" && len(last) >= 2 && last[0] == 'v' && isDigits(last[1:]) && last != "v0" && last != "v1" {
		return strings.TrimSuffix(dir, "/")
	}
	return p
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// readGoMod reads go.mod with the go command's own parser, strictly: an
// unknown directive or a version that is not canonical does not read.
func readGoMod(data []byte) (*facts, error) {
	mf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	f := newFacts()
	if mf.Module != nil {
		// The module path: a new major version of it is DependencyMajor, any
		// other change DependencySource.
		f.set("module", goModuleBase(mf.Module.Mod.Path), DependencySource, "changes the module path")
		f.set("module major", mf.Module.Mod.Path, DependencyMajor, "moves the module to a new major version path")
		if mf.Module.Deprecated != "" {
			f.set("deprecated", mf.Module.Deprecated, ReleasePublish, "deprecates the module")
		}
	}
	if mf.Go != nil {
		f.set("go", mf.Go.Version, Dependencies, "changes the Go version")
	}
	if mf.Toolchain != nil {
		f.set("toolchain", mf.Toolchain.Name, Dependencies, "changes the Go toolchain")
	}
	for _, r := range mf.Require {
		f.dep(r.Mod.Path, r.Mod.Version)
	}
	for _, g := range mf.Godebug {
		f.set("godebug "+g.Key, g.Value, Dependencies, "changes a godebug setting")
	}
	for _, x := range mf.Exclude {
		f.set("exclude "+x.Mod.String(), "", Dependencies, "excludes a module version")
	}
	for _, r := range mf.Replace {
		f.set("replace "+r.Old.String(), r.New.String(), DependencySource, "edits a replace directive")
	}
	for _, r := range mf.Retract {
		f.set("retract "+r.Low+" "+r.High, "", ReleasePublish, "retracts published versions")
	}
	for _, t := range mf.Tool {
		f.set("tool "+t.Path, "", DependencySource, "edits a tool dependency")
	}
	for _, i := range mf.Ignore {
		f.set("ignore "+i.Path, "", Dependencies, "changes an ignore directive")
	}
	return f, nil
}

// readGoWork reads go.work with the go command's own parser.
func readGoWork(data []byte) (*facts, error) {
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	f := newFacts()
	if wf.Go != nil {
		f.set("go", wf.Go.Version, Dependencies, "changes the Go version")
	}
	if wf.Toolchain != nil {
		f.set("toolchain", wf.Toolchain.Name, Dependencies, "changes the Go toolchain")
	}
	for _, g := range wf.Godebug {
		f.set("godebug "+g.Key, g.Value, Dependencies, "changes a godebug setting")
	}
	for _, u := range wf.Use {
		f.set("use "+u.Path, "", DependencySource, "edits a go.work use directive")
	}
	for _, r := range wf.Replace {
		f.set("replace "+r.Old.String(), r.New.String(), DependencySource, "edits a replace directive")
	}
	return f, nil
}
