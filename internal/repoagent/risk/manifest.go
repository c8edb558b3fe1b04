package risk

import (
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Dependency manifests and lockfiles are read line by line from the diff's
// hunks, which is all the classifier sees. Any change to one is at least
// Dependencies. Each reader turns the changed lines into dependency entries
// (name and requirement, on the removed or added side) and findings, and a
// ledger compares the entries of each name:
//
//   - a name only on the added side is a new dependency: DependencySource;
//   - a name only on the removed side is a removed dependency: Dependencies;
//   - a name on both sides must have every added requirement be a forward
//     minor or patch update of some removed one (Dependencies); a new major
//     version (for 0.x outside Go, a new minor one; see versionChange), a
//     downgrade, or a Go module path that changes its /vN suffix is
//     DependencyMajor; a requirement the rules cannot read is
//     DependencySource.
//
// A URL or non-registry source in an added manifest line (sourceMarkers) is
// DependencySource. A line a reader cannot place is DependencySource: a
// manifest change the rules do not understand is never low. Where a format
// has sections ([dependencies], "scripts": {...}), the section is known only
// when its header is inside the hunk; otherwise the reader goes by the shape
// of the line and, when unsure, gives the higher class.
//
// Lockfiles are Dependencies, unless an added line holds a URL that is not
// under the lockfile's default registry (or is not https), or a git, file or
// link source: then DependencySource. go.sum is Dependencies unless it
// changes the checksum of a version it already had.

// manifest says how to read one kind of manifest or lockfile.
type manifest struct {
	names []string // globs on the lower-cased base name
	read  func(s *section, name string) verdict
}

var manifests = []manifest{
	{[]string{"go.mod", "go.work"}, readGoMod},
	{[]string{"go.sum", "go.work.sum"}, readGoSum},
	{[]string{"package.json"}, npmJSON.read},
	{[]string{"composer.json"}, composerJSON.read},
	{[]string{"requirements*.txt"}, readRequirements},
	{[]string{"pyproject.toml"}, pyprojectTOML.read},
	{[]string{"pipfile"}, pipfileTOML.read},
	{[]string{"cargo.toml"}, cargoTOML.read},
	{[]string{"libs.versions.toml"}, catalogTOML.read},
	{[]string{"gemfile"}, readGemfile},
	{[]string{"pom.xml"}, readPom},
	{[]string{"build.gradle", "build.gradle.kts"}, readGradle},
	{[]string{"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock"}, lockfile(npmRegistries)},
	{[]string{"cargo.lock"}, lockfile(cargoRegistries)},
	{[]string{"poetry.lock", "uv.lock", "pdm.lock", "pipfile.lock"}, lockfile(pythonRegistries)},
	{[]string{"gemfile.lock"}, lockfile(rubyRegistries)},
	{[]string{"composer.lock"}, lockfile(composerRegistries)},
}

// The default registries of each lockfile: an added URL must be one of
// these or under one of them (followed by a slash).
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

// findManifest returns the reader for the path, or nil.
func findManifest(p string) *manifest {
	base := strings.ToLower(path.Base(p))
	for i := range manifests {
		for _, n := range manifests[i].names {
			if ok, _ := path.Match(n, base); ok {
				return &manifests[i]
			}
		}
	}
	return nil
}

// sourceMarkers find, in an added manifest line, a URL or a dependency
// taken from somewhere other than the registry.
var sourceMarkers = regexp.MustCompile(`://|\bgit\+|\bgit@|(?:^|[^\w-])(?:file|link|portal|patch|exec|workspace|npm|github|gitlab|bitbucket|gist):`)

// maxPairs bounds the comparisons of one dependency's requirements, which
// cost the product of how many each side has.
const maxPairs = 1 << 12

// entry is one requirement of a dependency as written.
type entry struct{ name, req string }

// ledger collects a manifest's findings and dependency entries.
type ledger struct {
	verdict
	norm        func(string) string // the name under which entries are compared
	pathMatters bool                // a change of the written name is DependencyMajor (Go's /vN)
	goVersions  bool                // 0.x minor updates are not major (see versionChange)
	old, new    map[string][]entry
}

func newLedger(file string, norm func(string) string) *ledger {
	l := &ledger{norm: norm, old: map[string][]entry{}, new: map[string][]entry{}}
	l.raise(Dependencies, "edits the dependency manifest "+file)
	return l
}

// dep records a requirement on the removed ('-') or added ('+') side.
func (l *ledger) dep(op byte, name, req string) {
	key := l.norm(name)
	e := entry{name, strings.TrimSpace(req)}
	switch op {
	case '-':
		l.old[key] = append(l.old[key], e)
	case '+':
		l.new[key] = append(l.new[key], e)
	}
}

// scan raises an added line that names a URL or a non-registry source.
func (l *ledger) scan(op byte, text string) {
	if op == '+' && sourceMarkers.MatchString(text) {
		l.raise(DependencySource, "adds a URL or a source other than the registry")
	}
}

// cannot records a changed line the reader cannot place.
func (l *ledger) cannot(text string) {
	l.raise(DependencySource, "changes a manifest line the rules cannot read: "+clip(strings.TrimSpace(text)))
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// result compares the entries and returns the manifest's verdict.
func (l *ledger) result() verdict {
	v := l.verdict
	keys := make([]string, 0, len(l.new))
	for k := range l.new {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		olds := l.old[k]
		if len(olds)*len(l.new[k]) > maxPairs {
			v.raise(DependencySource, "has too many requirements of "+k+" to compare")
			continue
		}
		for _, n := range l.new[k] {
			if len(olds) == 0 {
				v.raise(DependencySource, "adds the dependency "+n.name)
				continue
			}
			// Each added requirement needs one removed one it updates.
			var best verdict
			for _, o := range olds {
				w := versionChange(n.name, o.req, n.req, !l.goVersions)
				if l.pathMatters && o.name != n.name {
					w = verdict{DependencyMajor, "moves " + o.name + " to the module path " + n.name}
				}
				if best.class == "" || w.class.Rank() < best.class.Rank() {
					best = w
				}
			}
			v.add(best)
		}
	}
	return v
}

// changed calls f for every removed and added line of s.
func changed(s *section, f func(op byte, text string)) {
	for _, h := range s.hunks {
		for _, line := range h.lines {
			if line[0] != ' ' {
				f(line[0], line[1:])
			}
		}
	}
}

// sides walks each hunk keeping a state per side: f sees each line with the
// state of its side (the new side for context lines) and returns the state
// after the line. Context lines move both sides.
func sides[T any](s *section, start T, f func(st T, op byte, text string) T) {
	for _, h := range s.hunks {
		oldSt, newSt := start, start
		for _, line := range h.lines {
			op, text := line[0], line[1:]
			switch op {
			case '-':
				oldSt = f(oldSt, op, text)
			case '+':
				newSt = f(newSt, op, text)
			default:
				oldSt = f(oldSt, op, text)
				newSt = f(newSt, op, text)
			}
		}
	}
}

// ---- Go ----

// goDirectives are go.mod's and go.work's directives, with the class a
// change to one gives when it is not a require line.
var goDirectives = map[string]verdict{
	"module":    {Dependencies, "edits the module line"},
	"go":        {Dependencies, "changes the Go version"},
	"toolchain": {Dependencies, "changes the Go toolchain"},
	"require":   {Dependencies, "changes a requirement"},
	"exclude":   {Dependencies, "excludes a module version"},
	"godebug":   {Dependencies, "changes a godebug setting"},
	"ignore":    {Dependencies, "changes an ignore directive"},
	"retract":   {ReleasePublish, "retracts published versions"},
	"replace":   {DependencySource, "edits a replace directive"},
	"tool":      {DependencySource, "edits a tool dependency"},
	"use":       {DependencySource, "edits a go.work use directive"},
}

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

func readGoMod(s *section, file string) verdict {
	l := newLedger(file, goModuleBase)
	l.pathMatters, l.goVersions = true, true
	var oldMod, newMod []string
	// The state is the block a line is in: "?" before the hunk shows one.
	sides(s, "?", func(block string, op byte, text string) string {
		content, _, _ := strings.Cut(text, "//")
		fields := strings.Fields(content)
		if op != ' ' {
			l.scan(op, content)
			goModLine(l, op, block, fields, &oldMod, &newMod)
		}
		switch {
		case len(fields) == 2 && fields[1] == "(":
			return fields[0]
		case len(fields) == 1 && fields[0] == ")":
			return ""
		}
		return block
	})
	v := l.result()
	switch {
	case len(oldMod) == 0 && len(newMod) == 0:
	case len(oldMod) == 1 && len(newMod) == 1 && oldMod[0] == newMod[0]:
	case len(oldMod) == 1 && len(newMod) == 1 && goModuleBase(oldMod[0]) == goModuleBase(newMod[0]):
		v.raise(DependencyMajor, "moves the module to a new major version path")
	default:
		v.raise(DependencySource, "changes the module path")
	}
	return v
}

func goModLine(l *ledger, op byte, block string, fields []string, oldMod, newMod *[]string) {
	if len(fields) == 0 || len(fields) == 1 && fields[0] == ")" {
		return
	}
	directive, args := fields[0], fields[1:]
	if _, ok := goDirectives[directive]; !ok {
		switch {
		case block != "?" && block != "":
			directive, args = block, fields
		case block == "?" && slices.Contains(fields, "=>"):
			directive, args = "replace", fields
		case block == "?" && len(fields) == 2 && strings.HasPrefix(fields[1], "v"):
			directive, args = "require", fields
		default:
			l.cannot(strings.Join(fields, " "))
			return
		}
	}
	if len(args) == 1 && args[0] == "(" {
		if w := goDirectives[directive]; w.class != Dependencies {
			l.raise(w.class, w.reason)
		}
		return
	}
	switch directive {
	case "module":
		if len(args) != 1 {
			l.cannot(strings.Join(fields, " "))
			return
		}
		if op == '-' {
			*oldMod = append(*oldMod, args[0])
		} else {
			*newMod = append(*newMod, args[0])
		}
	case "require":
		if len(args) != 2 {
			l.cannot(strings.Join(fields, " "))
			return
		}
		l.dep(op, args[0], args[1])
	default:
		w, ok := goDirectives[directive]
		if !ok {
			l.cannot(strings.Join(fields, " "))
			return
		}
		l.raise(w.class, w.reason)
	}
}

func readGoSum(s *section, file string) verdict {
	v := verdict{Dependencies, "edits the checksum file " + file}
	oldSums, newSums := map[string]string{}, map[string]string{}
	changed(s, func(op byte, text string) {
		f := strings.Fields(text)
		if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") {
			v.raise(DependencySource, "changes a checksum line the rules cannot read")
			return
		}
		key := f[0] + " " + f[1]
		if op == '-' {
			oldSums[key] = f[2]
		} else {
			newSums[key] = f[2]
		}
	})
	keys := make([]string, 0, len(newSums))
	for k := range newSums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if o, ok := oldSums[k]; ok && o != newSums[k] {
			v.raise(DependencySource, "changes the checksum of "+k+", which was already recorded")
		}
	}
	return v
}

