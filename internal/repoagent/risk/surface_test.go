package risk

import (
	"testing"
)

// TestVerificationSurface checks the verification-surface class: a change to
// what the checks execute or read is Verification and its file Surface,
// across languages; a change next to it that the checks do not read is
// not. The first three are issue 13's: each was applied with "Checks:
// passed".
func TestVerificationSurface(t *testing.T) {
	goTest := [][]string{{"go", "test", "./..."}}
	cases := []struct {
		name    string
		fx      fx
		checks  [][]string
		want    Class
		surface bool
	}{
		{"a new main_test.go whose TestMain exits 0", add("main_test.go", text("package m", "", `import "os"`, `import "testing"`, "", "func TestMain(m *testing.M) { os.Exit(0) }")), goTest, Verification, true},
		{"a Makefile test target that skips", edit("Makefile", "test:\n\tgo test ./...\n", "test:\n\t@echo skipped\n"), [][]string{{"make", "test"}}, Verification, true},
		{"package.json scripts.test rewritten", edit("package.json", pkgJSON(`"scripts": {"test": "jest"}`), pkgJSON(`"scripts": {"test": "exit 0"}`)), [][]string{{"npm", "test"}}, Verification, true},
		{"a dependency bump in package.json", edit("package.json",
			pkgJSON(`"scripts": {"test": "jest"}`, `"devDependencies": {"jest": "^29.6.0"}`),
			pkgJSON(`"scripts": {"test": "jest"}`, `"devDependencies": {"jest": "^29.7.0"}`)), [][]string{{"npm", "test"}}, Dependencies, false},

		// Go
		{"TestMain changed in an existing test file", edit("x_test.go",
			text("package x", "func TestMain(m *testing.M) { os.Exit(m.Run()) }"),
			text("package x", "func TestMain(m *testing.M) { m.Run(); os.Exit(0) }")), goTest, Verification, true},
		{"an init in a test file", add("pkg/z_test.go", text("package pkg", `import "os"`, "func init() { os.Exit(0) }")), goTest, Verification, true},
		{"a test file with only tests", add("pkg/y_test.go", text("package pkg", `import "testing"`, "func TestY(t *testing.T) {}")), goTest, Tests, false},
		{"TestMain in test data is not compiled", add("pkg/testdata/t_test.go", text("package t", "func TestMain(m *testing.M) {}")), goTest, Tests, false},
		{"a magefile", add("magefile.go", text("//go:build mage", "package main")), nil, Verification, true},
		{"the package a check runs", oneLine("cmd/check/main.go"), [][]string{{"go", "run", "./cmd/check"}}, Verification, true},
		{"another package", oneLine("cmd/other/main.go"), [][]string{{"go", "run", "./cmd/check"}}, Code, false},

		// Build and task files
		{"a justfile", oneLine("justfile"), nil, Verification, true},
		{"a Taskfile", oneLine("Taskfile.yml"), nil, Verification, true},
		{"a make include", oneLine("build/test.mk"), nil, Verification, true},
		{"a Rakefile", oneLine("Rakefile"), nil, Verification, true},
		{"a CMake file", oneLine("CMakeLists.txt"), nil, Verification, true},
		{"a Bazel build file", oneLine("pkg/BUILD.bazel"), nil, Verification, true},

		// Python
		{"tox.ini", oneLine("tox.ini"), nil, Verification, true},
		{"a noxfile", oneLine("noxfile.py"), nil, Verification, true},
		{"pytest.ini", oneLine("pytest.ini"), nil, Verification, true},
		{"conftest.py deep in the tree", add("src/pkg/sub/conftest.py", "import pytest\n"), nil, Verification, true},
		{"pyproject's pytest options", edit("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n", "[tool.pytest.ini_options]\naddopts = \"-q -k nothing\"\n"), nil, Verification, true},
		{"pyproject's ruff settings, checks not running ruff", edit("pyproject.toml", "[tool.ruff]\nline-length = 88\n", "[tool.ruff]\nline-length = 100\n"), goTest, Dependencies, false},
		{"pyproject's ruff settings, checks running ruff", edit("pyproject.toml", "[tool.ruff]\nline-length = 88\n", "[tool.ruff]\nline-length = 100\n"), [][]string{{"ruff", "check", "."}}, Verification, true},
		{"pyproject's entry points (pytest plugins)", edit("pyproject.toml", "[project]\nname = \"x\"\n", "[project]\nname = \"x\"\n[project.entry-points.pytest11]\nx = \"x.plugin\"\n"), nil, Verification, true},
		{"pyproject's dependency bump", edit("pyproject.toml", "[project]\ndependencies = [\"httpx>=0.27.0\"]\n", "[project]\ndependencies = [\"httpx>=0.27.2\"]\n"), nil, Dependencies, false},
		{"setup.cfg's pytest section", edit("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n", "[metadata]\nname = x\n[tool:pytest]\naddopts = -q -x --co\n"), nil, InstallHooks, true},
		{"setup.cfg's metadata", edit("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n", "[metadata]\nname = y\n[tool:pytest]\naddopts = -q\n"), nil, InstallHooks, false},
		{"the module a check runs", oneLine("tools/check.py"), [][]string{{"python3", "-m", "tools.check"}}, Verification, true},
		{"the script a check runs", oneLine("scripts/check.sh"), [][]string{{"bash", "scripts/check.sh"}}, Verification, true},
		{"a check that is a repository program", oneLine("scripts/test"), [][]string{{"./scripts/test"}}, Verification, true},
		{"a test harness under tests/ that a check runs", oneLine("tests/run.sh"), [][]string{{"sh", "./tests/run.sh"}}, Verification, true},

		// JavaScript and TypeScript
		{"jest config", oneLine("jest.config.js"), nil, Verification, true},
		{"vitest config", oneLine("web/vitest.config.ts"), nil, Verification, true},
		{"mocha options", oneLine(".mocharc.yml"), nil, Verification, true},
		{"karma config", oneLine("karma.conf.js"), nil, Verification, true},
		{"ava config", oneLine("ava.config.mjs"), nil, Verification, true},
		{"playwright config", oneLine("playwright.config.ts"), nil, Verification, true},
		{"cypress config", oneLine("cypress.config.ts"), nil, Verification, true},
		{"package.json jest key", edit("package.json", pkgJSON(`"jest": {"testMatch": ["**/*.test.js"]}`), pkgJSON(`"jest": {"testMatch": []}`)), nil, Verification, true},
		{"eslint config, checks not running eslint", oneLine(".eslintrc.json"), goTest, Config, false},
		{"eslint config, checks running eslint", oneLine(".eslintrc.json"), [][]string{{"npx", "eslint", "."}}, Verification, true},
		{"eslint config, checks running make", oneLine("eslint.config.js"), [][]string{{"make", "lint"}}, Verification, true},
		{"tsconfig, checks running tsc", oneLine("tsconfig.json"), [][]string{{"npx", "tsc", "--noEmit"}}, Verification, true},

		// Rust
		{"build.rs", oneLine("build.rs"), nil, InstallHooks, true},
		{"Cargo.toml test target without a harness", edit("Cargo.toml", "[package]\nname = \"x\"\n", "[package]\nname = \"x\"\n\n[[test]]\nname = \"all\"\nharness = false\n"), nil, Verification, true},
		{"Cargo.toml autotests off", edit("Cargo.toml", "[package]\nname = \"x\"\n", "[package]\nname = \"x\"\nautotests = false\n"), nil, Verification, true},
		{"Cargo.toml dependency bump", edit("Cargo.toml", "[dependencies]\nserde = \"1.0.190\"\n", "[dependencies]\nserde = \"1.0.200\"\n"), nil, Dependencies, false},
		{"cargo settings", oneLine(".cargo/config.toml"), nil, DependencySource, true},

		// Java
		{"pom surefire skipTests", edit("pom.xml",
			"<project><dependencies/><build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin></plugins></build></project>",
			"<project><dependencies/><build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version><configuration><skipTests>true</skipTests></configuration></plugin></plugins></build></project>"), nil, Verification, true},
		{"pom skipTests property", edit("pom.xml", "<project><properties></properties></project>", "<project><properties><skipTests>true</skipTests></properties></project>"), nil, Verification, true},
		{"pom plugin version bump", edit("pom.xml",
			"<project><build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin></plugins></build></project>",
			"<project><build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.6</version></plugin></plugins></build></project>"), nil, Dependencies, false},
		{"gradle test block", edit("build.gradle", text("dependencies {", "    testImplementation 'junit:junit:4.13.2'", "}"), text("dependencies {", "    testImplementation 'junit:junit:4.13.2'", "}", "test {", "    exclude '**/*'", "}")), nil, Verification, true},
		{"gradle dependency bump", edit("build.gradle", text("dependencies {", "    testImplementation 'junit:junit:4.13.1'", "}"), text("dependencies {", "    testImplementation 'junit:junit:4.13.2'", "}")), nil, Dependencies, false},
		{"a Gradle script applied by the build", oneLine("gradle/test.gradle"), nil, Verification, true},

		// Ruby, PHP
		{".rspec", oneLine(".rspec"), nil, Verification, true},
		{"phpunit.xml", oneLine("phpunit.xml"), nil, Verification, true},
		{"composer test script", edit("composer.json", `{"scripts": {"test": "phpunit"}}`, `{"scripts": {"test": "true"}}`), nil, Verification, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.fx.classify(tc.checks...)
			if r.Class != tc.want {
				t.Errorf("class %s, want %s (%q)", r.Class, tc.want, r.Reasons)
			}
			if len(r.Files) != 1 || r.Files[0].Surface != tc.surface {
				t.Errorf("files %+v, want Surface %v", r.Files, tc.surface)
			}
		})
	}
}

