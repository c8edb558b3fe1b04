package risk

import (
	"path"
	"strings"
	"testing"
)

// TestPatternsValid checks every pattern in the tables: it must be a valid
// glob, and lower-case, since paths are lower-cased before matching (an
// upper-case pattern would never match).
func TestPatternsValid(t *testing.T) {
	var patterns []string
	for _, r := range highRules {
		patterns = append(patterns, r.pattern)
	}
	for _, r := range lowRules {
		patterns = append(patterns, r.pattern)
	}
	patterns = append(patterns, configNames...)
	for _, m := range manifests {
		patterns = append(patterns, m.names...)
	}
	for _, r := range surfaceRules {
		patterns = append(patterns, r.pattern)
	}
	for _, r := range toolRules {
		patterns = append(patterns, r.patterns...)
	}
	for _, p := range patterns {
		if p != strings.ToLower(p) {
			t.Errorf("pattern %q is not lower-case", p)
		}
		glob := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(p, "**/"), "/**"), "/")
		if _, err := path.Match(glob, ""); err != nil {
			t.Errorf("pattern %q: %v", p, err)
		}
	}
	for _, r := range surfaceRules {
		if r.class != Verification || r.why == "" {
			t.Errorf("surface rule %q: class %s, reason %q", r.pattern, r.class, r.why)
		}
	}
	for _, p := range patterns {
		if string(keyOf(p)) != p {
			t.Errorf("pattern %q is not its own fold %q: no path could match it", p, keyOf(p))
		}
	}
	for _, r := range append(highRules, lowRules...) {
		if r.why == "" || r.class == "" {
			t.Errorf("rule %q has no class or reason", r.pattern)
		}
	}
	for _, r := range highRules {
		if !r.class.HighImpact() {
			t.Errorf("high rule %q gives low class %s", r.pattern, r.class)
		}
	}
	for _, r := range lowRules {
		if r.class.HighImpact() {
			t.Errorf("low rule %q gives high class %s", r.pattern, r.class)
		}
	}
}

