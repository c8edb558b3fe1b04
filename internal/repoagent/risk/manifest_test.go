package risk

import (
	"strings"
	"testing"
	"time"
)

// TestManifests checks the manifest and lockfile readers on whole files:
// updates within a major version, majors, new dependencies and sources,
// hooks and release fields, and files they cannot read.
func TestManifests(t *testing.T) {
	mod := func(body string) string { return "module example.com/m\n\ngo 1.26\n" + body }
	cases := []struct {
		name, file, old, new string
		want                 Class
	}{
		// go.mod
		{"go version", "go.mod", mod(""), strings.Replace(mod(""), "1.26", "1.26.1", 1), Dependencies},
		{"go toolchain", "go.mod", mod(""), mod("toolchain go1.26.1\n"), Dependencies},
		{"go single-line require", "go.mod", mod("require github.com/a/b v1.2.3\n"), mod("require github.com/a/b v1.3.0\n"), Dependencies},
		{"go pseudo-version forward", "go.mod", mod("require github.com/a/b v0.0.0-20240101000000-abcdefabcdef\n"), mod("require github.com/a/b v0.0.0-20250101000000-abcdefabcdef\n"), Dependencies},
		{"go pseudo-version backward", "go.mod", mod("require github.com/a/b v0.0.0-20250101000000-abcdefabcdef\n"), mod("require github.com/a/b v0.0.0-20240101000000-abcdefabcdef\n"), DependencyMajor},
		{"gopkg.in major", "go.mod", mod("require gopkg.in/yaml.v2 v2.4.0\n"), mod("require gopkg.in/yaml.v3 v3.0.1\n"), DependencyMajor},
		{"go replace block", "go.mod", mod(""), mod("replace (\n\tgithub.com/a/b => github.com/evil/b v1.0.0\n)\n"), DependencySource},
		{"go replace removed", "go.mod", mod("replace github.com/a/b => ./b\n"), mod(""), DependencySource},
		{"go tool", "go.mod", mod(""), mod("tool golang.org/x/tools/cmd/stringer\n"), DependencySource},
		{"go retract", "go.mod", mod(""), mod("retract v1.0.0\n"), ReleasePublish},
		{"go unreadable", "go.mod", mod(""), mod("require github.com/a/b\n"), DependencySource},
		{"go module path change", "go.mod", "module github.com/a/b\n", "module github.com/c/d\n", DependencySource},
		{"go comment only", "go.mod", mod("require github.com/a/b v1.2.3\n"), mod("// a note\nrequire github.com/a/b v1.2.3 // why\n"), Dependencies},
		{"go.work use", "go.work", "go 1.26\n", "go 1.26\n\nuse ./tools\n", DependencySource},
		{"go.sum unreadable", "go.sum", "", "garbage\n", DependencySource},
		{"go.sum new version", "go.sum", "github.com/a/b v1.0.0 h1:AAAA=\n", "github.com/a/b v1.0.0 h1:AAAA=\ngithub.com/a/b v1.1.0 h1:BBBB=\n", Dependencies},

		// package.json
		{"npm engines", "package.json", pkgJSON(`"engines": {"node": ">=18"}`), pkgJSON(`"engines": {"node": ">=20"}`), DependencyMajor},
		{"npm prepare", "package.json", pkgJSON(`"scripts": {}`), pkgJSON(`"scripts": {"prepare": "husky"}`), InstallHooks},
		{"npm publishConfig", "package.json", pkgJSON(`"license": "MIT"`), pkgJSON(`"license": "MIT"`, `"publishConfig": {"access": "public"}`), ReleasePublish},
		{"npm overrides", "package.json", pkgJSON(`"overrides": {}`), pkgJSON(`"overrides": {"x": "1.0.0"}`), DependencySource},
		{"npm file dependency", "package.json", pkgJSON(`"dependencies": {}`), pkgJSON(`"dependencies": {"x": "file:../x"}`), DependencySource},
		{"npm alias", "package.json", pkgJSON(`"dependencies": {"x": "^1.0.0"}`), pkgJSON(`"dependencies": {"x": "npm:evil@^1.0.0"}`), DependencySource},
		{"npm tag", "package.json", pkgJSON(`"dependencies": {"x": "^1.0.0"}`), pkgJSON(`"dependencies": {"x": "latest"}`), DependencySource},
		{"npm two bounds", "package.json", pkgJSON(`"dependencies": {"x": "^1.0.0"}`), pkgJSON(`"dependencies": {"x": ">=1.0.0 <3"}`), DependencySource},
		{"npm description", "package.json", pkgJSON(`"description": "a"`), pkgJSON(`"description": "b"`), Dependencies},
		{"npm dependency named like a hook", "package.json", pkgJSON(`"dependencies": {}`), pkgJSON(`"dependencies": {"install": "^0.13.0"}`), DependencySource},
		{"npm files list", "package.json", pkgJSON(`"files": ["lib"]`), pkgJSON(`"files": ["lib", "dist"]`), ReleasePublish},
		{"npm reformatted", "package.json", pkgJSON(`"dependencies": {"a": "^1.0.0", "b": "^2.0.0"}`), "{\"dependencies\":{\"b\":\"^2.0.0\",\"a\":\"^1.0.0\"},\"name\":\"x\"}", Dependencies},
		{"npm duplicate key, last wins as in npm", "package.json", pkgJSON(`"scripts": {"test": "jest"}`), pkgJSON(`"scripts": {"test": "jest"}`, `"scripts": {"test": "true"}`), Verification},
		{"npm not an object", "package.json", pkgJSON(`"a": "b"`), "[]", DependencySource},

		// composer.json
		{"composer bump", "composer.json", `{"require": {"monolog/monolog": "^3.5"}}`, `{"require": {"monolog/monolog": "^3.6"}}`, Dependencies},
		{"composer hook", "composer.json", `{"scripts": {}}`, `{"scripts": {"post-install-cmd": "php x.php"}}`, InstallHooks},
		{"composer repositories", "composer.json", `{}`, `{"repositories": [{"type": "vcs", "url": "https://x"}]}`, DependencySource},

		// requirements
		{"pip marker and extras", "requirements-dev.txt", "uvicorn[standard]==0.29.0 ; python_version >= \"3.8\"\n", "uvicorn[standard]==0.29.1 ; python_version >= \"3.8\"\n", Dependencies},
		{"pip hashes", "requirements.txt", "x==1.0 \\\n    --hash=sha256:aaa\n", "x==1.0 \\\n    --hash=sha256:bbb\n", Dependencies},
		{"pip direct reference", "requirements.txt", "", "x @ https://example.com/x.whl\n", DependencySource},
		{"pip include", "requirements.txt", "", "-r other.txt\n", DependencySource},
		{"pip unpinned to pinned", "requirements.txt", "x\n", "x==1.0\n", DependencySource},
		{"pip pre-release tag", "requirements.txt", "x==1.0\n", "x==1.1rc1\n", DependencySource},
		{"pip comment", "requirements.txt", "x==1.0\n", "# pinned\nx==1.0  # why\n", Dependencies},

		// pyproject.toml
		{"pep 621 new dependency", "pyproject.toml", "[project]\ndependencies = []\n", "[project]\ndependencies = [\"evil>=1.0\"]\n", DependencySource},
		{"pep 621 multi-line array", "pyproject.toml", "[project]\ndependencies = [\n  \"httpx>=0.27.0\",\n]\n", "[project]\ndependencies = [\n  \"httpx>=0.27.2\",\n]\n", Dependencies},
		{"poetry dependency", "pyproject.toml", "[tool.poetry.dependencies]\nrequests = \"^2.31\"\n", "[tool.poetry.dependencies]\nrequests = \"^2.32\"\n", Dependencies},
		{"poetry git", "pyproject.toml", "[tool.poetry.dependencies]\n", "[tool.poetry.dependencies]\nx = { git = \"https://github.com/evil/x\" }\n", DependencySource},
		{"poetry source", "pyproject.toml", "[tool.poetry]\nname = \"x\"\n", "[tool.poetry]\nname = \"x\"\n[[tool.poetry.source]]\nname = \"evil\"\n", DependencySource},
		{"tool config", "pyproject.toml", "[tool.towncrier]\nx = 1\n", "[tool.towncrier]\nx = 2\n", Dependencies},
		{"build backend", "pyproject.toml", "[build-system]\nbuild-backend = \"a\"\n", "[build-system]\nbuild-backend = \"b\"\n", InstallHooks},
		{"hatch build hook", "pyproject.toml", "[tool.hatch]\n", "[tool.hatch.build.hooks.custom]\n", InstallHooks},
		{"uv index", "pyproject.toml", "[tool.uv]\n", "[[tool.uv.index]]\nurl = \"https://evil/simple\"\n", DependencySource},
		{"classifiers", "pyproject.toml", "[project]\nclassifiers = []\n", "[project]\nclassifiers = [\"Programming Language :: Python :: 3.13\"]\n", Dependencies},
		{"pyproject duplicate key", "pyproject.toml", "[project]\nname = \"x\"\n", "[project]\nname = \"x\"\nname = \"y\"\n", DependencySource},

		// Cargo.toml
		{"cargo dotted table", "Cargo.toml", "[dependencies.tokio]\nversion = \"1.37\"\n", "[dependencies.tokio]\nversion = \"1.38\"\n", Dependencies},
		{"cargo patch", "Cargo.toml", "", "[patch.crates-io]\nserde = { path = \"../serde\" }\n", DependencySource},
		{"cargo build script", "Cargo.toml", "[package]\nname = \"x\"\n", "[package]\nname = \"x\"\nbuild = \"build.rs\"\n", InstallHooks},
		{"cargo version", "Cargo.toml", "[package]\nversion = \"0.1.0\"\n", "[package]\nversion = \"0.2.0\"\n", ReleasePublish},
		{"cargo features", "Cargo.toml", "[features]\n", "[features]\nfast = [\"dep:simd\"]\n", Dependencies},
		{"cargo workspace dependency", "Cargo.toml", "[dependencies]\n", "[dependencies]\nserde = { workspace = true }\n", DependencySource},
		{"cargo target dependency", "Cargo.toml", "[target.'cfg(unix)'.dependencies]\nlibc = \"0.2.150\"\n", "[target.'cfg(unix)'.dependencies]\nlibc = \"0.2.155\"\n", Dependencies},

		// Pipfile, Gemfile, Maven, Gradle, catalog
		{"pipfile bump", "Pipfile", "[packages]\nflask = \"==3.0.0\"\n", "[packages]\nflask = \"==3.0.3\"\n", Dependencies},
		{"pipfile source", "Pipfile", "[packages]\n", "[packages]\n[[source]]\nurl = \"https://evil/simple\"\n", DependencySource},
		{"gem bump", "Gemfile", "gem \"rails\", \"~> 7.1.0\"\n", "gem \"rails\", \"~> 7.1.3\"\n", Dependencies},
		{"gem major", "Gemfile", "gem 'rails', '~> 7.1'\n", "gem 'rails', '~> 8.0'\n", DependencyMajor},
		{"gem git", "Gemfile", "", "gem 'x', github: 'evil/x'\n", DependencySource},
		{"gem source", "Gemfile", "source 'https://rubygems.org'\n", "source 'https://gems.evil'\n", DependencySource},
		{"gem group", "Gemfile", "gem 'a'\n", "group :test do\n  gem 'a'\nend\n", Dependencies},
		{"maven bump", "pom.xml", "<project><dependencies><dependency><groupId>g</groupId><artifactId>guava</artifactId><version>33.0.0-jre</version></dependency></dependencies></project>", "<project><dependencies><dependency><groupId>g</groupId><artifactId>guava</artifactId><version>33.2.1-jre</version></dependency></dependencies></project>", Dependencies},
		{"maven new artifact", "pom.xml", "<project><dependencies></dependencies></project>", "<project><dependencies><dependency><groupId>x</groupId><artifactId>evil</artifactId><version>1.0</version></dependency></dependencies></project>", DependencySource},
		{"maven property major", "pom.xml", "<project><properties><spring.version>5.3.30</spring.version></properties></project>", "<project><properties><spring.version>6.1.5</spring.version></properties></project>", DependencyMajor},
		{"maven repository", "pom.xml", "<project></project>", "<project><repositories><repository><url>https://evil</url></repository></repositories></project>", DependencySource},
		{"maven doctype", "pom.xml", "<project></project>", "<!DOCTYPE project [<!ENTITY x \"y\">]><project></project>", DependencySource},
		{"maven other namespace", "pom.xml", "<project></project>", "<project xmlns:e=\"urn:evil\"><e:build/></project>", DependencySource},
		{"maven pom namespace", "pom.xml", "<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><version>1</version></project>", "<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><version>2</version></project>", ReleasePublish},
		{"gradle bump", "build.gradle.kts", "dependencies {\n    implementation(\"com.squareup.okhttp3:okhttp:4.11.0\")\n}\n", "dependencies {\n    implementation(\"com.squareup.okhttp3:okhttp:4.12.0\")\n}\n", Dependencies},
		{"gradle repository", "build.gradle", "repositories {\n    mavenCentral()\n}\n", "repositories {\n    mavenCentral()\n    maven { url 'https://evil/maven' }\n}\n", DependencySource},
		{"gradle catalog reference", "build.gradle.kts", "dependencies {\n}\n", "dependencies {\n    implementation(libs.evil)\n}\n", DependencySource},
		{"gradle plugin bump", "build.gradle.kts", "plugins {\n    id(\"org.x\") version \"1.0.0\"\n}\n", "plugins {\n    id(\"org.x\") version \"1.0.1\"\n}\n", Dependencies},
		{"catalog bump", "gradle/libs.versions.toml", "[versions]\nkotlin = \"1.9.23\"\n", "[versions]\nkotlin = \"1.9.24\"\n", Dependencies},
		{"catalog new library", "gradle/libs.versions.toml", "[libraries]\n", "[libraries]\nevil = { module = \"x:evil\", version = \"1.0\" }\n", DependencySource},

		// Lockfiles
		{"cargo lock registry", "Cargo.lock",
			"[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
			"[[package]]\nname = \"serde\"\nversion = \"1.0.201\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"abc\"\n", Dependencies},
		{"cargo lock git", "Cargo.lock", "", "[[package]]\nname = \"x\"\nsource = \"git+https://github.com/evil/x?branch=main#abc\"\n", DependencySource},
		{"cargo lock registry look-alike", "Cargo.lock", "", "[[package]]\nname = \"x\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index-evil\"\n", DependencySource},
		{"poetry lock pypi", "poetry.lock", "", "[[package]]\nname = \"x\"\nfiles = [{file = \"x.whl\", hash = \"sha256:abc\"}]\nurl = \"https://files.pythonhosted.org/packages/x.whl\"\n", Dependencies},
		{"gemfile lock git", "Gemfile.lock", "GEM\n  remote: https://rubygems.org/\n", "GIT\n  remote: https://github.com/evil/x.git\nGEM\n  remote: https://rubygems.org/\n", DependencySource},
		{"npm lock over http", "package-lock.json", `{"packages": {}}`, `{"packages": {"node_modules/x": {"resolved": "http://registry.npmjs.org/x.tgz"}}}`, DependencySource},
		{"npm lock userinfo trick", "package-lock.json", `{"packages": {}}`, `{"packages": {"node_modules/x": {"resolved": "https://registry.npmjs.org@evil.example/x.tgz"}}}`, DependencySource},
		{"npm lock v1 nested git", "package-lock.json", `{"dependencies": {}}`, `{"dependencies": {"a": {"dependencies": {"b": {"version": "git+ssh://git@github.com/evil/b.git#abc"}}}}}`, DependencySource},
		{"npm lock unreadable", "package-lock.json", `{"packages": {}}`, `{"packages": `, DependencySource},
		{"pnpm lock link", "pnpm-lock.yaml", "lockfileVersion: '9.0'\n", "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      x:\n        version: link:../evil\n", DependencySource},
		{"pnpm lock registry", "pnpm-lock.yaml", "lockfileVersion: '9.0'\n", "lockfileVersion: '9.0'\npackages:\n  x@1.0.0:\n    resolution: {integrity: sha512-abc}\n", Dependencies},
		{"composer lock github", "composer.lock", `{"packages": []}`, `{"packages": [{"name": "a/b", "dist": {"url": "https://api.github.com/repos/a/b/zipball/abc"}}]}`, Dependencies},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := edit(tc.file, tc.old, tc.new)
			if tc.old == "" {
				f = add(tc.file, tc.new)
			}
			if r := f.classify(); r.Class != tc.want {
				t.Errorf("%s, want %s (%v)", r.Class, tc.want, r.Reasons)
			}
		})
	}
}

