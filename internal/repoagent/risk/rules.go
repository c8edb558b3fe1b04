package risk

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Path rules match a file's pathKey (see fold.go: folded, so that a
// case-insensitive or normalizing checkout cannot dodge them), written in a
// small pattern language of lower-case ASCII:
//
//	name       a glob (path.Match) on the last element, in any directory
//	/glob      a glob on the whole path from the repository root
//	dir/**     anything under dir, where dir is at the repository root
//	**/dir/**  anything under a directory named dir, anywhere
//
// A pattern never matches across a slash except through the ** forms.

// pathRule gives class to the paths pattern matches.
type pathRule struct {
	pattern string
	class   Class
	why     string
}

// highRules are the high-impact path rules. Every one that matches a path
// applies.
var highRules = []pathRule{
	// CI: pipelines, and bots and actions that act on the repository.
	{".github/workflows/**", CI, "edits a GitHub Actions workflow"},
	{".github/actions/**", CI, "edits a GitHub Action"},
	{"action.yml", CI, "edits an action definition"},
	{"action.yaml", CI, "edits an action definition"},
	{"/.github/dependabot.yml", CI, "edits the Dependabot configuration"},
	{"/.github/dependabot.yaml", CI, "edits the Dependabot configuration"},
	{"renovate.json", CI, "edits the Renovate configuration"},
	{"renovate.json5", CI, "edits the Renovate configuration"},
	{".renovaterc*", CI, "edits the Renovate configuration"},
	{".gitlab-ci.yml", CI, "edits a GitLab CI pipeline"},
	{".gitlab/ci/**", CI, "edits a GitLab CI pipeline"},
	{".circleci/**", CI, "edits a CircleCI pipeline"},
	{"jenkinsfile*", CI, "edits a Jenkins pipeline"},
	{".travis.yml", CI, "edits a Travis CI pipeline"},
	{"azure-pipelines*.yml", CI, "edits an Azure Pipelines pipeline"},
	{"azure-pipelines*.yaml", CI, "edits an Azure Pipelines pipeline"},
	{".azure-pipelines/**", CI, "edits an Azure Pipelines pipeline"},
	{".buildkite/**", CI, "edits a Buildkite pipeline"},
	{".drone.yml", CI, "edits a Drone pipeline"},
	{".woodpecker/**", CI, "edits a Woodpecker pipeline"},
	{".woodpecker.yml", CI, "edits a Woodpecker pipeline"},
	{".woodpecker.yaml", CI, "edits a Woodpecker pipeline"},
	{".forgejo/workflows/**", CI, "edits a Forgejo Actions workflow"},
	{".gitea/workflows/**", CI, "edits a Gitea Actions workflow"},
	{"bitbucket-pipelines.yml", CI, "edits a Bitbucket pipeline"},
	{".ci/**", CI, "edits the CI scripts"},
	{"cloudbuild.yaml", CI, "edits a Cloud Build pipeline"},
	{"cloudbuild.yml", CI, "edits a Cloud Build pipeline"},
	{"buildspec.yml", CI, "edits a CodeBuild pipeline"},
	{"appveyor.yml", CI, "edits an AppVeyor pipeline"},
	{".appveyor.yml", CI, "edits an AppVeyor pipeline"},
	{".cirrus.yml", CI, "edits a Cirrus CI pipeline"},
	{".semaphore/**", CI, "edits a Semaphore pipeline"},
	{".tekton/**", CI, "edits a Tekton pipeline"},
	{"mergify.yml", CI, "edits the Mergify auto-merge rules"},
	{".mergify.yml", CI, "edits the Mergify auto-merge rules"},
	{"kodiak.toml", CI, "edits the Kodiak auto-merge rules"},
	{".kodiak.toml", CI, "edits the Kodiak auto-merge rules"},
	{"bors.toml", CI, "edits the bors merge rules"},

	// AgentPolicy: what tells agents and reviewers what to do.
	{".agent-zero.yml", AgentPolicy, "edits Agent Zero's repository policy"},
	{".agent-zero.yaml", AgentPolicy, "edits Agent Zero's repository policy"},
	{"**/.agent-zero/**", AgentPolicy, "edits Agent Zero's repository policy"},
	{"codeowners", AgentPolicy, "edits a CODEOWNERS file"},
	{"owners", AgentPolicy, "edits an OWNERS file (who may approve)"},
	{"owners_aliases", AgentPolicy, "edits an OWNERS file (who may approve)"},
	{"/.github/settings.yml", AgentPolicy, "edits repository settings a bot applies, such as branch protection"},
	{"agents.md", AgentPolicy, "edits agent instructions"},
	{"claude.md", AgentPolicy, "edits agent instructions"},
	{"claude.local.md", AgentPolicy, "edits agent instructions"},
	{"gemini.md", AgentPolicy, "edits agent instructions"},
	{".cursorrules", AgentPolicy, "edits agent instructions"},
	{"**/.cursor/**", AgentPolicy, "edits agent instructions"},
	{"/.github/copilot-instructions.md", AgentPolicy, "edits agent instructions"},
	{".github/instructions/**", AgentPolicy, "edits agent instructions"},
	{".github/prompts/**", AgentPolicy, "edits agent instructions"},
	{".github/chatmodes/**", AgentPolicy, "edits agent instructions"},
	{".aider*", AgentPolicy, "edits agent instructions"},
	{".windsurfrules", AgentPolicy, "edits agent instructions"},
	{"**/.windsurf/**", AgentPolicy, "edits agent instructions"},
	{".clinerules", AgentPolicy, "edits agent instructions"},
	{"**/.clinerules/**", AgentPolicy, "edits agent instructions"},
	{"**/.claude/**", AgentPolicy, "edits agent settings"},
	{"**/.gemini/**", AgentPolicy, "edits agent settings"},
	{"**/.codex/**", AgentPolicy, "edits agent settings"},
	{"**/.roo/**", AgentPolicy, "edits agent settings"},
	{".roomodes", AgentPolicy, "edits agent settings"},
	{"**/.continue/**", AgentPolicy, "edits agent settings"},
	{"**/.junie/**", AgentPolicy, "edits agent settings"},
	{"**/.amazonq/**", AgentPolicy, "edits agent settings"},
	{".mcp.json", AgentPolicy, "edits the MCP servers agents start"},
	{"security.md", AgentPolicy, "edits the security policy"},

	// Secrets: files that hold credentials.
	{".env", Secrets, "edits an environment file"},
	{".env.*", Secrets, "edits an environment file"},
	{"*.pem", Secrets, "edits a key or certificate file"},
	{"*.key", Secrets, "edits a key file"},
	{"*.p12", Secrets, "edits a key store"},
	{"*.pfx", Secrets, "edits a key store"},
	{"*.jks", Secrets, "edits a key store"},
	{"*.keystore", Secrets, "edits a key store"},
	{"*.ppk", Secrets, "edits a key file"},
	{"id_rsa*", Secrets, "edits an SSH key"},
	{"id_dsa*", Secrets, "edits an SSH key"},
	{"id_ecdsa*", Secrets, "edits an SSH key"},
	{"id_ed25519*", Secrets, "edits an SSH key"},
	{"*.kdbx", Secrets, "edits a password database"},
	{".npmrc", Secrets, "edits a registry credentials file"},
	{".pypirc", Secrets, "edits a registry credentials file"},
	{".netrc", Secrets, "edits a credentials file"},
	{"_netrc", Secrets, "edits a credentials file"},
	{".git-credentials", Secrets, "edits a credentials file"},
	{".htpasswd", Secrets, "edits a password file"},
	{"secrets.*", Secrets, "edits a secrets file"},
	{"credentials*", Secrets, "edits a credentials file"},
	{"*.tfstate", Secrets, "edits Terraform state, which holds secrets"},
	{"*.tfstate.backup", Secrets, "edits Terraform state, which holds secrets"},

	// DependencySource: where dependencies and toolchains come from.
	{".gitmodules", DependencySource, "edits git submodules"},
	{"vendor/**", DependencySource, "edits vendored dependencies"},
	{"third_party/**", DependencySource, "edits vendored dependencies"},
	{"**/node_modules/**", DependencySource, "edits installed dependencies"},
	{".yarnrc", DependencySource, "edits the package registry settings"},
	{".yarnrc.yml", DependencySource, "edits the package registry settings"},
	{"bunfig.toml", DependencySource, "edits the package registry settings"},
	{"pip.conf", DependencySource, "edits the package index settings"},
	{"**/.cargo/**", DependencySource, "edits Cargo's sources and build settings"},
	{"**/.mvn/**", DependencySource, "edits the Maven wrapper or settings"},
	{"gradle-wrapper.properties", DependencySource, "edits where the Gradle wrapper downloads from"},
	{"gradlew", DependencySource, "edits the Gradle wrapper"},
	{"gradlew.bat", DependencySource, "edits the Gradle wrapper"},
	{"mvnw", DependencySource, "edits the Maven wrapper"},
	{"mvnw.cmd", DependencySource, "edits the Maven wrapper"},

	// InstallHooks: code that runs on install, build, checkout or commit.
	{"setup.py", InstallHooks, "edits setup.py, which runs on install"},
	{"setup.cfg", InstallHooks, "edits setup.cfg, which drives installation"},
	{"**/.husky/**", InstallHooks, "edits git hooks"},
	{".githooks/**", InstallHooks, "edits git hooks"},
	{".pre-commit-config.yaml", InstallHooks, "edits pre-commit hooks"},
	{".pre-commit-config.yml", InstallHooks, "edits pre-commit hooks"},
	{"lefthook*.yml", InstallHooks, "edits git hooks"},
	{"lefthook*.yaml", InstallHooks, "edits git hooks"},
	{".lefthook*.yml", InstallHooks, "edits git hooks"},
	{"/install*.sh", InstallHooks, "edits an install script"},
	{"build.rs", InstallHooks, "edits a Cargo build script"},
	{"binding.gyp", InstallHooks, "edits a native build run on npm install"},
	{"*.pth", InstallHooks, "edits a Python path file, which runs at start-up"},
	{".envrc", InstallHooks, "edits a direnv file, which runs on cd"},
	{"**/.devcontainer/**", InstallHooks, "edits a dev container, which runs commands on creation"},
	{".devcontainer.json", InstallHooks, "edits a dev container, which runs commands on creation"},
	{"**/.vscode/**", InstallHooks, "edits editor settings and tasks, which can run commands"},

	// InfraDeploy: containers, infrastructure and deployment.
	{"dockerfile*", InfraDeploy, "edits a container image"},
	{"*.dockerfile", InfraDeploy, "edits a container image"},
	{"containerfile*", InfraDeploy, "edits a container image"},
	{".dockerignore", InfraDeploy, "edits a container image's context"},
	{"docker-compose*.yml", InfraDeploy, "edits a compose deployment"},
	{"docker-compose*.yaml", InfraDeploy, "edits a compose deployment"},
	{"compose.yml", InfraDeploy, "edits a compose deployment"},
	{"compose.yaml", InfraDeploy, "edits a compose deployment"},
	{"*.tf", InfraDeploy, "edits Terraform"},
	{"*.tf.json", InfraDeploy, "edits Terraform"},
	{"*.tfvars", InfraDeploy, "edits Terraform variables"},
	{"*.hcl", InfraDeploy, "edits HCL infrastructure"},
	{"*.bicep", InfraDeploy, "edits Azure infrastructure"},
	{"**/terraform/**", InfraDeploy, "edits Terraform"},
	{"**/k8s/**", InfraDeploy, "edits Kubernetes manifests"},
	{"**/kubernetes/**", InfraDeploy, "edits Kubernetes manifests"},
	{"**/helm/**", InfraDeploy, "edits Helm charts"},
	{"**/ansible/**", InfraDeploy, "edits Ansible"},
	{"charts/**", InfraDeploy, "edits Helm charts"},
	{"chart.yaml", InfraDeploy, "edits a Helm chart"},
	{"deploy/**", InfraDeploy, "edits deployment files"},
	{"deployment/**", InfraDeploy, "edits deployment files"},
	{"deployments/**", InfraDeploy, "edits deployment files"},
	{".platform/**", InfraDeploy, "edits deployment files"},
	{".platform.app.yaml", InfraDeploy, "edits deployment files"},
	{"procfile", InfraDeploy, "edits a Procfile"},
	{"fly.toml", InfraDeploy, "edits a Fly.io deployment"},
	{"vercel.json", InfraDeploy, "edits a Vercel deployment"},
	{"netlify.toml", InfraDeploy, "edits a Netlify deployment"},
	{"app.yaml", InfraDeploy, "edits an App Engine deployment"},
	{"serverless.yml", InfraDeploy, "edits a Serverless deployment"},
	{"serverless.yaml", InfraDeploy, "edits a Serverless deployment"},
	{"skaffold.yaml", InfraDeploy, "edits a Skaffold deployment"},
	{"kustomization.yaml", InfraDeploy, "edits a Kustomize deployment"},
	{"kustomization.yml", InfraDeploy, "edits a Kustomize deployment"},
	{"render.yaml", InfraDeploy, "edits a Render deployment"},
	{"railway.json", InfraDeploy, "edits a Railway deployment"},
	{"railway.toml", InfraDeploy, "edits a Railway deployment"},
	{"wrangler.toml", InfraDeploy, "edits a Cloudflare deployment"},
	{"wrangler.json*", InfraDeploy, "edits a Cloudflare deployment"},
	{"vagrantfile", InfraDeploy, "edits a Vagrant machine"},
	{"pulumi*.yaml", InfraDeploy, "edits Pulumi"},
	{"cdk.json", InfraDeploy, "edits a CDK app"},

	// ReleasePublish: release tooling and what gets published.
	{".goreleaser.yml", ReleasePublish, "edits the GoReleaser configuration"},
	{".goreleaser.yaml", ReleasePublish, "edits the GoReleaser configuration"},
	{"release/**", ReleasePublish, "edits release files"},
	{"/scripts/release*", ReleasePublish, "edits a release script"},
	{"/scripts/publish*", ReleasePublish, "edits a publish script"},
	{"/publish*", ReleasePublish, "edits a publish script"},
	{"publish*.sh", ReleasePublish, "edits a publish script"},
	{".releaserc*", ReleasePublish, "edits the semantic-release configuration"},
	{"release.config.*", ReleasePublish, "edits the semantic-release configuration"},
	{"release-please-config.json", ReleasePublish, "edits the release-please configuration"},
	{".release-please-manifest.json", ReleasePublish, "edits the release-please versions"},
	{"lerna.json", ReleasePublish, "edits the Lerna configuration"},
	{".changeset/**", ReleasePublish, "edits changesets"},
	{".npmignore", ReleasePublish, "edits what npm publishes"},
	{"manifest.in", ReleasePublish, "edits what a Python sdist holds"},
	{"version", ReleasePublish, "edits the version file"},
}