// TestPathRules checks the class a one-line edit gets for each path: the
// tables, where their patterns are anchored, and case-insensitivity.
func TestPathRules(t *testing.T) {
	cases := map[string]Class{
		// CI
		".github/workflows/ci.yml":         CI,
		".github/actions/setup/action.yml": CI,
		"tools/action.yaml":                CI,
		".gitlab/ci/build.yml":             CI,
		".circleci/config.yml":             CI,
		"Jenkinsfile":                      CI,
		"ci/Jenkinsfile.release":           CI,
		".travis.yml":                      CI,
		"azure-pipelines.yml":              CI,
		".buildkite/pipeline.yml":          CI,
		".drone.yml":                       CI,
		".woodpecker/build.yml":            CI,
		".woodpecker.yml":                  CI,
		".forgejo/workflows/ci.yml":        CI,
		".gitea/workflows/ci.yml":          CI,
		"bitbucket-pipelines.yml":          CI,
		".github/dependabot.yml":           CI,
		"renovate.json":                    CI,
		"sub/.github/workflows/ci.yml":     Config, // GitHub only runs root workflows
		// AgentPolicy
		".agent-zero.yaml":                        AgentPolicy,
		"svc/.agent-zero.yml":                     AgentPolicy,
		"CODEOWNERS":                              AgentPolicy,
		".github/CODEOWNERS":                      AgentPolicy,
		"docs/CODEOWNERS":                         AgentPolicy,
		"AGENTS.md":                               AgentPolicy,
		"GEMINI.md":                               AgentPolicy,
		".cursorrules":                            AgentPolicy,
		".cursor/rules/go.mdc":                    AgentPolicy,
		".github/copilot-instructions.md":         AgentPolicy,
		".github/instructions/go.instructions.md": AgentPolicy,
		".aider.conf.yml":                         AgentPolicy,
		".windsurfrules":                          AgentPolicy,
		".clinerules":                             AgentPolicy,
		".claude/settings.json":                   AgentPolicy,
		".mcp.json":                               AgentPolicy,
		"SECURITY.md":                             AgentPolicy,
		// Secrets
		".env":                Secrets,
		".env.production":     Secrets,
		"config/tls.key":      Secrets,
		"keys/app.p12":        Secrets,
		"a.pfx":               Secrets,
		"a.jks":               Secrets,
		"release.keystore":    Secrets,
		"id_rsa":              Secrets,
		"home/id_ed25519.pub": Secrets,
		"vault.kdbx":          Secrets,
		".npmrc":              Secrets,
		".pypirc":             Secrets,
		".netrc":              Secrets,
		".git-credentials":    Secrets,
		"config/secrets.yml":  Secrets,
		"credentials.json":    Secrets,
		".env.example":        Config,
		// DependencySource
		".gitmodules":                              DependencySource,
		"vendor/github.com/x/y/y.go":               DependencySource,
		"web/node_modules/x/index.js":              DependencySource,
		"gradle/wrapper/gradle-wrapper.properties": DependencySource,
		".yarnrc.yml":                              DependencySource,
		// InstallHooks
		"setup.py":                        InstallHooks,
		"setup.cfg":                       InstallHooks,
		".husky/pre-commit":               InstallHooks,
		".githooks/pre-push":              InstallHooks,
		".pre-commit-config.yaml":         InstallHooks,
		"lefthook.yml":                    InstallHooks,
		"install.sh":                      InstallHooks,
		"install-deps.sh":                 InstallHooks,
		"scripts/install.sh":              Code, // only the root's install scripts
		"build.rs":                        InstallHooks,
		".devcontainer/devcontainer.json": InstallHooks,
		".vscode/tasks.json":              InstallHooks,
		// InfraDeploy
		"Dockerfile":                       InfraDeploy,
		"build/Dockerfile.dev":             InfraDeploy,
		"api.dockerfile":                   InfraDeploy,
		"docker-compose.override.yml":      InfraDeploy,
		"compose.yaml":                     InfraDeploy,
		"infra/vars.tfvars":                InfraDeploy,
		"terraform/modules/x/a.json":       InfraDeploy,
		"k8s/svc.yaml":                     InfraDeploy,
		"kubernetes/svc.yaml":              InfraDeploy,
		"helm/values.yaml":                 InfraDeploy,
		"charts/app/values.yaml":           InfraDeploy,
		"deploy/run.go":                    InfraDeploy,
		"deployment/x.yml":                 InfraDeploy,
		"ansible/site.yml":                 InfraDeploy,
		"Procfile":                         InfraDeploy,
		"fly.toml":                         InfraDeploy,
		"vercel.json":                      InfraDeploy,
		"netlify.toml":                     InfraDeploy,
		"app.yaml":                         InfraDeploy,
		"serverless.yml":                   InfraDeploy,
		"skaffold.yaml":                    InfraDeploy,
		"overlays/prod/kustomization.yaml": InfraDeploy,
		".platform/hooks/x.sh":             InfraDeploy,
		"internal/deploy/x.go":             Code, // deploy/ only at the root
		// ReleasePublish
		".goreleaser.yml":        ReleasePublish,
		"release/notes.json":     ReleasePublish,
		"scripts/release.sh":     ReleasePublish,
		"scripts/publish-npm.js": ReleasePublish,
		".releaserc.json":        ReleasePublish,
		"release.config.js":      ReleasePublish,
		"lerna.json":             ReleasePublish,
		".changeset/config.json": ReleasePublish,
		"VERSION":                ReleasePublish,
		// Tests
		"a_test.go":              Tests,
		"test_a.py":              Tests,
		"a_test.py":              Tests,
		"a.test.js":              Tests,
		"a.spec.tsx":             Tests,
		"pkg/test/helper.go":     Tests,
		"tests/e2e.sh":           Tests,
		"src/__tests__/a.js":     Tests,
		"spec/a_spec.rb":         Tests,
		"x/testdata/golden.json": Tests,
		// Docs
		"README.md":      Docs,
		"docs/a.rst":     Docs,
		"x.adoc":         Docs,
		"a.mdx":          Docs,
		"docs/a/b.txt":   Docs,
		"doc/x.txt":      Docs,
		"CHANGELOG.md":   Docs,
		"docs/img/a.png": Docs,
		"notes.txt":      Unclassified, // .txt only under docs/
		"docs/conf.py":   Code,         // code under docs/ is still code
		// Code
		"main.go":         Code,
		"a.rs":            Code,
		"web/x.vue":       Code,
		"db/001_init.sql": Code,
		"scripts/x.sh":    Code,
		// Config
		".editorconfig":     Config,
		".gitattributes":    Config,
		".prettierrc":       Config,
		".eslintrc.cjs":     Config,
		"tsconfig.app.json": Config,
		"Makefile":          Verification, // the checks may run it (surface.go)
		"LICENSE":           Config,
		"COPYING":           Config,
		"x.toml":            Config,
		"x.ini":             Config,
		// Unclassified
		"x.xml":           Unclassified,
		"blob":            Unclassified,
		"assets/logo.png": Unclassified, // an image outside docs/ is not docs (and would be binary)
	}
	for p, want := range cases {
		got := oneLine(p).classify()
		if got.Class != want {
			t.Errorf("%s: %s (%v), want %s", p, got.Class, got.Reasons, want)
		}
		// Case must not matter: a case-insensitive checkout sees the same file.
		if up := oneLine(strings.ToUpper(p)).classify(); up.Class != want {
			t.Errorf("%s: upper-cased, %s, want %s", p, up.Class, want)
		}
	}
}