// ---- JSON manifests (package.json, composer.json) ----

// jsonManifest describes a JSON manifest. Lines are read as `"key": value`;
// the enclosing object is known when its opening line is in the hunk.
type jsonManifest struct {
	depSections []string // objects whose entries are dependencies
	scripts     string   // the object of scripts
	hooks       []string // scripts that run on install, pack or publish: InstallHooks
	release     []string // keys that decide what is published: ReleasePublish
	sources     []string // keys that redirect where dependencies come from: DependencySource
	benign      []string // metadata keys and objects: Dependencies
}

var npmJSON = jsonManifest{
	depSections: []string{"dependencies", "devDependencies", "peerDependencies", "optionalDependencies", "engines"},
	scripts:     "scripts",
	hooks: []string{
		"preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare",
		"prepublish", "prepublishOnly", "prepack", "postpack", "dependencies",
	},
	release: []string{"version", "name", "private", "publishConfig", "files"},
	sources: []string{"overrides", "resolutions", "pnpm", "workspaces", "bundleDependencies", "bundledDependencies", "packageManager", "devEngines"},
	benign:  []string{"description", "keywords", "author", "contributors", "homepage", "license", "bugs", "funding", "repository", "displayName"},
}

var composerJSON = jsonManifest{
	depSections: []string{"require", "require-dev"},
	scripts:     "scripts",
	hooks: []string{
		"pre-install-cmd", "post-install-cmd", "pre-update-cmd", "post-update-cmd",
		"pre-autoload-dump", "post-autoload-dump", "post-root-package-install", "post-create-project-cmd",
		"pre-package-install", "post-package-install", "pre-package-update", "post-package-update",
		"pre-package-uninstall", "post-package-uninstall",
	},
	release: []string{"version", "name", "archive"},
	sources: []string{"repositories", "replace", "provide", "minimum-stability", "prefer-stable", "config"},
	benign:  []string{"description", "keywords", "homepage", "license", "authors", "support", "funding"},
}

