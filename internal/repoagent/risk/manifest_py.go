package risk

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// pyName normalizes a Python project name as PEP 503 does.
func pyName(n string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(n) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

var pyReqName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$`)
})

// pep508 reads a requirement such as `name[extra]>=1.2,<2; marker`. req is
// the first specifier that gives a floor (==, ===, ~=, >=), or what is there
// when none does. A direct reference (name @ url) does not read.
func pep508(t string) (name, req string, ok bool) {
	t, _, _ = strings.Cut(t, ";")
	t, _, _ = strings.Cut(t, " --")
	t = strings.TrimSpace(t)
	if strings.Contains(t, "@") {
		return "", "", false
	}
	m := pyReqName().FindStringSubmatch(t)
	if m == nil {
		return "", "", false
	}
	name, rest := m[1], strings.TrimSpace(m[3])
	rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(rest, "("), ")"))
	for _, spec := range strings.Split(rest, ",") {
		spec = strings.TrimSpace(spec)
		for _, op := range []string{"===", "==", "~=", ">="} {
			if strings.HasPrefix(spec, op) {
				return name, spec, true
			}
		}
	}
	return name, rest, true
}

// pep508Dep records a requirement string, or what cannot be read of it.
func pep508Dep(f *facts, where string, item any) {
	s, ok := item.(string)
	if !ok {
		f.cannot(where, canon(item))
		return
	}
	name, spec, ok := pep508(s)
	if !ok {
		f.set("direct "+where+" "+s, "", DependencySource, "adds or changes a direct reference: "+clip(s))
		return
	}
	f.dep(name, spec)
}

// readRequirements reads a pip requirements file: its logical lines
// (continuations joined), without comments. An option (-r, -e,
// --index-url, ...) is DependencySource when it is added or removed.
func readRequirements(data []byte) (*facts, error) {
	f := newFacts()
	var logical []string
	cur := ""
	for _, l := range lines(data) {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			l = ""
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		logical = append(logical, cur+l)
		cur = ""
	}
	logical = append(logical, cur)
	for _, l := range logical {
		t := strings.Join(strings.Fields(l), " ")
		switch {
		case t == "" || strings.HasPrefix(t, "--hash"):
		case strings.HasPrefix(t, "-"):
			f.set("option "+t, "", DependencySource, "changes a pip option ("+clip(strings.Fields(t)[0])+"), which can add sources or files")
		default:
			name, req, ok := pep508(t)
			if !ok {
				f.set("line "+t, "", DependencySource, "adds or changes a requirement the rules cannot read: "+clip(t))
				continue
			}
			f.dep(name, req)
		}
	}
	return f, nil
}

// dependencyAttrs are the keys of a dependency's table that take it from
// somewhere other than the registry, or rename it.
var dependencyAttrs = []string{
	"git", "path", "url", "branch", "tag", "rev", "registry", "registry-index",
	"package", "source", "index", "file", "editable", "develop", "base",
}

// tableDep records a dependency written as a requirement string or as a
// table (poetry, Pipfile, Cargo): its version, and where it comes from.
func tableDep(f *facts, where, name string, val any) {
	switch t := val.(type) {
	case string:
		f.dep(name, t)
	case map[string]any:
		for _, k := range sortedKeys(mergeKeys(t, nil)) {
			if slices.Contains(dependencyAttrs, k) {
				f.set("source "+where+" "+name+" "+k, canon(t[k]), DependencySource, "takes "+clip(name)+" from a "+k+" rather than the registry")
			}
		}
		switch {
		case t["version"] != nil:
			s, ok := t["version"].(string)
			if !ok {
				f.cannot(where+"."+name, canon(t["version"]))
				return
			}
			f.dep(name, s)
		case t["workspace"] == true:
			f.dep(name, "workspace")
		default:
			f.dep(name, "(no version)")
		}
	default:
		f.cannot(where+"."+name, canon(val))
	}
}

// tableDeps records every dependency of a table.
func tableDeps(f *facts, where string, val any) {
	t, ok := val.(map[string]any)
	if !ok {
		f.cannot(where, canon(val))
		return
	}
	for name, d := range t {
		tableDep(f, where, name, d)
	}
}

// arrayDeps records every PEP 508 string of an array.
func arrayDeps(f *facts, where string, val any) {
	items, ok := val.([]any)
	if !ok {
		f.cannot(where, canon(val))
		return
	}
	for _, it := range items {
		pep508Dep(f, where, it)
	}
}

// pyprojectBenign are [project] and [tool.poetry] keys that are metadata.
var pyprojectBenign = []string{
	"description", "readme", "license", "license-files", "authors", "maintainers", "keywords",
	"classifiers", "urls", "dynamic", "requires-python", "homepage", "repository", "documentation",
	"packages", "include", "exclude", "extras",
}

// pyTools are the [tool.X] tables read whole, with the class a change gives:
// test runners and task runners are Verification; build backends'
// settings, which run on build, InstallHooks; a linter's or type checker's
// Config, Verification when the checks may run it; any other tool's
// Dependencies.
var pyTools = map[string]Class{
	"pytest": Verification, "tox": Verification, "nox": Verification, "poe": Verification, "taskipy": Verification,
	"coverage": Verification, "cibuildwheel": Verification, "hatch": "", "pdm": "", "rye": "", "uv": "", "poetry": "",
	"setuptools": InstallHooks, "setuptools_scm": InstallHooks, "maturin": InstallHooks, "scikit-build": InstallHooks,
	"ruff": Config, "black": Config, "mypy": Config, "pylint": Config, "pyright": Config, "basedpyright": Config,
	"isort": Config, "pydocstyle": Config, "codespell": Config, "bandit": Config,
}

// readPyproject reads pyproject.toml: PEP 621's [project], PEP 735's
// [dependency-groups], [build-system], and the tools' tables.
func readPyproject(data []byte) (*facts, error) {
	doc, err := tomlTable(data)
	if err != nil {
		return nil, err
	}
	f := newFacts()
	for key, val := range doc {
		switch key {
		case "project":
			pyProject(f, val)
		case "dependency-groups":
			groups, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for g, items := range groups {
				list, _ := items.([]any)
				for _, it := range list {
					if m, ok := it.(map[string]any); ok {
						f.set("include-group "+g+" "+canon(m), "", Dependencies, "changes a dependency group")
						continue
					}
					pep508Dep(f, key+"."+g, it)
				}
				if list == nil {
					f.cannot(key+"."+g, canon(items))
				}
			}
		case "build-system":
			bs, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for k, v := range bs {
				if k == "requires" {
					arrayDeps(f, "build-system.requires", v)
					continue
				}
				f.set("build-system."+k, canon(v), InstallHooks, "changes the build backend, which runs on install")
			}
		case "tool":
			tools, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for name, t := range tools {
				pyTool(f, name, t)
			}
		default:
			f.set(key, canon(val), DependencySource, "changes ["+clip(key)+"], which the rules cannot read")
		}
	}
	return f, nil
}

func pyProject(f *facts, val any) {
	p, ok := val.(map[string]any)
	if !ok {
		f.cannot("project", canon(val))
		return
	}
	for k, v := range p {
		switch {
		case k == "dependencies":
			arrayDeps(f, "project.dependencies", v)
		case k == "optional-dependencies":
			groups, ok := v.(map[string]any)
			if !ok {
				f.cannot("project."+k, canon(v))
				continue
			}
			for g, items := range groups {
				arrayDeps(f, "project.optional-dependencies."+g, items)
			}
		case k == "name" || k == "version":
			f.set("project."+k, canon(v), ReleasePublish, "changes the project's "+k)
		case k == "scripts" || k == "gui-scripts" || k == "entry-points":
			f.set("project."+k, canon(v), Verification, "changes the project's "+k+", which the checks may run or load (pytest plugins are entry points)")
		case slices.Contains(pyprojectBenign, k):
			f.set("project."+k, canon(v), Dependencies, "changes the project's "+k)
		default:
			f.set("project."+k, canon(v), DependencySource, "changes the project's "+clip(k)+", which the rules cannot read")
		}
	}
}

func pyTool(f *facts, name string, val any) {
	class, known := pyTools[name]
	where := "tool." + name
	switch {
	case !known:
		f.set(where, canon(val), Dependencies, "changes ["+clip(where)+"]")
		return
	case class == Config:
		f.setTool(where, canon(val), Dependencies, "changes ["+where+"]", name)
		return
	case class != "":
		f.set(where, canon(val), class, "changes ["+where+"], which "+map[Class]string{Verification: "the checks read", InstallHooks: "runs on build"}[class])
		return
	}
	t, ok := val.(map[string]any)
	if !ok {
		f.cannot(where, canon(val))
		return
	}
	for k, v := range t {
		sub := where + "." + k
		switch {
		case k == "dependencies" && name == "poetry", k == "dev-dependencies" && name == "poetry":
			tableDeps(f, sub, v)
		case k == "group" && name == "poetry":
			groups, ok := v.(map[string]any)
			if !ok {
				f.cannot(sub, canon(v))
				continue
			}
			for g, gv := range groups {
				gt, ok := gv.(map[string]any)
				if !ok {
					f.cannot(sub+"."+g, canon(gv))
					continue
				}
				for gk, x := range gt {
					if gk == "dependencies" {
						tableDeps(f, sub+"."+g+".dependencies", x)
					} else {
						f.set(sub+"."+g+"."+gk, canon(x), Dependencies, "changes a dependency group")
					}
				}
			}
		case k == "dev-dependencies" || k == "dev-dependency-groups":
			// pdm, rye, uv: PEP 508 lists, or groups of them.
			if groups, ok := v.(map[string]any); ok {
				for g, items := range groups {
					arrayDeps(f, sub+"."+g, items)
				}
			} else {
				arrayDeps(f, sub, v)
			}
		case k == "name" || k == "version":
			f.set(sub, canon(v), ReleasePublish, "changes ["+where+"]'s "+k)
		case k == "scripts" || k == "envs" || k == "plugins" || k == "requires-plugins":
			f.set(sub, canon(v), Verification, "changes ["+sub+"], which the checks may run")
		case k == "build" || k == "build-system" || k == "build-backend":
			f.set(sub, canon(v), InstallHooks, "changes ["+sub+"], which runs on build")
		case k == "source" || k == "sources" || k == "index" || k == "index-url" || k == "extra-index-url" || k == "find-links" ||
			k == "override-dependencies" || k == "constraint-dependencies" || k == "resolution" || k == "metadata":
			f.set(sub, canon(v), DependencySource, "changes ["+sub+"], which redirects dependencies")
		case slices.Contains(pyprojectBenign, k):
			f.set(sub, canon(v), Dependencies, "changes ["+sub+"]")
		default:
			f.set(sub, canon(v), DependencySource, "changes ["+clip(sub)+"], which the rules cannot read")
		}
	}
}

// readPipfile reads a Pipfile.
func readPipfile(data []byte) (*facts, error) {
	doc, err := tomlTable(data)
	if err != nil {
		return nil, err
	}
	f := newFacts()
	for key, val := range doc {
		switch key {
		case "packages", "dev-packages":
			tableDeps(f, key, val)
		case "source":
			f.set(key, canon(val), DependencySource, "edits a package index source")
		case "scripts":
			f.set(key, canon(val), Verification, "changes the Pipfile's scripts, which the checks may run")
		case "requires", "pipenv":
			f.set(key, canon(val), Dependencies, "changes ["+key+"]")
		default:
			f.set(key, canon(val), DependencySource, "changes ["+clip(key)+"], which the rules cannot read")
		}
	}
	return f, nil
}

// tomlTable decodes a TOML document.
func tomlTable(data []byte) (map[string]any, error) {
	x, err := decodeTOML(data)
	if err != nil {
		return nil, err
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, errors.New("not a TOML table")
	}
	return m, nil
}
