package risk

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Dependency manifests and lockfiles are read whole, both sides: the file
// at the reviewed head and the file in the index after the apply (a side
// the change creates or deletes is empty). Each reader turns a file into
// facts: dependency entries (a name and its requirement) and settings (a
// name, a canonical value, and the class a change to it gives). Any change
// to a manifest is at least Dependencies; then
//
//   - a setting that differs between the sides (added, removed or changed)
//     raises its class: an install hook is InstallHooks, a registry or
//     override DependencySource, a version or what is published
//     ReleasePublish, a script or test runner setting Verification (the
//     verification surface, see surface.go), and a setting no rule knows
//     DependencySource;
//   - entries on both sides unchanged drop out. A name only on the new side
//     is a new dependency: DependencySource. A changed requirement must be a
//     forward minor or patch update of an old one (Dependencies); a new
//     major version (for 0.x outside Go, a new minor one; see
//     versionChange), a downgrade, or a Go module path that changes its /vN
//     suffix is DependencyMajor; a requirement the rules cannot read, or
//     one naming a URL or another source, is DependencySource.
//
// A side that does not parse is DependencySource: a manifest the rules
// cannot read is never low. Lockfiles are Dependencies, unless the new side
// has a string (a URL, a git, file or link source) that the old side does
// not and that is not under the lockfile's default registry, or https:
// then DependencySource; a newly locked package with install scripts is
// InstallHooks. go.sum is Dependencies unless it changes the checksum of a
// version it already had.

// manifest says how to read one kind of manifest or lockfile.
type manifest struct {
	names []string // globs on the folded base name
	read  func(data []byte) (*facts, error)
	norm  func(string) string // the name under which entries compare
	goMod bool                // Go's rules: /vN paths, no 0.x minor breaks
	// compare, if set, replaces the comparison of facts (lockfiles, go.sum).
	compare func(old, new []byte) verdict
}

var manifests = []manifest{
	{names: []string{"go.mod"}, read: readGoMod, norm: goModuleBase, goMod: true},
	{names: []string{"go.work"}, read: readGoWork, norm: goModuleBase, goMod: true},
	{names: []string{"go.sum", "go.work.sum"}, compare: compareGoSum},
	{names: []string{"package.json"}, read: npmJSON.read},
	{names: []string{"composer.json"}, read: composerJSON.read},
	{names: []string{"requirements*.txt"}, read: readRequirements, norm: pyName},
	{names: []string{"pyproject.toml"}, read: readPyproject, norm: pyName},
	{names: []string{"pipfile"}, read: readPipfile, norm: pyName},
	{names: []string{"cargo.toml"}, read: readCargo, norm: cargoName},
	{names: []string{"libs.versions.toml"}, read: readCatalog},
	{names: []string{"gemfile"}, read: readGemfile, norm: strings.ToLower},
	{names: []string{"pom.xml"}, read: readPom},
	{names: []string{"build.gradle", "build.gradle.kts"}, read: readGradle},
	{names: []string{"package-lock.json", "npm-shrinkwrap.json"}, compare: compareNpmLock},
	{names: []string{"yarn.lock", "bun.lock"}, compare: lockText(npmRegistries)},
	{names: []string{"gemfile.lock"}, compare: lockText(rubyRegistries)},
	{names: []string{"pnpm-lock.yaml"}, compare: lockYAML(npmRegistries)},
	{names: []string{"composer.lock"}, compare: lockJSON(composerRegistries)},
	{names: []string{"pipfile.lock"}, compare: lockJSON(pythonRegistries)},
	{names: []string{"cargo.lock"}, compare: lockTOML(cargoRegistries)},
	{names: []string{"poetry.lock", "uv.lock", "pdm.lock"}, compare: lockTOML(pythonRegistries)},
}

// The default registries of each lockfile: a new URL must be one of these
// or under one of them (followed by a slash).
var (
	npmRegistries    = []string{"https://registry.npmjs.org", "https://registry.yarnpkg.com"}
	cargoRegistries  = []string{"https://github.com/rust-lang/crates.io-index", "https://index.crates.io"}
	pythonRegistries = []string{"https://pypi.org", "https://files.pythonhosted.org"}
	rubyRegistries   = []string{"https://rubygems.org"}
	// Packagist's packages are fetched from GitHub, so its lockfile names
	// GitHub; a package from elsewhere needs a "repositories" entry in
	// composer.json, which is DependencySource.
	composerRegistries = []string{"https://repo.packagist.org", "https://packagist.org", "https://api.github.com/repos", "https://github.com", "https://codeload.github.com"}
)

// findManifest returns the reader for the folded path, or nil.
func findManifest(k pathKey) *manifest {
	base := path.Base(string(k))
	for i := range manifests {
		for _, n := range manifests[i].names {
			if ok, _ := path.Match(n, base); ok {
				return &manifests[i]
			}
		}
	}
	return nil
}

