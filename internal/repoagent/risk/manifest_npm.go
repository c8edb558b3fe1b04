package risk

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"sort"
	"sync"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"
)

// jsonManifest describes a JSON manifest by its top-level keys.
type jsonManifest struct {
	depSections []string // objects whose entries are dependencies
	hooks       []string // scripts that run on install, pack or publish: InstallHooks
	release     []string // keys that decide what is published: ReleasePublish
	sources     []string // keys that redirect where dependencies come from: DependencySource
	benign      []string // metadata: Dependencies
	surface     []string // test runners' settings: Verification
	tools       map[string]string
}

var npmJSON = jsonManifest{
	depSections: []string{"dependencies", "devDependencies", "peerDependencies", "optionalDependencies", "engines"},
	hooks: []string{
		"preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare",
		"prepublish", "prepublishOnly", "prepack", "postpack", "dependencies",
	},
	release: []string{"version", "name", "private", "publishConfig", "files"},
	sources: []string{"overrides", "resolutions", "pnpm", "workspaces", "bundleDependencies", "bundledDependencies", "packageManager", "devEngines"},
	benign:  []string{"description", "keywords", "author", "contributors", "homepage", "license", "bugs", "funding", "repository", "displayName"},
	surface: []string{"jest", "ava", "mocha", "nyc", "c8", "tap", "babel", "vitest"},
	tools:   map[string]string{"eslintConfig": "eslint", "prettier": "prettier", "stylelint": "stylelint"},
}

var composerJSON = jsonManifest{
	depSections: []string{"require", "require-dev"},
	hooks: []string{
		"pre-install-cmd", "post-install-cmd", "pre-update-cmd", "post-update-cmd",
		"pre-autoload-dump", "post-autoload-dump", "post-root-package-install", "post-create-project-cmd",
		"pre-package-install", "post-package-install", "pre-package-update", "post-package-update",
		"pre-package-uninstall", "post-package-uninstall",
	},
	release: []string{"version", "name", "archive"},
	sources: []string{"repositories", "replace", "provide", "minimum-stability", "prefer-stable", "config"},
	benign:  []string{"description", "keywords", "homepage", "license", "authors", "support", "funding"},
	surface: []string{"autoload-dev"},
}