var packageName = regexp.MustCompile(`^[@A-Za-z0-9][@A-Za-z0-9._~/-]*$`)

// keyStack is the stack of enclosing JSON keys, shared between the sides
// of a hunk: pushing and popping cost the same at any depth.
type keyStack struct {
	key    string // "" for an object or array without a key (the root, an array's item)
	parent *keyStack
}

func (m jsonManifest) read(s *section, file string) verdict {
	l := newLedger(file, func(n string) string { return n })
	sides(s, (*keyStack)(nil), func(stack *keyStack, op byte, text string) *keyStack {
		sec, known := "", false
		if stack != nil {
			sec, known = stack.key, stack.key != ""
		}
		if op != ' ' {
			m.line(l, op, sec, known, text)
		}
		t := strings.TrimSuffix(strings.TrimSpace(text), ",")
		key, raw, ok := jsonPair(t)
		switch {
		case ok && (raw == "{" || raw == "["):
			return &keyStack{key, stack}
		case t == "{" || t == "[":
			return &keyStack{"", stack}
		case (t == "}" || t == "]") && stack != nil:
			return stack.parent
		}
		return stack
	})
	return l.result()
}

func (m jsonManifest) line(l *ledger, op byte, sec string, known bool, text string) {
	t := strings.TrimSuffix(strings.TrimSpace(text), ",")
	switch t {
	case "", "{", "}", "[", "]", "{}", "[]":
		return
	}
	l.scan(op, t)
	key, raw, ok := jsonPair(t)
	if !ok {
		// An array item, or something else.
		switch {
		case known && slices.Contains(m.sources, sec):
			l.raise(DependencySource, "changes "+sec+", which redirects dependencies")
		case known && slices.Contains(m.release, sec):
			l.raise(ReleasePublish, "changes "+sec+", which decides what is published")
		case known && slices.Contains(m.benign, sec):
		default:
			l.cannot(t)
		}
		return
	}
	inDeps := known && slices.Contains(m.depSections, sec)
	isStr := strings.HasPrefix(raw, `"`)
	switch {
	case slices.Contains(m.sources, key) || known && slices.Contains(m.sources, sec):
		l.raise(DependencySource, "changes "+key+", which redirects dependencies")
	case isStr && slices.Contains(m.hooks, key) && (!known || sec == m.scripts):
		l.raise(InstallHooks, "changes the "+key+" script, which runs on install or publish")
	case known && sec == m.scripts:
		// Another script: an edit of the manifest like any other.
	case slices.Contains(m.release, key) && !inDeps || known && slices.Contains(m.release, sec):
		l.raise(ReleasePublish, "changes "+key+", which decides what is published")
	case raw == "{" || raw == "[":
		if !slices.Contains(m.depSections, key) && key != m.scripts && !slices.Contains(m.benign, key) {
			l.raise(DependencySource, "adds or removes the object "+key)
		}
	case inDeps:
		req, isStr := jsonString(raw)
		if !isStr || !packageName.MatchString(key) {
			l.cannot(t)
			return
		}
		l.dep(op, key, req)
	case !known:
		// Outside a known object: a dependency if it reads as one.
		req, isStr := jsonString(raw)
		if _, isRange := parseRange(req); isStr && isRange && packageName.MatchString(key) {
			l.dep(op, key, req)
		} else if !slices.Contains(m.benign, key) {
			l.cannot(t)
		}
	case slices.Contains(m.benign, sec):
	default:
		l.cannot(t)
	}
}