// manifestVerdict reads the paths of a change that are manifests or
// lockfiles, whether or not a high-impact path rule also matched them. It
// returns the manifests' class and, apart, what of it is the verification
// surface. A manifest that is renamed or copied is DependencySource: it
// now applies somewhere else.
func manifestVerdict(c fileChange, ci checkInfo) (v, surface verdict) {
	for _, p := range []string{c.NewPath, c.OldPath} {
		if p == "" || badPath(p) != "" {
			continue
		}
		k := keyOf(p)
		m := findManifest(k)
		switch {
		case m == nil:
		case c.Status == 'R' || c.Status == 'C':
			v.raise(DependencySource, "renames or copies a dependency manifest")
		case c.binary:
			v.raise(Unclassified, "a binary dependency manifest")
		default:
			w, s := m.verdict(c, path.Base(p), ci)
			v.add(w)
			surface.add(s)
		}
		if c.NewPath == c.OldPath {
			break
		}
	}
	return v, surface
}

func (m *manifest) verdict(c fileChange, file string, ci checkInfo) (v, surface verdict) {
	if m.compare != nil {
		v = m.compare(c.old.data, c.new.data)
		v.raise(Dependencies, "edits the dependency file "+file)
		return v, verdict{}
	}
	v.raise(Dependencies, "edits the dependency manifest "+file)
	sides := [2]*facts{newFacts(), newFacts()}
	for i, s := range []side{c.old, c.new} {
		if !s.ok {
			continue
		}
		f, err := m.read(s.data)
		if err != nil {
			v.raise(DependencySource, "a dependency manifest the rules cannot read: "+clip(err.Error()))
			return v, verdict{}
		}
		sides[i] = f
	}
	old, new := sides[0], sides[1]
	for _, key := range sortedKeys(mergeKeys(old.keys, new.keys)) {
		o, inOld := old.keys[key]
		n, inNew := new.keys[key]
		if inOld && inNew && o.value == n.value {
			continue
		}
		f := n
		if !inNew {
			f = o
		}
		class := f.class
		if f.tool != "" && (ci.indirect || ci.tools[f.tool]) {
			class = Verification
		}
		v.raise(class, f.why)
		if class == Verification {
			surface.raise(class, f.why)
		}
	}
	norm := m.norm
	if norm == nil {
		norm = func(n string) string { return n }
	}
	v.add(compareEntries(norm, m.goMod, old.deps, new.deps))
	return v, surface
}

// facts is what a manifest says, as the rules compare it.
type facts struct {
	deps []entry
	keys map[string]fact
}

// entry is one requirement of a dependency as written.
type entry struct{ name, req string }

// fact is a setting: its canonical value and what a change to it is.
type fact struct {
	value string
	class Class
	why   string
	tool  string // when set, a change is Verification if the checks may run this tool
}

func newFacts() *facts { return &facts{keys: map[string]fact{}} }

func (f *facts) dep(name, req string) {
	f.deps = append(f.deps, entry{name, strings.TrimSpace(req)})
}

// set records a setting; a second setting of the same key joins its value,
// in an order that does not depend on the order of the settings, so that
// neither can hide the other.
func (f *facts) set(key, value string, class Class, why string) {
	f.setTool(key, value, class, why, "")
}

func (f *facts) setTool(key, value string, class Class, why, tool string) {
	if old, ok := f.keys[key]; ok {
		vs := append(strings.Split(old.value, "\x00"), value)
		sort.Strings(vs)
		value = strings.Join(vs, "\x00")
		if old.class.Rank() > class.Rank() {
			class, why, tool = old.class, old.why, old.tool
		}
	}
	f.keys[key] = fact{value: value, class: class, why: why, tool: tool}
}

// cannot records something a reader could not place: a change to it is
// DependencySource.
func (f *facts) cannot(key, value string) {
	f.set("unreadable "+key+"\x00"+value, value, DependencySource, "changes "+clip(key)+" in a way the rules cannot read")
}

func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// sourceMarkers find, in a requirement, a URL or a dependency taken from
// somewhere other than the registry.
var sourceMarkers = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`://|\bgit\+|\bgit@|(?:^|[^\w-])(?:file|link|portal|patch|exec|workspace|npm|github|gitlab|bitbucket|gist):`)
})

// maxCompares bounds the requirement comparisons of one manifest, which cost
// the product of how many each side has of a name.
const maxCompares = 1 << 16