// TestBadPaths checks the path hygiene rules.
func TestBadPaths(t *testing.T) {
	bad := []string{
		"", "/etc/x", "a//b", "a/./b", "../a", "a/..", "a/.git/config", ".GIT/hooks/x", "git~1/x",
		`a\b`, "c:x", "a\x01b", "a\x7fb", "a./b", "a /b", "\xff",
		".ＧＩＴ/config", "a/．．/b", "a/\u2024\u2024/b", ".git\u200d/config",
	}
	for _, p := range bad {
		if badPath(p) == "" {
			t.Errorf("badPath(%q) accepts it", p)
		}
	}
	for _, p := range []string{"a", "a/b.c", ".github/x", "docs/with space.md", "été.md", ".gitignore", "a/.gitkeep"} {
		if why := badPath(p); why != "" {
			t.Errorf("badPath(%q) = %q", p, why)
		}
	}
}

// TestMatchPath checks the pattern language's anchoring.
func TestMatchPath(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"deploy/**", "deploy/x", true},
		{"deploy/**", "deploy", false},
		{"deploy/**", "a/deploy/x", false},
		{"**/k8s/**", "a/b/k8s/x", true},
		{"**/k8s/**", "k8s/x", true},
		{"**/k8s/**", "a/k8s", false},
		{".github/workflows/**", ".github/workflows/a/b.yml", true},
		{".github/workflows/**", "x/.github/workflows/a.yml", false},
		{"*.md", "a/b/c.md", true},
		{"*.md", "a.md/b", false},
		{"/install*.sh", "install.sh", true},
		{"/install*.sh", "x/install.sh", false},
		{"/docs/**/*.txt", "docs/a/b/c.txt", true},
		{"/docs/**/*.txt", "docs/c.txt", false},
		{"/docs/**/*.txt", "x/docs/a/c.txt", false},
	}
	for _, tc := range cases {
		if got := matchPath(tc.pattern, keyOf(tc.path)); got != tc.want {
			t.Errorf("matchPath(%q, %q) = %v", tc.pattern, tc.path, got)
		}
	}
}