// TestNewAndDeletedManifests checks manifests created, deleted or copied
// whole.
func TestNewAndDeletedManifests(t *testing.T) {
	cases := []struct {
		name string
		fx   fx
		want Class
	}{
		{"new go.mod", add("tools/go.mod", "module example.com/tools\n\ngo 1.26\n\nrequire golang.org/x/tools v0.30.0\n"), DependencySource},
		{"deleted requirements", del("requirements-old.txt", "six==1.16.0\n"), Dependencies},
		{"new lockfile", add("web/package-lock.json", "{\n  \"lockfileVersion\": 3\n}\n"), Dependencies},
		{"copied manifest", cp("package.json", "web/package.json", pkgJSON()), DependencySource},
		{"deleted package.json with scripts", del("package.json", `{"scripts": {"test": "jest"}}`), Verification},
	}
	for _, tc := range cases {
		if r := tc.fx.classify(); r.Class != tc.want {
			t.Errorf("%s: %s, want %s (%v)", tc.name, r.Class, tc.want, r.Reasons)
		}
	}
}

func TestVersionChange(t *testing.T) {
	cases := []struct {
		old, new  string
		zeroMinor bool
		want      Class
	}{
		{"v1.2.3", "v1.2.4", false, Dependencies},
		{"v1.2.3", "v1.10.0", false, Dependencies},
		{"v1.10.0", "v1.9.0", false, DependencyMajor},
		{"v1.2.3", "v2.0.0", false, DependencyMajor},
		{"v2.0.0+incompatible", "v2.1.0+incompatible", false, Dependencies},
		{"v0.1.0", "v0.2.0", false, Dependencies},
		{"^0.1.0", "^0.2.0", true, DependencyMajor},
		{"^0.1.0", "^0.1.5", true, Dependencies},
		{"^1.2.3", "~1.2.4", true, Dependencies},
		{"1.2.x", "1.3.x", true, Dependencies},
		{"1.x", "2.x", true, DependencyMajor},
		{"1.0.0-rc.1", "1.0.0", true, Dependencies},
		{"1.0.0", "1.0.0-rc.1", true, DependencyMajor},
		{"1.0.0-alpha.2", "1.0.0-alpha.10", true, Dependencies},
		{"1.0.0-beta", "1.0.0-alpha", true, DependencyMajor},
		{"==2.31.0", "==2.32.0", true, Dependencies},
		{"~> 7.1", "~> 7.2", true, Dependencies},
		{"latest", "1.0.0", true, DependencySource},
		{"1.0.0", "*", true, DependencySource},
		{"1.0", "1.0.0.0.0", true, DependencySource},
		{"", "1.0", true, DependencySource},
		{"1.0", "1.0", true, Dependencies},
	}
	for _, tc := range cases {
		if got := versionChange("x", tc.old, tc.new, tc.zeroMinor); got.class != tc.want {
			t.Errorf("%q -> %q: %s (%s), want %s", tc.old, tc.new, got.class, got.reason, tc.want)
		}
	}
}

// TestHostileSizes checks that manifests built to cost the square of their
// size, or to nest without end, are read in reasonable time and are high:
// one requirement repeated on both sides (bounded by maxCompares), and deep
// nesting in each format the readers parse.
func TestHostileSizes(t *testing.T) {
	const n = 100_000
	cases := map[string]fx{
		"repeated requirement": edit("requirements.txt", strings.Repeat("x==1.0\n", n), strings.Repeat("x==2.0\n", n)),
		"deep json":            edit("package.json", "{}", strings.Repeat("[", n)),
		"deep json lockfile":   edit("package-lock.json", "{}", strings.Repeat("[", n)),
		"deep toml":            edit("Cargo.toml", "", "a = "+strings.Repeat("[", n)),
		"deep xml":             edit("pom.xml", "<project/>", "<project>"+strings.Repeat("<a>", n)),
		"deep yaml":            edit("pnpm-lock.yaml", "", strings.Repeat("[", n)),
		"deep gradle":          edit("build.gradle", "", strings.Repeat("a {\n", n)),
	}
	for name, f := range cases {
		start := time.Now()
		r := f.classify()
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		if !r.Class.HighImpact() {
			t.Errorf("%s: %s, want high", name, r.Class)
		}
	}
}