// notSecret names files that look like environment files but are the
// committed templates for them. They are Config (with the content rules
// still looking for credentials in them).
var notSecret = []string{".env.example", ".env.sample", ".env.template", ".env.dist"}

// lowRules are the low path rules, tried in order after the manifests; the
// first that matches gives the class. A path no rule matches is
// Unclassified.
var lowRules = []pathRule{
	// Config first among names that would otherwise read as docs or code.
	{"license*", Config, "edits a licence"},
	{"licence*", Config, "edits a licence"},
	{"copying*", Config, "edits a licence"},
	{".env.example", Config, "edits an environment template"},
	{".env.sample", Config, "edits an environment template"},
	{".env.template", Config, "edits an environment template"},
	{".env.dist", Config, "edits an environment template"},

	// Toolchain pins: which version of a language the checks use.
	{".nvmrc", Dependencies, "edits a toolchain version"},
	{".node-version", Dependencies, "edits a toolchain version"},
	{".python-version", Dependencies, "edits a toolchain version"},
	{".ruby-version", Dependencies, "edits a toolchain version"},
	{".go-version", Dependencies, "edits a toolchain version"},
	{".tool-versions", Dependencies, "edits a toolchain version"},
	{"rust-toolchain", Dependencies, "edits a toolchain version"},
	{"rust-toolchain.toml", Dependencies, "edits a toolchain version"},

	// Tests, by name and then by directory.
	{"*_test.go", Tests, "edits a test"},
	{"test_*.py", Tests, "edits a test"},
	{"*_test.py", Tests, "edits a test"},
	{"conftest.py", Tests, "edits test fixtures"},
	{"*.test.[jt]s", Tests, "edits a test"},
	{"*.test.[jt]sx", Tests, "edits a test"},
	{"*.test.[mc]js", Tests, "edits a test"},
	{"*.spec.[jt]s", Tests, "edits a test"},
	{"*.spec.[jt]sx", Tests, "edits a test"},
	{"*.spec.[mc]js", Tests, "edits a test"},
	{"*_spec.rb", Tests, "edits a test"},
	{"*_test.rb", Tests, "edits a test"},
	{"**/test/**", Tests, "edits a file under test/"},
	{"**/tests/**", Tests, "edits a file under tests/"},
	{"**/__tests__/**", Tests, "edits a file under __tests__/"},
	{"**/spec/**", Tests, "edits a file under spec/"},
	{"**/testdata/**", Tests, "edits test data"},

	// Docs: documents anywhere, and documents and images under docs/ and doc/.
	{"*.md", Docs, "edits a document"},
	{"*.mdx", Docs, "edits a document"},
	{"*.rst", Docs, "edits a document"},
	{"*.adoc", Docs, "edits a document"},
	{"readme", Docs, "edits a document"},
	{"readme.txt", Docs, "edits a document"},
	{"changelog", Docs, "edits a document"},
	{"changelog.txt", Docs, "edits a document"},
	{"authors", Docs, "edits a document"},
	{"contributors", Docs, "edits a document"},
	{"/docs/*.txt", Docs, "edits a document under docs/"},
	{"/docs/**/*.txt", Docs, "edits a document under docs/"},
	{"/doc/*.txt", Docs, "edits a document under doc/"},
	{"/doc/**/*.txt", Docs, "edits a document under doc/"},
}