// compareEntries compares the dependency entries of the two sides.
func compareEntries(norm func(string) string, goMod bool, olds, news []entry) verdict {
	var v verdict
	unchanged := map[entry]int{}
	for _, e := range olds {
		unchanged[e]++
	}
	var added []entry
	for _, e := range news {
		if unchanged[e] > 0 {
			unchanged[e]--
			continue
		}
		added = append(added, e)
	}
	// What is left of unchanged are the old entries the new side lost.
	removed, all := map[string][]entry{}, map[string][]entry{}
	for _, e := range olds {
		k := norm(e.name)
		all[k] = append(all[k], e)
	}
	for e, n := range unchanged {
		for range n {
			removed[norm(e.name)] = append(removed[norm(e.name)], e)
		}
	}
	sort.Slice(added, func(i, j int) bool {
		if added[i].name != added[j].name {
			return added[i].name < added[j].name
		}
		return added[i].req < added[j].req
	})
	budget := maxCompares
	for _, n := range added {
		if sourceMarkers().MatchString(n.req) {
			v.raise(DependencySource, "takes "+clip(n.name)+" from a URL or a source other than the registry")
			continue
		}
		k := norm(n.name)
		cands := removed[k]
		if len(cands) == 0 {
			cands = all[k]
		}
		if len(cands) == 0 {
			v.raise(DependencySource, "adds the dependency "+clip(n.name))
			continue
		}
		if budget -= len(cands); budget < 0 {
			v.raise(DependencySource, "has too many requirements of "+clip(n.name)+" to compare")
			continue
		}
		// Each new requirement needs one old one it updates.
		var best verdict
		for _, o := range cands {
			w := versionChange(clip(n.name), o.req, n.req, !goMod)
			if goMod && o.name != n.name {
				w = verdict{DependencyMajor, "moves " + clip(o.name) + " to the module path " + clip(n.name)}
			}
			if best.class == "" || w.class.Rank() < best.class.Rank() {
				best = w
			}
		}
		v.add(best)
	}
	return v
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- Lockfiles ----

var (
	urlPattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*)://([^\s"'<>,)\]}]*)`) })
	lockSources = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bgit@|(?:^|[^\w-])(?:file|link|portal|patch|exec|github|gitlab|bitbucket|git):`)
	})
)

// checkStrings raises each string of the new side that the old side lacks
// and that names a source outside registries.
func checkStrings(old, new []string, registries []string) verdict {
	var v verdict
	have := map[string]bool{}
	for _, s := range old {
		have[s] = true
	}
	for _, s := range new {
		if have[s] {
			continue
		}
		have[s] = true
		if lockSources().MatchString(s) {
			v.raise(DependencySource, "locks a package from a git, file or link source")
		}
		for _, m := range urlPattern().FindAllStringSubmatch(s, -1) {
			if why := checkURL(m[1], m[2], registries); why != "" {
				v.raise(DependencySource, why)
			}
		}
	}
	return v
}

// checkURL says why a locked URL is not from a default registry, or "".
func checkURL(scheme, rest string, registries []string) string {
	parts := strings.Split(strings.ToLower(scheme), "+")
	for _, p := range parts[:len(parts)-1] {
		if p != "registry" && p != "sparse" {
			return "locks a package from a " + clip(scheme) + " source"
		}
	}
	if parts[len(parts)-1] != "https" {
		return "locks a package over " + clip(scheme)
	}
	u := "https://" + rest
	for _, r := range registries {
		if u == r || strings.HasPrefix(u, r+"/") {
			return ""
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	return "locks a package from " + clip(host) + ", which is not the default registry"
}

// lockText reads a lockfile as text: the lines the new side adds.
func lockText(registries []string) func(old, new []byte) verdict {
	return func(old, new []byte) verdict {
		v := checkStrings(nil, addedLines(old, new), registries)
		if installScripts(lines(old)) < installScripts(lines(new)) {
			v.raise(InstallHooks, "locks a package that runs install scripts")
		}
		return v
	}
}

// installScripts counts the lines that mark a locked package as running
// install scripts.
func installScripts(ls []string) int {
	n := 0
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, `"hasInstallScript": true`) || strings.HasPrefix(t, "requiresBuild: true") {
			n++
		}
	}
	return n
}

// ---- go.sum ----

// compareGoSum is Dependencies, unless the new side changes the checksum of
// a module version the old side had, or has a line that is not a checksum.
func compareGoSum(old, new []byte) verdict {
	var v verdict
	sums := map[string]string{}
	for _, l := range lines(old) {
		if f := strings.Fields(l); len(f) == 3 {
			sums[f[0]+" "+f[1]] = f[2]
		}
	}
	for _, l := range addedLines(old, new) {
		f := strings.Fields(l)
		if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") {
			if strings.TrimSpace(l) != "" {
				v.raise(DependencySource, "adds a checksum line the rules cannot read")
			}
			continue
		}
		if o, ok := sums[f[0]+" "+f[1]]; ok && o != f[2] {
			v.raise(DependencySource, "changes the checksum of "+clip(f[0]+" "+f[1])+", which was already recorded")
		}
	}
	return v
}

// canon is a value's canonical text for comparing settings.
func canon(x any) string {
	return fmt.Sprintf("%#v", x)
}
