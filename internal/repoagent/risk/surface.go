package risk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strings"
)

// The verification surface is what the repository's checks execute or read
// besides the code under test: build and task files, test runners'
// configuration and fixtures, package-manager scripts, Go's TestMain, build
// scripts, the checks' own programs when they live in the repository, and
// the configuration of the tools the checks run. A change to it can switch
// off the checks that judge it (a Makefile whose test target becomes
// `@echo skipped`, a TestMain that exits 0), so it is Verification, a
// high-impact class, and its File is marked Surface. Manifests mark the
// part of them that is surface (package.json's scripts, pyproject.toml's
// [tool.pytest...], Cargo.toml's test targets, a pom's build) in
// manifest.go.

// surfaceRules are the files that are always surface, whatever the checks
// are: a check may reach them through another (npm test runs make).
var surfaceRules = []pathRule{
	// Build and task files.
	{"makefile", Verification, "edits a Makefile, which the checks may run"},
	{"gnumakefile", Verification, "edits a Makefile, which the checks may run"},
	{"*.mk", Verification, "edits a Makefile, which the checks may run"},
	{"justfile", Verification, "edits a justfile, which the checks may run"},
	{".justfile", Verification, "edits a justfile, which the checks may run"},
	{"taskfile*.yml", Verification, "edits a Taskfile, which the checks may run"},
	{"taskfile*.yaml", Verification, "edits a Taskfile, which the checks may run"},
	{"magefile*.go", Verification, "edits a magefile, which the checks may run"},
	{"magefiles/**", Verification, "edits a magefile, which the checks may run"},
	{"rakefile", Verification, "edits a Rakefile, which the checks may run"},
	{"*.rake", Verification, "edits a rake task, which the checks may run"},
	{"build.rs", Verification, "edits a Cargo build script, which cargo test runs"},
	{"**/.cargo/**", Verification, "edits Cargo's settings (runners, flags), which cargo test reads"},
	{"**/.mvn/**", Verification, "edits Maven's settings, which the checks read"},
	{"mvnw", Verification, "edits the Maven wrapper, which the checks may run"},
	{"mvnw.cmd", Verification, "edits the Maven wrapper, which the checks may run"},
	{"gradlew", Verification, "edits the Gradle wrapper, which the checks may run"},
	{"gradlew.bat", Verification, "edits the Gradle wrapper, which the checks may run"},
	{"settings.gradle", Verification, "edits a Gradle build script"},
	{"settings.gradle.kts", Verification, "edits a Gradle build script"},
	{"gradle.properties", Verification, "edits Gradle's settings"},
	{"*.gradle", Verification, "edits a Gradle build script"},
	{"*.gradle.kts", Verification, "edits a Gradle build script"},
	{"/buildsrc/**", Verification, "edits Gradle's build logic"},
	{"build.xml", Verification, "edits an Ant build file"},
	{"cmakelists.txt", Verification, "edits a CMake build file"},
	{"*.cmake", Verification, "edits a CMake build file"},
	{"meson.build", Verification, "edits a Meson build file"},
	{"build", Verification, "edits a Bazel build file"},
	{"build.bazel", Verification, "edits a Bazel build file"},
	{"workspace", Verification, "edits a Bazel workspace"},
	{"workspace.bazel", Verification, "edits a Bazel workspace"},
	{"module.bazel", Verification, "edits a Bazel module"},
	{"*.bzl", Verification, "edits Bazel build logic"},
	{".bazelrc", Verification, "edits Bazel's settings"},

	// Python's test runners and their fixtures.
	{"tox.ini", Verification, "edits tox's configuration, which runs the tests"},
	{"noxfile.py", Verification, "edits a noxfile, which runs the tests"},
	{"pytest.ini", Verification, "edits pytest's configuration"},
	{".pytest.ini", Verification, "edits pytest's configuration"},
	{"conftest.py", Verification, "edits pytest fixtures and hooks, which every test below them loads"},
	{".coveragerc", Verification, "edits the coverage settings, which can decide whether the checks pass"},
	{"sitecustomize.py", Verification, "edits a module Python runs at start-up"},
	{"usercustomize.py", Verification, "edits a module Python runs at start-up"},

	// JavaScript and TypeScript test runners, their setup files, and the
	// transforms they apply to the code under test.
	{"jest.config.*", Verification, "edits Jest's configuration"},
	{"jest.setup*", Verification, "edits Jest's setup"},
	{"jest.preset.*", Verification, "edits Jest's configuration"},
	{"setuptests.*", Verification, "edits the tests' setup"},
	{"vitest.config.*", Verification, "edits Vitest's configuration"},
	{"vitest.workspace.*", Verification, "edits Vitest's configuration"},
	{"vitest.setup*", Verification, "edits Vitest's setup"},
	{"vite.config.*", Verification, "edits Vite's configuration, which Vitest reads"},
	{".mocharc*", Verification, "edits Mocha's configuration"},
	{"karma.conf.*", Verification, "edits Karma's configuration"},
	{"ava.config.*", Verification, "edits AVA's configuration"},
	{"playwright.config.*", Verification, "edits Playwright's configuration"},
	{"cypress.config.*", Verification, "edits Cypress's configuration"},
	{"cypress.json", Verification, "edits Cypress's configuration"},
	{".taprc", Verification, "edits tap's configuration"},
	{".nycrc*", Verification, "edits the coverage settings, which can decide whether the checks pass"},
	{".c8rc*", Verification, "edits the coverage settings, which can decide whether the checks pass"},
	{"babel.config.*", Verification, "edits Babel's configuration, which transforms the code the tests run"},
	{".babelrc*", Verification, "edits Babel's configuration, which transforms the code the tests run"},

	// Ruby, PHP.
	{".rspec", Verification, "edits RSpec's options"},
	{".rspec-local", Verification, "edits RSpec's options"},
	{".simplecov", Verification, "edits the coverage settings, which can decide whether the checks pass"},
	{"phpunit.xml", Verification, "edits PHPUnit's configuration"},
	{"phpunit.xml.dist", Verification, "edits PHPUnit's configuration"},
	{"phpunit.dist.xml", Verification, "edits PHPUnit's configuration"},
}