// jsonPair reads `"key": value` with a key free of escapes.
func jsonPair(t string) (key, raw string, ok bool) {
	if !strings.HasPrefix(t, `"`) {
		return "", "", false
	}
	end := strings.IndexByte(t[1:], '"')
	if end < 0 {
		return "", "", false
	}
	key = t[1 : end+1]
	if strings.Contains(key, `\`) {
		return "", "", false
	}
	rest := strings.TrimSpace(t[end+2:])
	raw, ok = strings.CutPrefix(rest, ":")
	if !ok {
		return "", "", false
	}
	return key, strings.TrimSpace(raw), true
}

// jsonString reads a JSON string free of escapes.
func jsonString(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if strings.ContainsAny(s, `"\`) {
		return "", false
	}
	return s, true
}

// ---- Python requirements ----

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

var pyReqName = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$`)

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
	m := pyReqName.FindStringSubmatch(t)
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

func readRequirements(s *section, file string) verdict {
	l := newLedger(file, pyName)
	changed(s, func(op byte, text string) {
		t := text
		if i := strings.Index(t, " #"); i >= 0 {
			t = t[:i]
		}
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), `\`))
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "--hash") {
			return
		}
		l.scan(op, t)
		if strings.HasPrefix(t, "-") {
			l.raise(DependencySource, "changes a pip option ("+strings.Fields(t)[0]+"), which can add sources or files")
			return
		}
		name, req, ok := pep508(t)
		if !ok {
			l.cannot(t)
			return
		}
		l.dep(op, name, req)
	})
	return l.result()
}

// ---- TOML manifests (Cargo.toml, pyproject.toml, Pipfile, libs.versions.toml) ----

// tomlLine is a line of TOML as far as the readers need it.
type tomlLine struct {
	kind  int    // one of the t* constants
	name  string // the table's name, or the key (lower-cased, quotes and spaces removed)
	value string // a key's raw value, or an item
}

const (
	tBlank  = iota
	tHeader // [table] or [[table]]
	tKeyVal // key = value
	tItem   // an array item on its own line
	tClose  // the end of a multi-line array or table
	tOther
)

// tomlState is where a side of a hunk is: the table ("?" until a header is
// seen) and the key of the multi-line array being read ("" if none).
type tomlState struct{ table, array string }

func readTOMLLine(text string) tomlLine {
	t := strings.TrimSpace(stripTOMLComment(text))
	switch {
	case t == "":
		return tomlLine{kind: tBlank}
	case strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && !strings.HasPrefix(t, `["`) && !strings.HasPrefix(t, `['`):
		return tomlLine{kind: tHeader, name: tomlKey(strings.Trim(t, "[]"))}
	case t == "]" || t == "]," || t == "}" || t == "},":
		return tomlLine{kind: tClose}
	case strings.HasPrefix(t, `"`) || strings.HasPrefix(t, `'`) || strings.HasPrefix(t, "{"):
		return tomlLine{kind: tItem, value: strings.TrimSuffix(t, ",")}
	}
	if i := indexOutsideQuotes(t, '='); i > 0 {
		return tomlLine{kind: tKeyVal, name: tomlKey(t[:i]), value: strings.TrimSpace(t[i+1:])}
	}
	return tomlLine{kind: tOther, value: t}
}

func tomlKey(k string) string {
	return strings.ToLower(strings.NewReplacer(`"`, "", "'", "", " ", "", "\t", "").Replace(k))
}

