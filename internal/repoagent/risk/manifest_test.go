package risk

import "testing"

// TestManifests checks the manifest and lockfile readers line by line:
// updates within a major version, majors, new dependencies and sources,
// hooks and release fields, and lines they cannot read.
func TestManifests(t *testing.T) {
	cases := []struct {
		name, file string
		lines      []string
		want       Class
	}{
		// go.mod
		{"go version", "go.mod", []string{"-go 1.25", "+go 1.26"}, Dependencies},
		{"go toolchain", "go.mod", []string{"+toolchain go1.26.1"}, Dependencies},
		{"go single-line require", "go.mod", []string{"-require github.com/a/b v1.2.3", "+require github.com/a/b v1.3.0"}, Dependencies},
		{"go pseudo-version forward", "go.mod", []string{"-\tgithub.com/a/b v0.0.0-20240101000000-abcdefabcdef", "+\tgithub.com/a/b v0.0.0-20250101000000-abcdefabcdef"}, Dependencies},
		{"go pseudo-version backward", "go.mod", []string{"-\tgithub.com/a/b v0.0.0-20250101000000-abcdefabcdef", "+\tgithub.com/a/b v0.0.0-20240101000000-abcdefabcdef"}, DependencyMajor},
		{"gopkg.in major", "go.mod", []string{"-\tgopkg.in/yaml.v2 v2.4.0", "+\tgopkg.in/yaml.v3 v3.0.1"}, DependencyMajor},
		{"go replace block", "go.mod", []string{"+replace (", "+\tgithub.com/a/b => github.com/evil/b v1.0.0", "+)"}, DependencySource},
		{"go replace line in a block out of view", "go.mod", []string{"+\tgithub.com/a/b v1.0.0 => ./b"}, DependencySource},
		{"go tool", "go.mod", []string{"+tool golang.org/x/tools/cmd/stringer"}, DependencySource},
		{"go retract", "go.mod", []string{"+retract v1.0.0"}, ReleasePublish},
		{"go unreadable", "go.mod", []string{"+\tgithub.com/a/b"}, DependencySource},
		{"go module path change", "go.mod", []string{"-module github.com/a/b", "+module github.com/c/d"}, DependencySource},
		{"go.work use", "go.work", []string{"+use ./tools"}, DependencySource},
		{"go.sum unreadable", "go.sum", []string{"+garbage"}, DependencySource},

		// package.json
		{"npm engines in view", "package.json", []string{"   \"engines\": {", "-    \"node\": \">=18\"", "+    \"node\": \">=20\""}, DependencyMajor},
		{"npm script other than a hook", "package.json", []string{"   \"scripts\": {", "-    \"test\": \"jest\"", "+    \"test\": \"jest --ci\""}, Dependencies},
		{"npm prepare out of view", "package.json", []string{"+    \"prepare\": \"husky\","}, InstallHooks},
		{"npm publishConfig", "package.json", []string{"+  \"publishConfig\": {", "+    \"access\": \"public\"", "+  },"}, ReleasePublish},
		{"npm overrides", "package.json", []string{"   \"overrides\": {", "+    \"x\": \"1.0.0\""}, DependencySource},
		{"npm file dependency", "package.json", []string{"+    \"x\": \"file:../x\","}, DependencySource},
		{"npm alias", "package.json", []string{"-    \"x\": \"^1.0.0\",", "+    \"x\": \"npm:evil@^1.0.0\","}, DependencySource},
		{"npm tag", "package.json", []string{"-    \"x\": \"^1.0.0\",", "+    \"x\": \"latest\","}, DependencySource},
		{"npm two bounds", "package.json", []string{"   \"dependencies\": {", "-    \"x\": \"^1.0.0\",", "+    \"x\": \">=1.0.0 <3\","}, DependencySource},
		{"npm description", "package.json", []string{"-  \"description\": \"a\",", "+  \"description\": \"b\","}, Dependencies},
		{"npm dependency named like a hook in deps", "package.json", []string{"   \"dependencies\": {", "+    \"install\": \"^0.13.0\","}, DependencySource},
		{"npm new dependencies object", "package.json", []string{"+  \"dependencies\": {", "+    \"x\": \"^1.0.0\"", "+  },"}, DependencySource},
		{"npm files list", "package.json", []string{"   \"files\": [", "+    \"dist\","}, ReleasePublish},

		// composer.json
		{"composer bump", "composer.json", []string{"   \"require\": {", "-    \"monolog/monolog\": \"^3.5\",", "+    \"monolog/monolog\": \"^3.6\","}, Dependencies},
		{"composer hook", "composer.json", []string{"   \"scripts\": {", "+    \"post-install-cmd\": \"php x.php\""}, InstallHooks},
		{"composer repositories", "composer.json", []string{"+  \"repositories\": [", "+    {\"type\": \"vcs\", \"url\": \"https://x\"}", "+  ],"}, DependencySource},

		// requirements
		{"pip marker and extras", "requirements-dev.txt", []string{"-uvicorn[standard]==0.29.0 ; python_version >= \"3.8\"", "+uvicorn[standard]==0.29.1 ; python_version >= \"3.8\""}, Dependencies},
		{"pip hashes", "requirements.txt", []string{"-    --hash=sha256:aaa", "+    --hash=sha256:bbb"}, Dependencies},
		{"pip direct reference", "requirements.txt", []string{"+x @ https://example.com/x.whl"}, DependencySource},
		{"pip include", "requirements.txt", []string{"+-r other.txt"}, DependencySource},
		{"pip unpinned to pinned", "requirements.txt", []string{"-x", "+x==1.0"}, DependencySource},
		{"pip pre-release tag", "requirements.txt", []string{"-x==1.0", "+x==1.1rc1"}, DependencySource},

		// pyproject.toml
		{"pep 621 dependency bump", "pyproject.toml", []string{" dependencies = [", "-  \"httpx>=0.27.0\",", "+  \"httpx>=0.27.2\","}, Dependencies},
		{"pep 621 new dependency", "pyproject.toml", []string{" [project]", " dependencies = [", "+  \"evil>=1.0\","}, DependencySource},
		{"poetry dependency", "pyproject.toml", []string{" [tool.poetry.dependencies]", "-requests = \"^2.31\"", "+requests = \"^2.32\""}, Dependencies},
		{"poetry git", "pyproject.toml", []string{" [tool.poetry.dependencies]", "+x = { git = \"https://github.com/evil/x\" }"}, DependencySource},
		{"poetry source", "pyproject.toml", []string{"+[[tool.poetry.source]]", "+name = \"evil\""}, DependencySource},
		{"tool config", "pyproject.toml", []string{" [tool.ruff]", "-line-length = 88", "+line-length = 100"}, Dependencies},
		{"tool config out of view", "pyproject.toml", []string{"-line-length = 88", "+line-length = 100"}, DependencySource},
		{"build backend", "pyproject.toml", []string{" [build-system]", "-build-backend = \"a\"", "+build-backend = \"b\""}, InstallHooks},
		{"hatch build hook", "pyproject.toml", []string{"+[tool.hatch.build.hooks.custom]"}, InstallHooks},
		{"classifiers", "pyproject.toml", []string{" [project]", " classifiers = [", "+  \"Programming Language :: Python :: 3.13\","}, Dependencies},

		// Cargo.toml
		{"cargo dotted table", "Cargo.toml", []string{" [dependencies.tokio]", "-version = \"1.37\"", "+version = \"1.38\""}, Dependencies},
		{"cargo patch", "Cargo.toml", []string{"+[patch.crates-io]", "+serde = { path = \"../serde\" }"}, DependencySource},
		{"cargo build script", "Cargo.toml", []string{" [package]", "+build = \"build.rs\""}, InstallHooks},
		{"cargo version", "Cargo.toml", []string{" [package]", "-version = \"0.1.0\"", "+version = \"0.2.0\""}, ReleasePublish},
		{"cargo features", "Cargo.toml", []string{" [features]", "+fast = [\"dep:simd\"]"}, Dependencies},
		{"cargo workspace dependency", "Cargo.toml", []string{" [dependencies]", "+serde = { workspace = true }"}, DependencySource},

		// Pipfile, Gemfile, Maven, Gradle
		{"pipfile bump", "Pipfile", []string{" [packages]", "-flask = \"==3.0.0\"", "+flask = \"==3.0.3\""}, Dependencies},
		{"pipfile source", "Pipfile", []string{"+[[source]]", "+url = \"https://evil/simple\""}, DependencySource},
		{"gem bump", "Gemfile", []string{"-gem \"rails\", \"~> 7.1.0\"", "+gem \"rails\", \"~> 7.1.3\""}, Dependencies},
		{"gem major", "Gemfile", []string{"-gem 'rails', '~> 7.1'", "+gem 'rails', '~> 8.0'"}, DependencyMajor},
		{"gem git", "Gemfile", []string{"+gem 'x', github: 'evil/x'"}, DependencySource},
		{"gem source", "Gemfile", []string{"-source 'https://rubygems.org'", "+source 'https://gems.evil'"}, DependencySource},
		{"gem group", "Gemfile", []string{"+group :test do", "+end"}, Dependencies},
		{"maven bump", "pom.xml", []string{"       <artifactId>guava</artifactId>", "-      <version>33.0.0-jre</version>", "+      <version>33.2.1-jre</version>"}, Dependencies},
		{"maven new artifact", "pom.xml", []string{"+    <dependency>", "+      <groupId>x</groupId>", "+      <artifactId>evil</artifactId>", "+      <version>1.0</version>", "+    </dependency>"}, DependencySource},
		{"maven property major", "pom.xml", []string{"-    <spring.version>5.3.30</spring.version>", "+    <spring.version>6.1.5</spring.version>"}, DependencyMajor},
		{"maven plugin config", "pom.xml", []string{"+          <goal>exec</goal>"}, DependencySource},
		{"gradle bump", "build.gradle.kts", []string{"-    implementation(\"com.squareup.okhttp3:okhttp:4.11.0\")", "+    implementation(\"com.squareup.okhttp3:okhttp:4.12.0\")"}, Dependencies},
		{"gradle repository", "build.gradle", []string{"+    maven { url 'https://evil/maven' }"}, DependencySource},
		{"gradle catalog reference", "build.gradle.kts", []string{"+    implementation(libs.evil)"}, DependencySource},
		{"catalog bump", "gradle/libs.versions.toml", []string{" [versions]", "-kotlin = \"1.9.23\"", "+kotlin = \"1.9.24\""}, Dependencies},
		{"catalog new library", "gradle/libs.versions.toml", []string{" [libraries]", "+evil = { module = \"x:evil\", version = \"1.0\" }"}, DependencySource},

		// Lockfiles
		{"cargo lock registry", "Cargo.lock", []string{" name = \"serde\"", "-version = \"1.0.200\"", "+version = \"1.0.201\"", " source = \"registry+https://github.com/rust-lang/crates.io-index\"", "+checksum = \"abc\""}, Dependencies},
		{"cargo lock git", "Cargo.lock", []string{"+source = \"git+https://github.com/evil/x?branch=main#abc\""}, DependencySource},
		{"cargo lock registry look-alike", "Cargo.lock", []string{"+source = \"registry+https://github.com/rust-lang/crates.io-index-evil\""}, DependencySource},
		{"poetry lock pypi", "poetry.lock", []string{"+{file = \"x.whl\", hash = \"sha256:abc\"},", "+url = \"https://files.pythonhosted.org/packages/x.whl\""}, Dependencies},
		{"gemfile lock git", "Gemfile.lock", []string{"+GIT", "+  remote: https://github.com/evil/x.git"}, DependencySource},
		{"npm lock over http", "package-lock.json", []string{"+      \"resolved\": \"http://registry.npmjs.org/x.tgz\","}, DependencySource},
		{"npm lock userinfo trick", "package-lock.json", []string{"+      \"resolved\": \"https://registry.npmjs.org@evil.example/x.tgz\","}, DependencySource},
		{"pnpm lock link", "pnpm-lock.yaml", []string{"+      version: link:../evil"}, DependencySource},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Classify(modify(tc.file, tc.lines...))
			if r.Class != tc.want {
				t.Errorf("%s, want %s (%v)", r.Class, tc.want, r.Reasons)
			}
		})
	}
}

// TestNewAndDeletedManifests checks manifests created or deleted whole.
func TestNewAndDeletedManifests(t *testing.T) {
	cases := []struct {
		name, diff string
		want       Class
	}{
		{"new go.mod", create("tools/go.mod", "module example.com/tools", "", "go 1.26", "", "require golang.org/x/tools v0.30.0"), DependencySource},
		{"deleted requirements", remove("requirements-old.txt", "six==1.16.0"), Dependencies},
		{"new lockfile", create("web/package-lock.json", "{", "  \"lockfileVersion\": 3", "}"), Dependencies},
		{"copied manifest", "diff --git a/package.json b/web/package.json\nsimilarity index 100%\ncopy from package.json\ncopy to web/package.json\n", DependencySource},
	}
	for _, tc := range cases {
		if r := Classify(tc.diff); r.Class != tc.want {
			t.Errorf("%s: %s, want %s (%v)", tc.name, r.Class, tc.want, r.Reasons)
		}
	}
}

// TestVersionChange checks the version comparison behind the ledger.
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