// toolRules are the configuration of tools: surface when a check runs the
// tool, or when a check runs a task runner or a repository program, which
// may run any of them.
var toolRules = []struct {
	tools    []string
	patterns []string
}{
	{[]string{"eslint"}, []string{"eslint.config.*", ".eslintrc*", ".eslintignore"}},
	{[]string{"prettier"}, []string{".prettierrc*", "prettier.config.*", ".prettierignore"}},
	{[]string{"tsc", "vue-tsc"}, []string{"tsconfig*.json", "jsconfig*.json"}},
	{[]string{"stylelint"}, []string{".stylelintrc*", "stylelint.config.*"}},
	{[]string{"biome"}, []string{"biome.json", "biome.jsonc"}},
	{[]string{"golangci-lint"}, []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"}},
	{[]string{"staticcheck"}, []string{"staticcheck.conf"}},
	{[]string{"ruff"}, []string{"ruff.toml", ".ruff.toml"}},
	{[]string{"flake8"}, []string{".flake8"}},
	{[]string{"pylint"}, []string{".pylintrc", "pylintrc"}},
	{[]string{"mypy", "dmypy"}, []string{"mypy.ini", ".mypy.ini"}},
	{[]string{"pyright", "basedpyright"}, []string{"pyrightconfig.json"}},
	{[]string{"rubocop"}, []string{".rubocop.yml", ".rubocop_todo.yml"}},
	{[]string{"cargo", "clippy-driver", "rustfmt"}, []string{"clippy.toml", ".clippy.toml", "rustfmt.toml", ".rustfmt.toml"}},
	{[]string{"shellcheck"}, []string{".shellcheckrc"}},
	{[]string{"yamllint"}, []string{".yamllint", ".yamllint.yml", ".yamllint.yaml"}},
	{[]string{"markdownlint", "markdownlint-cli2"}, []string{".markdownlint*"}},
	{[]string{"phpstan"}, []string{"phpstan.neon", "phpstan.neon.dist"}},
	{[]string{"phpcs"}, []string{"phpcs.xml", "phpcs.xml.dist", ".phpcs.xml"}},
}

// taskRunners run what the repository's files say (a Makefile's recipe, a
// package.json script): a check that runs one may reach any tool.
var taskRunners = []string{
	"make", "gmake", "just", "task", "npm", "yarn", "pnpm", "bun", "deno", "tox", "nox", "rake", "bundle",
	"gradle", "gradlew", "mvn", "mvnw", "ant", "composer", "poetry", "hatch", "pdm", "uv", "pipenv", "invoke",
	"doit", "mage", "bazel", "bazelisk", "cmake", "ctest", "meson", "ninja", "scons", "cargo-make", "lerna",
	"nx", "turbo",
}

// interpreters run the script they are given: its arguments that are
// repository files are programs the check runs.
var interpreters = []string{
	"sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs",
	"ruby", "perl", "php", "lua", "tclsh", "rscript", "pwsh", "powershell", "tsx", "ts-node", "jruby", "groovy",
	"deno", "bun", "java",
}

// fileOptions take a file the tool reads or runs as their value.
var fileOptions = []string{
	"-f", "--file", "--makefile", "--justfile", "--taskfile", "-c", "--config", "--config-file", "--rcfile",
	"--settings", "-exec", "--exec", "-r", "--require", "--import", "--loader", "--setup", "-s", "--settings-file",
}

// checkInfo is what the checks run, as far as the surface rules need it.
type checkInfo struct {
	files    map[pathKey]bool // repository files the checks run or name as files
	dirs     []pathKey        // package directories the checks run (go run ./cmd/x)
	tools    map[string]bool  // tools the checks name
	indirect bool             // a check runs a task runner or a repository program
}

// readChecks reads the checks' argvs.
func readChecks(checks [][]string) checkInfo {
	ci := checkInfo{files: map[pathKey]bool{}, tools: map[string]bool{}}
	for _, argv := range checks {
		if len(argv) == 0 {
			continue
		}
		prog := toolName(argv[0])
		if k, ok := repoPath(argv[0]); ok && strings.Contains(argv[0], "/") {
			ci.files[k], ci.indirect = true, true
		}
		if slices.Contains(taskRunners, prog) {
			ci.indirect = true
		}
		ci.tools[prog] = true
		if slices.Contains(interpreters, prog) || strings.HasPrefix(prog, "python") {
			ci.script(prog, argv[1:])
		}
		goRun := prog == "go" && len(argv) > 1 && argv[1] == "run"
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			ci.tools[toolName(a)] = true
			if opt, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(opt, "-") {
				if slices.Contains(fileOptions, opt) {
					ci.file(val)
				}
				continue
			}
			if slices.Contains(fileOptions, a) && i+1 < len(argv) {
				ci.file(argv[i+1])
				continue
			}
			if !goRun || strings.HasPrefix(a, "-") || i == 1 {
				continue
			}
			// go run: a package directory, or .go files.
			if strings.HasSuffix(a, ".go") {
				ci.file(a)
			} else if k, ok := repoPath(a); ok && (strings.HasPrefix(a, ".") || strings.Contains(a, "/")) {
				ci.dirs = append(ci.dirs, k)
			}
			ci.indirect = true
		}
	}
	delete(ci.tools, "")
	return ci
}