var packageName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[@A-Za-z0-9][@A-Za-z0-9._~/-]*$`) })

// maxJSONDepth bounds nesting in the JSON and TOML documents the readers
// walk.
const maxJSONDepth = 200

// decodeJSON decodes one JSON document, numbers kept as written; trailing
// data is an error.
func decodeJSON(data []byte) (any, error) {
	if err := jsonDepth(data); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON document")
	}
	return x, nil
}

// jsonDepth refuses a document nested deeper than maxJSONDepth.
func jsonDepth(data []byte) error {
	depth, inStr := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			if depth++; depth > maxJSONDepth {
				return errors.New("nested too deep")
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// tomlDepth refuses a TOML document whose arrays and inline tables nest
// deeper than maxJSONDepth. It reads strings as TOML writes them on one
// line, and errs towards refusing.
func tomlDepth(data []byte) error {
	depth := 0
	var quote byte
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote || c == '\n' {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			if depth++; depth > maxJSONDepth {
				return errors.New("nested too deep")
			}
		case c == ']' || c == '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

func (m jsonManifest) read(data []byte) (*facts, error) {
	x, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	top, ok := x.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	f := newFacts()
	for key, val := range top {
		switch {
		case slices.Contains(m.depSections, key):
			deps, ok := val.(map[string]any)
			if !ok {
				f.cannot(key, canon(val))
				continue
			}
			for name, req := range deps {
				s, ok := req.(string)
				if !ok || !packageName().MatchString(name) {
					f.cannot(key+"."+name, canon(req))
					continue
				}
				if key == "engines" {
					name = "engine " + name
				}
				f.dep(name, s)
			}
		case key == "scripts":
			scripts, ok := val.(map[string]any)
			if !ok {
				f.set("scripts", canon(val), Verification, "changes the scripts, which the checks may run")
				continue
			}
			for name, cmd := range scripts {
				f.set("script "+name, canon(cmd), Verification, "changes the "+clip(name)+" script, which the checks may run")
				if slices.Contains(m.hooks, name) {
					f.set("hook "+name, canon(cmd), InstallHooks, "changes the "+clip(name)+" script, which runs on install or publish")
				}
			}
		case slices.Contains(m.release, key):
			f.set(key, canon(val), ReleasePublish, "changes "+key+", which decides what is published")
		case slices.Contains(m.sources, key):
			f.set(key, canon(val), DependencySource, "changes "+key+", which redirects dependencies")
		case slices.Contains(m.benign, key):
			f.set(key, canon(val), Dependencies, "changes "+key)
		case slices.Contains(m.surface, key):
			f.set(key, canon(val), Verification, "changes "+key+", which the tests run by")
		case m.tools[key] != "":
			f.setTool(key, canon(val), Config, "changes "+key, m.tools[key])
		default:
			f.set(key, canon(val), DependencySource, "changes "+clip(key)+", which the rules cannot read")
		}
	}
	return f, nil
}

// ---- Lockfiles as documents ----

// compareNpmLock reads package-lock.json and npm-shrinkwrap.json: every
// new string as for any lockfile, and each package entry that is new or
// changed: a link to a directory or a resolved place that is not the
// registry is DependencySource, install scripts InstallHooks.
func compareNpmLock(old, new []byte) verdict {
	o, errO := decodeJSON(old)
	n, errN := decodeJSON(new)
	if len(old) == 0 {
		o, errO = map[string]any{}, nil
	}
	if len(new) == 0 {
		n, errN = map[string]any{}, nil
	}
	if errO != nil || errN != nil {
		return verdict{DependencySource, "a lockfile the rules cannot read"}
	}
	v := checkStrings(jsonStrings(o), jsonStrings(n), npmRegistries)
	op, np := npmPackages(o), npmPackages(n)
	keys := make([]string, 0, len(np))
	for k := range np {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := np[k]
		if canon(op[k]) == canon(e) {
			continue
		}
		if e["link"] == true {
			v.raise(DependencySource, "locks a package as a link to a directory")
		}
		if r, ok := e["resolved"].(string); ok {
			if loc := urlPattern().FindStringSubmatchIndex(r); loc == nil || loc[0] != 0 {
				v.raise(DependencySource, "locks a package from "+clip(r)+", which is not the registry")
			} else if why := checkURL(r[loc[2]:loc[3]], r[loc[4]:loc[5]], npmRegistries); why != "" {
				v.raise(DependencySource, why)
			}
		}
		if e["hasInstallScript"] == true && op[k]["hasInstallScript"] != true {
			v.raise(InstallHooks, "locks a package that runs install scripts")
		}
	}
	return v
}

// npmPackages returns a lockfile's package entries: "packages" (lockfile
// versions 2 and 3) and "dependencies" (version 1, nested), by path.
func npmPackages(doc any) map[string]map[string]any {
	out := map[string]map[string]any{}
	top, _ := doc.(map[string]any)
	if pk, ok := top["packages"].(map[string]any); ok {
		for k, e := range pk {
			if m, ok := e.(map[string]any); ok {
				out["packages "+k] = m
			}
		}
	}
	var walk func(prefix string, deps map[string]any, depth int)
	walk = func(prefix string, deps map[string]any, depth int) {
		if depth > maxJSONDepth {
			return
		}
		for k, e := range deps {
			if m, ok := e.(map[string]any); ok {
				out[prefix+"/"+k] = m
				if sub, ok := m["dependencies"].(map[string]any); ok {
					walk(prefix+"/"+k, sub, depth+1)
				}
			}
		}
	}
	if deps, ok := top["dependencies"].(map[string]any); ok {
		walk("dependencies", deps, 0)
	}
	return out
}

// jsonStrings returns every string in a decoded document, keys included.
func jsonStrings(x any) []string {
	var out []string
	var walk func(x any, depth int)
	walk = func(x any, depth int) {
		if depth > maxJSONDepth {
			return
		}
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				walk(e, depth+1)
			}
		case []map[string]any:
			for _, e := range t {
				walk(e, depth+1)
			}
		case map[string]any:
			for k, e := range t {
				out = append(out, k)
				walk(e, depth+1)
			}
		}
	}
	walk(x, 0)
	return out
}

// lockJSON reads a JSON lockfile: the new strings against registries.
func lockJSON(registries []string) func(old, new []byte) verdict {
	return lockDoc(registries, decodeJSON)
}

// lockTOML reads a TOML lockfile.
func lockTOML(registries []string) func(old, new []byte) verdict {
	return lockDoc(registries, decodeTOML)
}

// lockYAML reads a YAML lockfile (pnpm-lock.yaml).
func lockYAML(registries []string) func(old, new []byte) verdict {
	return func(old, new []byte) verdict {
		o, errO := yamlStrings(old)
		n, errN := yamlStrings(new)
		if errO != nil || errN != nil {
			return verdict{DependencySource, "a lockfile the rules cannot read"}
		}
		v := checkStrings(o, n, registries)
		if installScripts(lines(old)) < installScripts(lines(new)) {
			v.raise(InstallHooks, "locks a package that runs install scripts")
		}
		return v
	}
}

func lockDoc(registries []string, decode func([]byte) (any, error)) func(old, new []byte) verdict {
	return func(old, new []byte) verdict {
		var docs [2]any
		for i, data := range [][]byte{old, new} {
			if len(data) == 0 {
				continue
			}
			x, err := decode(data)
			if err != nil {
				return verdict{DependencySource, "a lockfile the rules cannot read"}
			}
			docs[i] = x
		}
		v := checkStrings(jsonStrings(docs[0]), jsonStrings(docs[1]), registries)
		if installScripts(lines(old)) < installScripts(lines(new)) {
			v.raise(InstallHooks, "locks a package that runs install scripts")
		}
		return v
	}
}

// decodeTOML decodes a TOML document into maps, arrays and values.
func decodeTOML(data []byte) (any, error) {
	if err := tomlDepth(data); err != nil {
		return nil, err
	}
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// yamlStrings returns every scalar of a YAML document, keys included.
// Aliases are refused: each would be walked again.
func yamlStrings(data []byte) ([]string, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []string
	var walk func(n *yaml.Node, depth int) error
	walk = func(n *yaml.Node, depth int) error {
		if depth > maxJSONDepth {
			return errors.New("nested too deep")
		}
		switch n.Kind {
		case yaml.AliasNode:
			return errors.New("an alias")
		case yaml.ScalarNode:
			out = append(out, n.Value)
		}
		for _, c := range n.Content {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(&doc, 0)
}