// TestTestFlag checks File.Test: a test file or test data on either side of
// the change, by the same rules as the Tests class.
func TestTestFlag(t *testing.T) {
	cases := []struct {
		fx   fx
		want bool
	}{
		{oneLine("a_test.go"), true},
		{oneLine("x/testdata/golden.json"), true},
		{oneLine("tests/test_a.py"), true},
		{oneLine("src/a.spec.ts"), true},
		{oneLine("spec/a_spec.rb"), true},
		{oneLine("src/test/java/ATest.java"), true},
		{oneLine("conftest.py"), true},
		{ren("a_test.go", "a.go", "package a\n"), true},
		{ren("a.go", "a_test.go", "package a\n"), true},
		{oneLine("a.go"), false},
		{oneLine("Makefile"), false},
	}
	for _, tc := range cases {
		if got := tc.fx.classify().Files[0]; got.Test != tc.want {
			t.Errorf("%s -> %s: Test %v, want %v", got.OldPath, got.Path, got.Test, tc.want)
		}
	}
}

// TestReadChecks checks what the surface rules take from the checks.
func TestReadChecks(t *testing.T) {
	ci := readChecks([][]string{
		{"./scripts/test.sh", "--fast"},
		{"python3", "-m", "tools.check", "tests/"},
		{"go", "run", "./cmd/lint", "./..."},
		{"go", "test", "-exec", "./bin/wrap", "./..."},
		{"make", "-f", "ci.mk", "test"},
		{"npx", "eslint@9", "--config=conf/eslint.js", "."},
		{"/usr/bin/env"},
		{"node", "../outside.js"},
	})
	for _, p := range []string{"scripts/test.sh", "tools/check.py", "tools/check/__main__.py", "bin/wrap", "ci.mk", "conf/eslint.js"} {
		if !ci.files[keyOf(p)] {
			t.Errorf("%s is not a file the checks run or read", p)
		}
	}
	for _, p := range []string{"tests", "test", "--fast", "../outside.js", "outside.js", "usr/bin/env"} {
		if ci.files[keyOf(p)] {
			t.Errorf("%s is taken for a file the checks run", p)
		}
	}
	if len(ci.dirs) != 1 || ci.dirs[0] != "cmd/lint" {
		t.Errorf("dirs %q, want cmd/lint", ci.dirs)
	}
	if !ci.tools["eslint"] || !ci.indirect {
		t.Errorf("tools %v, indirect %v", ci.tools, ci.indirect)
	}
	if direct := readChecks([][]string{{"go", "test", "./..."}, {"golangci-lint", "run"}}); direct.indirect || !direct.tools["golangci-lint"] {
		t.Errorf("go test and golangci-lint: %+v", direct)
	}
}