// script notes the script an interpreter runs: its first argument that is
// not an option, or the module after -m. What follows are the script's own
// arguments.
func (ci *checkInfo) script(prog string, args []string) {
	for i, a := range args {
		switch {
		case i == 0 && (a == "run" || a == "test") && (prog == "deno" || prog == "bun"):
		case a == "-m" && i+1 < len(args):
			ci.module(args[i+1])
			return
		case a == "-c" || a == "-e" || a == "--eval" || a == "-":
			return
		case strings.HasPrefix(a, "-"):
		default:
			if ci.file(a) {
				ci.indirect = true
			}
			return
		}
	}
}

// file notes a repository path a check names; false if it is not one.
func (ci *checkInfo) file(p string) bool {
	k, ok := repoPath(p)
	if ok {
		ci.files[k] = true
	}
	return ok
}

// module notes the files a Python module name may be (python -m a.b).
func (ci *checkInfo) module(m string) {
	if m == "" || strings.ContainsAny(m, `/\`) {
		return
	}
	base := strings.ReplaceAll(m, ".", "/")
	ci.file(base + ".py")
	ci.file(base + "/__init__.py")
	ci.file(base + "/__main__.py")
}

// toolName is how a program is named in the tool tables: the base name,
// folded, without a version (@v1.2), a Windows extension or a trailing
// version number (python3.12 stays python3.12; see interpreters).
func toolName(a string) string {
	a, _, _ = strings.Cut(a, "@")
	a = path.Base(string(keyOf(strings.ReplaceAll(a, `\`, "/"))))
	for _, ext := range []string{".exe", ".cmd", ".bat", ".js", ".mjs", ".cjs"} {
		a = strings.TrimSuffix(a, ext)
	}
	if a == "." || a == "/" {
		return ""
	}
	return a
}

// repoPath cleans a check's argument into a repository path, if it can be
// one: relative, inside the repository, not a go package pattern.
func repoPath(p string) (pathKey, bool) {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") || strings.Contains(p, "...") || strings.Contains(p, "://") {
		return "", false
	}
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || badPath(c) != "" {
		return "", false
	}
	return keyOf(c), true
}

// surfaceVerdict says whether a change touches the verification surface
// outside manifests: Verification with its reason, or nothing.
func surfaceVerdict(c fileChange, ci checkInfo) verdict {
	var v verdict
	var keys []pathKey
	for _, p := range []string{c.NewPath, c.OldPath} {
		if p != "" && badPath(p) == "" && (p == c.NewPath || c.Status == 'D' || c.Status == 'R') {
			keys = append(keys, keyOf(p))
		}
	}
	for _, k := range keys {
		for _, r := range surfaceRules {
			// A manifest (build.gradle) marks its own surface.
			if findManifest(k) == nil && matchPath(r.pattern, k) {
				v.raise(r.class, r.why)
			}
		}
		for _, t := range toolRules {
			if !ci.indirect && !slices.ContainsFunc(t.tools, func(s string) bool { return ci.tools[s] }) {
				continue
			}
			for _, p := range t.patterns {
				if matchPath(p, k) {
					v.raise(Verification, "edits the configuration of "+t.tools[0]+", which the checks may run")
				}
			}
		}
		if ci.files[k] {
			v.raise(Verification, "edits a program the checks run")
		}
		for _, d := range ci.dirs {
			if strings.HasPrefix(string(k), string(d)+"/") {
				v.raise(Verification, "edits a package the checks run (go run)")
			}
		}
		if base := path.Base(string(k)); base == "setup.cfg" {
			v.add(setupCfgSurface(c, ci))
		}
	}
	if p := c.path(); strings.HasSuffix(string(keyOf(p)), "_test.go") && isTestFile(p) && !c.binary {
		v.add(goTestMain(c))
	}
	return v
}

// goTestMain finds a TestMain or init function added, changed or removed in
// a Go test file: either decides whether and how the file's package's tests
// run (a TestMain that calls os.Exit(0) passes every test).
func goTestMain(c fileChange) verdict {
	olds, okOld := testMainFuncs(c.old)
	news, okNew := testMainFuncs(c.new)
	if !okOld || !okNew {
		return verdict{Verification, "a Go test file that does not parse, so its TestMain cannot be read"}
	}
	slices.Sort(olds)
	slices.Sort(news)
	if !slices.Equal(olds, news) {
		return verdict{Verification, "adds or changes TestMain or an init function in a test file, which decide whether the tests run"}
	}
	return verdict{}
}

// testMainFuncs returns the source of the top-level TestMain and init
// functions of a Go file; a side that does not exist has none.
func testMainFuncs(s side) ([]string, bool) {
	if !s.ok {
		return nil, true
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", s.data, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "TestMain" && fn.Name.Name != "init" {
			continue
		}
		start, end := fset.Position(fn.Pos()).Offset, fset.Position(fn.End()).Offset
		if start < 0 || end > len(s.data) || start > end {
			return nil, false
		}
		out = append(out, string(s.data[start:end]))
	}
	return out, true
}

// setupCfgSections are the sections of setup.cfg that test runners and
// tools read; the tool's name, or "" for always.
var setupCfgSections = map[string]string{
	"tool:pytest": "", "aliases": "", "test": "", "coverage:run": "", "coverage:report": "",
	"flake8": "flake8", "pycodestyle": "flake8", "mypy": "mypy", "pylint": "pylint", "isort": "isort",
}

// setupCfgSurface compares setup.cfg's sections that test runners and the
// checks' tools read.
func setupCfgSurface(c fileChange, ci checkInfo) verdict {
	olds, news := iniSections(c.old.data), iniSections(c.new.data)
	var v verdict
	for name := range mergeKeys(olds, news) {
		if olds[name] == news[name] {
			continue
		}
		base, _, _ := strings.Cut(name, "-") // [mypy-pkg.*]
		tool, ok := setupCfgSections[base]
		if !ok && strings.HasPrefix(name, "coverage:") {
			tool, ok = "", true
		}
		if ok && (tool == "" || ci.indirect || ci.tools[tool]) {
			v.raise(Verification, "edits setup.cfg's ["+name+"], which the checks read")
		}
	}
	return v
}

// iniSections reads an INI file into its sections' lines, without
// comments and blank lines; "" holds the lines before the first header.
func iniSections(data []byte) map[string]string {
	out := map[string]string{}
	name := ""
	for _, l := range lines(data) {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";"):
			continue
		case strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]"):
			name = strings.ToLower(strings.TrimSpace(t[1 : len(t)-1]))
			continue
		}
		out[name] += t + "\n"
	}
	return out
}

// mergeKeys returns the union of two maps' keys.
func mergeKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