// docsDirs and docsImages: images under these root directories are Docs,
// and are the only binary files that are not Unclassified.
var (
	docsDirs   = []string{"docs", "doc"}
	docsImages = []string{".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".svg"}
)

// configNames, then codeExts, then configExts are tried after the rules
// above. codeExts are source files: Code.
var codeExts = []string{
	".go", ".py", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".rs",
	".java", ".kt", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp",
	".rb", ".php", ".cs", ".swift", ".scala", ".sh", ".sql",
	".html", ".htm", ".css", ".scss", ".sass", ".less", ".vue", ".svelte",
	".dart", ".lua", ".ex", ".exs", ".zig",
}

// configExts and configNames are configuration: Config.
var (
	configExts  = []string{".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf"}
	configNames = []string{
		".editorconfig", ".gitignore", ".gitattributes", ".prettierrc*", ".prettierignore",
		".eslintrc*", ".eslintignore", "tsconfig*.json",
	}
)

// matchPath reports whether the folded path k matches pattern (see the
// pattern language above). It is the one place paths meet patterns.
func matchPath(pattern string, k pathKey) bool {
	p := string(k)
	elems := strings.Split(p, "/")
	switch {
	case strings.HasPrefix(pattern, "**/") && strings.HasSuffix(pattern, "/**"):
		dir := strings.Split(strings.TrimSuffix(strings.TrimPrefix(pattern, "**/"), "/**"), "/")
		for i := 0; i+len(dir) < len(elems); i++ {
			if slices.Equal(elems[i:i+len(dir)], dir) {
				return true
			}
		}
		return false
	case strings.HasSuffix(pattern, "/**"):
		dir := strings.Split(strings.TrimSuffix(pattern, "/**"), "/")
		return len(dir) < len(elems) && slices.Equal(elems[:len(dir)], dir)
	case strings.HasPrefix(pattern, "/"):
		ok, _ := path.Match(pattern[1:], p)
		if !ok && strings.Contains(pattern, "/**/") {
			// "/docs/**/*.txt": the glob's directory and anything under it.
			dir, base, _ := strings.Cut(pattern[1:], "/**/")
			d := strings.Split(dir, "/")
			okBase, _ := path.Match(base, elems[len(elems)-1])
			ok = okBase && len(d) < len(elems)-1 && slices.Equal(elems[:len(d)], d)
		}
		return ok
	default:
		ok, _ := path.Match(pattern, elems[len(elems)-1])
		return ok
	}
}

// maxPath is Linux's PATH_MAX: git cannot check out a longer path.
const maxPath = 4096

// badPath says why a path cannot be classified by its name, or returns "".
// Paths outside the repository, into .git, or that mean something else on
// another file system (Windows separators, drive letters and alternate data
// streams, names Windows trims) have no safe class.
func badPath(p string) string {
	switch {
	case p == "":
		return "the path is empty"
	case len(p) > maxPath:
		return "the path is longer than a checkout can hold"
	case !utf8.ValidString(p):
		return "the path is not valid UTF-8"
	}
	// The raw path, then the folded one: "．．", ".ＧＩＴ" and "＼" are
	// caught there.
	for _, q := range []string{p, string(keyOf(p))} {
		if why := badSpelling(q); why != "" {
			return why
		}
	}
	return ""
}

func badSpelling(q string) string {
	switch {
	case strings.HasPrefix(q, "/"):
		return "the path is absolute"
	case strings.ContainsAny(q, `\:`):
		return "the path has a backslash or colon"
	}
	for _, r := range q {
		if r < 0x20 || r == 0x7f {
			return "the path has a control character"
		}
		if unicode.Is(unicode.Cf, r) {
			// Zero-width and direction marks: some file systems drop them
			// (".hu\u200csky" is ".husky" on HFS+), and they hide what a
			// name says.
			return "the path has an invisible formatting character"
		}
	}
	for _, e := range strings.Split(q, "/") {
		switch {
		case e == "" || e == ".":
			return "the path has an empty or . element"
		case e == "..":
			return "the path has a .. element"
		case e == ".git" || e == "git~1":
			return "the path is inside .git"
		case strings.HasSuffix(e, ".") || strings.HasSuffix(e, " "):
			return "a path element ends in a dot or space"
		}
	}
	return ""
}

// highPath applies every high-impact path rule to k.
func highPath(k pathKey) verdict {
	var v verdict
	base := path.Base(string(k))
	for _, r := range highRules {
		if r.class == Secrets && slices.Contains(notSecret, base) {
			continue
		}
		if matchPath(r.pattern, k) {
			v.raise(r.class, r.why)
		}
	}
	return v
}

// lowPath gives the low class of k by the first low rule that matches, or
// Unclassified. Manifests are handled before this (see manifest.go).
func lowPath(k pathKey) verdict {
	for _, r := range lowRules {
		if matchPath(r.pattern, k) {
			return verdict{r.class, r.why}
		}
	}
	if isDocsImage(k) {
		return verdict{Docs, "edits an image under docs/"}
	}
	// Named configuration before extensions: .eslintrc.cjs is
	// configuration, and Config ranks above Code.
	for _, n := range configNames {
		if matchPath(n, k) {
			return verdict{Config, "edits a configuration file"}
		}
	}
	ext := path.Ext(string(k))
	if slices.Contains(codeExts, ext) {
		return verdict{Code, "edits source code"}
	}
	if slices.Contains(configExts, ext) {
		return verdict{Config, "edits a configuration file"}
	}
	return verdict{Unclassified, "no rule knows this kind of file"}
}

// isDocsImage reports whether k is an image under a root docs directory.
func isDocsImage(k pathKey) bool {
	first, _, found := strings.Cut(string(k), "/")
	return found && slices.Contains(docsDirs, first) && slices.Contains(docsImages, path.Ext(string(k)))
}

// isTestPath reports whether p is a test file or test data by the low
// rules; "" is not.
func isTestPath(p string) bool {
	return p != "" && lowPath(keyOf(p)).class == Tests
}

// isTestFile reports whether p is named like a test (by a Tests rule that
// is not a directory rule) in a place where the test runner finds it: not
// under testdata/, and for Go not under a directory the go command skips
// (a name starting with "_" or ".").
func isTestFile(p string) bool {
	k := keyOf(p)
	if matchPath("**/testdata/**", k) {
		return false
	}
	elems := strings.Split(string(k), "/")
	if path.Ext(string(k)) == ".go" {
		for _, e := range elems[:len(elems)-1] {
			if strings.HasPrefix(e, "_") || strings.HasPrefix(e, ".") {
				return false
			}
		}
	}
	for _, r := range lowRules {
		if r.class == Tests && !strings.HasPrefix(r.pattern, "**/") && matchPath(r.pattern, k) {
			return true
		}
	}
	return false
}