// stripTOMLComment cuts a # comment that is outside quotes.
func stripTOMLComment(t string) string {
	if i := indexOutsideQuotes(t, '#'); i >= 0 {
		return t[:i]
	}
	return t
}

func indexOutsideQuotes(t string, c byte) int {
	var quote byte
	for i := 0; i < len(t); i++ {
		switch {
		case quote != 0:
			if t[i] == '\\' && quote == '"' {
				i++
			} else if t[i] == quote {
				quote = 0
			}
		case t[i] == '"' || t[i] == '\'':
			quote = t[i]
		case t[i] == c:
			return i
		}
	}
	return -1
}

// tomlString reads a basic or literal TOML string free of escapes.
func tomlString(v string) (string, bool) {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		s := v[1 : len(v)-1]
		if !strings.ContainsAny(s, `"'\`) {
			return s, true
		}
	}
	return "", false
}

// splitTOMLList splits the inside of an inline table or array at the commas
// that are outside quotes and brackets.
func splitTOMLList(v string) []string {
	var parts []string
	var quote byte
	depth, start := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, strings.TrimSpace(v[start:i]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(v[start:]); rest != "" {
		parts = append(parts, rest)
	}
	return parts
}

// tomlTable reads an inline table `{ k = v, ... }` into its keys and raw
// values.
func tomlTable(v string) (map[string]string, bool) {
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, false
	}
	m := map[string]string{}
	for _, part := range splitTOMLList(v[1 : len(v)-1]) {
		i := indexOutsideQuotes(part, '=')
		if i <= 0 {
			return nil, false
		}
		m[tomlKey(part[:i])] = strings.TrimSpace(part[i+1:])
	}
	return m, true
}

// tomlArrayItems returns the items of an array written on one line, or of
// its first line when it goes on.
func tomlArrayItems(v string) []string {
	v = strings.TrimPrefix(v, "[")
	v = strings.TrimSuffix(v, "]")
	return splitTOMLList(v)
}

// tomlManifest reads a TOML manifest: each changed line with the table and
// array it is in.
type tomlManifest struct {
	norm func(string) string
	line func(l *ledger, op byte, st tomlState, t tomlLine)
}

func (m tomlManifest) read(s *section, file string) verdict {
	l := newLedger(file, m.norm)
	sides(s, tomlState{table: "?"}, func(st tomlState, op byte, text string) tomlState {
		t := readTOMLLine(text)
		if op != ' ' {
			l.scan(op, text)
			m.line(l, op, st, t)
		}
		switch t.kind {
		case tHeader:
			return tomlState{table: t.name}
		case tKeyVal:
			if strings.HasPrefix(t.value, "[") && strings.Count(t.value, "[") > strings.Count(t.value, "]") {
				st.array = t.name
			}
		case tClose:
			st.array = ""
		}
		return st
	})
	return l.result()
}

// dependencyAttrs are the keys of a dependency's table that take it from
// somewhere other than the registry, or rename it.
var dependencyAttrs = []string{
	"git", "path", "url", "branch", "tag", "rev", "registry", "registry-index",
	"package", "source", "index", "file", "editable", "develop",
}

// tableDep records a dependency written as a string requirement or as an
// inline table, or raises what its table says.
func tableDep(l *ledger, op byte, name, value string) {
	if req, ok := tomlString(value); ok {
		l.dep(op, name, req)
		return
	}
	attrs, ok := tomlTable(value)
	if !ok {
		l.cannot(name + " = " + value)
		return
	}
	attrDep(l, op, name, attrs)
}

func attrDep(l *ledger, op byte, name string, attrs map[string]string) {
	for k := range attrs {
		if slices.Contains(dependencyAttrs, k) {
			l.raise(DependencySource, "takes "+name+" from a "+k+" rather than the registry")
		}
	}
	switch {
	case attrs["version"] != "":
		req, ok := tomlString(attrs["version"])
		if !ok {
			req = attrs["version"]
		}
		l.dep(op, name, req)
	case attrs["workspace"] != "":
		l.dep(op, name, "workspace")
	case len(attrs) > 0:
		l.dep(op, name, "(no version)")
	}
}

// keyDep handles `name.attr = value` dotted keys and `name = value`.
func keyDep(l *ledger, op byte, key, value string) {
	name, attr, dotted := strings.Cut(key, ".")
	if !dotted {
		tableDep(l, op, name, value)
		return
	}
	attrDep(l, op, name, map[string]string{attr: value})
}

var cargoTOML = tomlManifest{
	norm: func(n string) string { return strings.ReplaceAll(strings.ToLower(n), "_", "-") },
	line: cargoLine,
}

// cargoBenign are [package] keys that are metadata: Dependencies.
var cargoBenign = []string{
	"description", "authors", "license", "license-file", "readme", "keywords", "categories",
	"repository", "homepage", "documentation", "edition", "rust-version", "exclude", "include",
	"default-run", "autobins", "autoexamples", "autotests", "autobenches", "resolver",
}

func cargoLine(l *ledger, op byte, st tomlState, t tomlLine) {
	table := st.table
	isDeps := table == "dependencies" || strings.HasSuffix(table, ".dependencies") ||
		table == "dev-dependencies" || strings.HasSuffix(table, ".dev-dependencies") ||
		table == "build-dependencies" || strings.HasSuffix(table, ".build-dependencies")
	var depTable string // [dependencies.foo]
	for _, d := range []string{"dependencies.", "dev-dependencies.", "build-dependencies."} {
		if i := strings.Index(table, d); i >= 0 && (i == 0 || table[i-1] == '.') {
			depTable = table[i+len(d):]
		}
	}
	isSource := table == "replace" || strings.HasPrefix(table, "patch") || strings.HasPrefix(table, "source") || strings.HasPrefix(table, "registries")
	isPackage := table == "package" || table == "workspace.package"
	switch t.kind {
	case tBlank, tClose:
	case tHeader:
		if h := t.name; h == "replace" || strings.HasPrefix(h, "patch") || strings.HasPrefix(h, "source") || strings.HasPrefix(h, "registries") {
			l.raise(DependencySource, "edits ["+h+"], which redirects dependencies")
		}
	case tItem:
		if table == "?" && st.array == "" {
			l.cannot(t.value)
		}
	case tKeyVal:
		switch {
		case isSource:
			l.raise(DependencySource, "edits ["+table+"], which redirects dependencies")
		case depTable != "":
			attrDep(l, op, depTable, map[string]string{t.name: t.value})
		case isDeps:
			keyDep(l, op, t.name, t.value)
		case isPackage || table == "?":
			switch {
			case t.name == "version" || t.name == "name" || t.name == "publish":
				l.raise(ReleasePublish, "changes the package's "+t.name)
			case t.name == "build" || t.name == "links":
				l.raise(InstallHooks, "changes the package's build script")
			case isPackage && slices.Contains(cargoBenign, t.name):
			case table == "?" && st.array != "":
			case table == "?":
				keyDep(l, op, t.name, t.value)
			default:
				l.cannot(t.name + " = " + t.value)
			}
		}
	default:
		l.cannot(t.value)
	}
}

var pyprojectTOML = tomlManifest{norm: pyName, line: pyprojectLine}

// pyprojectBenign are [project] and [tool.poetry] keys that are metadata.
var pyprojectBenign = []string{
	"description", "readme", "license", "license-files", "authors", "maintainers", "keywords",
	"classifiers", "urls", "dynamic", "requires-python", "homepage", "repository", "documentation",
	"packages", "include", "exclude",
}

// pyprojectHooks are tables of build backends that run code on build.
var pyprojectHooks = []string{"tool.hatch.build", "tool.setuptools", "tool.pdm.build", "tool.maturin", "tool.scikit-build", "tool.poetry.build"}

func pyprojectTable(table string) string {
	switch {
	case table == "?":
		return "unknown"
	case table == "project":
		return "project"
	case table == "project.optional-dependencies" || table == "dependency-groups":
		return "deparrays"
	case table == "build-system":
		return "build"
	case table == "tool.poetry":
		return "poetry"
	case table == "tool.poetry.dependencies" || table == "tool.poetry.dev-dependencies" ||
		strings.HasPrefix(table, "tool.poetry.group.") && strings.HasSuffix(table, ".dependencies"):
		return "poetrydeps"
	case strings.Contains(table, ".source") || strings.Contains(table, ".index"):
		return "source"
	}
	for _, h := range pyprojectHooks {
		if table == h || strings.HasPrefix(table, h+".") {
			return "hooks"
		}
	}
	if strings.HasPrefix(table, "tool.") || strings.HasPrefix(table, "project.") {
		return "other"
	}
	return "strange"
}

// pep508Items records each quoted requirement in items.
func pep508Items(l *ledger, op byte, items []string) {
	for _, it := range items {
		req, ok := tomlString(strings.TrimSuffix(strings.TrimSpace(it), ","))
		if !ok {
			l.cannot(it)
			continue
		}
		name, spec, ok := pep508(req)
		if !ok {
			l.raise(DependencySource, "adds or changes a direct reference: "+clip(req))
			continue
		}
		l.dep(op, name, spec)
	}
}

func pyprojectLine(l *ledger, op byte, st tomlState, t tomlLine) {
	kind := pyprojectTable(st.table)
	depArray := !slices.Contains(pyprojectBenign, st.array) &&
		(kind == "deparrays" || kind == "unknown" ||
			kind == "project" && st.array == "dependencies" || kind == "build" && st.array == "requires")
	switch t.kind {
	case tBlank, tClose:
	case tHeader:
		switch pyprojectTable(t.name) {
		case "source":
			l.raise(DependencySource, "edits ["+t.name+"], which redirects dependencies")
		case "hooks":
			l.raise(InstallHooks, "edits ["+t.name+"], which runs on build")
		}
	case tItem:
		switch {
		case st.array != "" && !depArray:
		case depArray:
			pep508Items(l, op, []string{t.value})
		default:
			l.cannot(t.value)
		}
	case tKeyVal:
		key, value := t.name, t.value
		inlineArray := strings.HasPrefix(value, "[")
		switch kind {
		case "project", "poetry", "unknown":
			switch {
			case key == "version" || key == "name":
				l.raise(ReleasePublish, "changes the project's "+key)
			case slices.Contains(pyprojectBenign, key):
			case kind == "project" && key == "dependencies" || kind == "unknown" && inlineArray:
				pep508Items(l, op, tomlArrayItems(value))
			case kind == "project" && key == "optional-dependencies":
				l.cannot(key + " = " + value)
			case kind == "unknown" && st.array != "":
			case kind == "unknown":
				tableDep(l, op, key, value)
			default:
				l.cannot(key + " = " + value)
			}
		case "deparrays":
			pep508Items(l, op, tomlArrayItems(value))
		case "build":
			switch key {
			case "requires":
				pep508Items(l, op, tomlArrayItems(value))
			default:
				l.raise(InstallHooks, "changes the build backend, which runs on install")
			}
		case "poetrydeps":
			keyDep(l, op, key, value)
		case "source":
			l.raise(DependencySource, "edits ["+st.table+"], which redirects dependencies")
		case "hooks":
			l.raise(InstallHooks, "edits ["+st.table+"], which runs on build")
		case "other":
		default:
			l.cannot(key + " = " + value)
		}
	default:
		l.cannot(t.value)
	}
}

var pipfileTOML = tomlManifest{norm: pyName, line: pipfileLine}

func pipfileLine(l *ledger, op byte, st tomlState, t tomlLine) {
	switch t.kind {
	case tBlank, tClose:
	case tHeader:
		if t.name == "source" {
			l.raise(DependencySource, "edits a package index source")
		}
	case tKeyVal:
		switch st.table {
		case "packages", "dev-packages", "?":
			keyDep(l, op, t.name, t.value)
		case "source":
			l.raise(DependencySource, "edits a package index source")
		case "requires", "scripts", "pipenv":
		default:
			l.cannot(t.name + " = " + t.value)
		}
	default:
		l.cannot(t.value)
	}
}

var catalogTOML = tomlManifest{norm: func(n string) string { return n }, line: catalogLine}

// catalogLine reads a Gradle version catalog: [versions] name = "1.2",
// [libraries] and [plugins] alias = "group:name:version" or an inline table.
func catalogLine(l *ledger, op byte, st tomlState, t tomlLine) {
	switch t.kind {
	case tBlank, tClose, tHeader:
	case tItem:
		if st.array == "" {
			l.cannot(t.value)
		}
	case tKeyVal:
		if st.table == "bundles" {
			return
		}
		if s, ok := tomlString(t.value); ok {
			if parts := strings.Split(s, ":"); len(parts) >= 2 {
				l.dep(op, strings.Join(parts[:len(parts)-1], ":"), parts[len(parts)-1])
			} else {
				l.dep(op, "version "+t.name, s)
			}
			return
		}
		attrs, ok := tomlTable(t.value)
		if !ok {
			l.cannot(t.name + " = " + t.value)
			return
		}
		name := attrs["module"] + attrs["id"]
		if g, n := attrs["group"], attrs["name"]; g != "" || n != "" {
			name = g + ":" + n
		}
		if name == "" {
			l.cannot(t.name + " = " + t.value)
			return
		}
		req := attrs["version"]
		if ref := attrs["version.ref"]; ref != "" {
			req = "ref " + ref
		}
		if s, ok := tomlString(req); ok {
			req = s
		}
		l.dep(op, name, req)
	default:
		l.cannot(t.value)
	}
}

// ---- Gemfile ----

var (
	gemLine      = regexp.MustCompile(`^gem\s*\(?\s*['"]([^'"]+)['"](.*)$`)
	quoted       = regexp.MustCompile(`['"]([^'"]*)['"]`)
	gemSources   = regexp.MustCompile(`\b(?:git|github|gitlab|bitbucket|path|source|git_source)\s*:|:(?:git|github|path|source)\s*=>`)
	gemStructure = regexp.MustCompile(`^(?:(?:group|platforms?|install_if)\b.*\bdo(?:\s*\|.*\|)?|end|ruby\s.*)$`)
)

func readGemfile(s *section, file string) verdict {
	l := newLedger(file, strings.ToLower)
	changed(s, func(op byte, text string) {
		t := strings.TrimSpace(text)
		if i := strings.Index(t, " #"); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		if t == "" || strings.HasPrefix(t, "#") || gemStructure.MatchString(t) {
			return
		}
		l.scan(op, t)
		m := gemLine.FindStringSubmatch(t)
		if m == nil {
			l.cannot(t)
			return
		}
		if gemSources.MatchString(m[2]) {
			l.raise(DependencySource, "takes the gem "+m[1]+" from a source other than the registry")
		}
		req := ""
		// The first requirement: quoted strings before any option.
		opts, _, _ := strings.Cut(m[2], ":")
		if q := quoted.FindStringSubmatch(opts); q != nil {
			req = q[1]
		}
		l.dep(op, m[1], req)
	})
	return l.result()
}

// ---- Maven ----

var (
	xmlElement   = regexp.MustCompile(`^<([A-Za-z][\w.-]*)>([^<]*)</([A-Za-z][\w.-]*)>$`)
	xmlStructure = regexp.MustCompile(`^</?(?:dependency|dependencies|dependencyManagement|exclusion|exclusions|properties)>$`)
)

func readPom(s *section, file string) verdict {
	l := newLedger(file, func(n string) string { return n })
	// The state is the last artifactId seen on the side.
	sides(s, "", func(artifact string, op byte, text string) string {
		t := strings.TrimSpace(text)
		m := xmlElement.FindStringSubmatch(t)
		if op != ' ' {
			l.scan(op, t)
			pomLine(l, op, artifact, t, m)
		}
		if m != nil && m[1] == "artifactId" {
			return m[2]
		}
		return artifact
	})
	return l.result()
}

func pomLine(l *ledger, op byte, artifact, t string, m []string) {
	switch {
	case t == "" || strings.HasPrefix(t, "<!--") || xmlStructure.MatchString(t):
		return
	case m == nil || m[1] != m[3]:
		l.cannot(t)
	case m[1] == "version":
		if artifact == "" {
			artifact = "(unnamed)"
		}
		l.dep(op, "artifact "+artifact, m[2])
	case strings.HasSuffix(m[1], ".version"):
		l.dep(op, "property "+m[1], m[2])
	case m[1] == "artifactId" || m[1] == "groupId":
		l.dep(op, m[1]+" "+m[2], "")
	case m[1] == "scope" || m[1] == "optional" || m[1] == "type" || m[1] == "classifier":
	default:
		l.cannot(t)
	}
}

// ---- Gradle ----

var (
	gradleCoordinate = regexp.MustCompile(`^\w+\s*\(?\s*(?:platform\s*\(\s*)?["']([^"'$]+)["']\s*\)?\s*\)?$`)
	gradlePlugin     = regexp.MustCompile(`^id\s*\(?\s*["']([^"']+)["']\s*\)?\s*version\s*\(?\s*["']([^"'$]+)["']\s*\)?$`)
	gradleCatalogRef = regexp.MustCompile(`^\w+\s*\(?\s*(libs\.[\w.]+)\s*\)?$`)
	gradleStructure  = regexp.MustCompile(`^(?:dependencies\s*\{|plugins\s*\{|\})$`)
)

func readGradle(s *section, file string) verdict {
	l := newLedger(file, func(n string) string { return n })
	changed(s, func(op byte, text string) {
		t := strings.TrimSpace(text)
		if t == "" || strings.HasPrefix(t, "//") || gradleStructure.MatchString(t) {
			return
		}
		l.scan(op, t)
		if m := gradlePlugin.FindStringSubmatch(t); m != nil {
			l.dep(op, "plugin "+m[1], m[2])
			return
		}
		if m := gradleCatalogRef.FindStringSubmatch(t); m != nil {
			l.dep(op, m[1], "")
			return
		}
		if m := gradleCoordinate.FindStringSubmatch(t); m != nil {
			parts := strings.Split(m[1], ":")
			if len(parts) == 3 || len(parts) == 4 {
				l.dep(op, parts[0]+":"+parts[1], parts[2])
				return
			}
		}
		l.cannot(t)
	})
	return l.result()
}

// ---- Lockfiles ----

var (
	urlPattern  = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*)://([^\s"'<>,)\]}]*)`)
	lockSources = regexp.MustCompile(`\bgit@|(?:^|[^\w-])(?:file|link|portal|patch|exec|github|gitlab|bitbucket|git):`)
)

// lockfile returns a reader for a lockfile whose default registries are
// registries.
func lockfile(registries []string) func(*section, string) verdict {
	return func(s *section, file string) verdict {
		v := verdict{Dependencies, "edits the lockfile " + file}
		installScripts := 0
		changed(s, func(op byte, text string) {
			if strings.Contains(text, `"hasInstallScript": true`) {
				if op == '+' {
					installScripts++
				} else {
					installScripts--
				}
			}
			if op != '+' {
				return
			}
			if lockSources.MatchString(text) {
				v.raise(DependencySource, "locks a package from a git, file or link source")
			}
			for _, m := range urlPattern.FindAllStringSubmatch(text, -1) {
				if why := checkURL(m[1], m[2], registries); why != "" {
					v.raise(DependencySource, why)
				}
			}
		})
		if installScripts > 0 {
			v.raise(InstallHooks, "locks a package that runs install scripts")
		}
		return v
	}
}

// checkURL says why a locked URL is not from a default registry, or "".
func checkURL(scheme, rest string, registries []string) string {
	parts := strings.Split(strings.ToLower(scheme), "+")
	for _, p := range parts[:len(parts)-1] {
		if p != "registry" && p != "sparse" {
			return "locks a package from a " + scheme + " source"
		}
	}
	if parts[len(parts)-1] != "https" {
		return "locks a package over " + scheme
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
