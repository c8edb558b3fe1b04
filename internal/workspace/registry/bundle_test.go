package registry

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zero-dev/zero/internal/workspace/servers"
)

// A zipFile is one entry of a test bundle.
type zipFile struct {
	name string
	body string
	mode fs.FileMode // 0: a 0644 file
}

// makeZip is the bytes of a zip archive holding files, as written.
func makeZip(t *testing.T, files ...zipFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUnpackBundle: a bundle unpacks to its files and folders, keeping
// whether each file is executable, and nothing else; every hostile archive
// is refused whole (mcpb_invalid) and leaves nothing behind, in its folder
// or beside it.
func TestUnpackBundle(t *testing.T) {
	lim := bundleLimits{files: 4, bytes: 10}
	tests := []struct {
		name  string
		files []zipFile
	}{
		{"a path out of the folder", []zipFile{{name: "../evil", body: "x"}}},
		{"a path deeper out", []zipFile{{name: "server/../../evil", body: "x"}}},
		{"an absolute path", []zipFile{{name: "/tmp/evil", body: "x"}}},
		{"a backslash", []zipFile{{name: `server\..\..\evil`, body: "x"}}},
		{"a path not in its plain form", []zipFile{{name: "./server//index.js", body: "x"}}},
		{"a link", []zipFile{{name: "server/passwd", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}}},
		{"a link to a folder, then a file through it", []zipFile{{name: "up", body: "..", mode: fs.ModeSymlink | 0o777}, {name: "up/evil", body: "x"}}},
		{"a device", []zipFile{{name: "dev", mode: fs.ModeDevice | 0o644}}},
		{"a name given twice", []zipFile{{name: "a.txt", body: "1"}, {name: "a.txt", body: "2"}}},
		{"more files than its bound", []zipFile{{name: "a", body: "1"}, {name: "b", body: "2"}, {name: "c", body: "3"}, {name: "d", body: "4"}, {name: "e", body: "5"}}},
		{"more bytes than its bound", []zipFile{{name: "a", body: "123456"}, {name: "b", body: "12345"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			zipPath := filepath.Join(parent, "b.mcpb")
			if err := os.WriteFile(zipPath, makeZip(t, tt.files...), 0o600); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(parent, "unpacked")
			if err := unpackBundle(zipPath, dir, lim); code(err) != CodeMCPBInvalid {
				t.Fatalf("err = %v, want %s", err, CodeMCPBInvalid)
			}
			if names, _ := os.ReadDir(parent); len(names) != 1 {
				t.Errorf("left behind: %v", names)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(parent), "evil")); err == nil {
				t.Error("a file was written outside the folder")
			}
		})
	}

	parent := t.TempDir()
	zipPath := filepath.Join(parent, "b.mcpb")
	if err := os.WriteFile(zipPath, []byte("PK\x03\x04 not a zip"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unpackBundle(zipPath, filepath.Join(parent, "x"), lim); code(err) != CodeMCPBInvalid {
		t.Errorf("not a zip: %v", err)
	}

	// At its bounds: four files, ten bytes.
	good := makeZip(t, zipFile{name: "server/", mode: fs.ModeDir | 0o755}, zipFile{name: "server/run", body: "12345", mode: 0o700},
		zipFile{name: "server/data.txt", body: "12345", mode: 0o600}, zipFile{name: "empty"})
	if err := os.WriteFile(zipPath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "unpacked")
	if err := unpackBundle(zipPath, dir, lim); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"server/run": 0o755, "server/data.txt": 0o644, "empty": 0o644, "server": fs.ModeDir | 0o755, ".": fs.ModeDir | 0o755} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", name, fi.Mode(), err, want)
		}
	}
	// Unpacked once: a folder already there is the bundle's.
	if err := os.WriteFile(filepath.Join(dir, "empty"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unpackBundle(zipPath, dir, lim); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "empty")); string(got) != "kept" {
		t.Errorf("unpacked again over %q", got)
	}
}

// TestBundleConfig: what Zero runs for a bundle, from its manifest.json:
// the runtime Zero chooses for a node or python bundle, a file inside the
// bundle for a binary one, and a refusal for anything else the manifest
// asks.
func TestBundleConfig(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		declared []string // the registry entry's environment variables
		code     string
		command  string // DIR is the bundle's folder
		args     []string
		env      map[string]string
	}{
		{name: "node by its entry point", manifest: `{"server": {"type": "node", "entry_point": "server/index.js"}}`,
			command: "/opt/test/node", args: []string{"DIR/server/index.js", "--stdio"}},
		{name: "node by its mcp_config", manifest: `{"manifest_version": "0.3", "name": "x", "server": {"type": "node", "entry_point": "server/index.js",
			"mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js", "--data", "data", "--verbose", "not-there"], "env": {"DATA": "${__dirname}${/}data"}}}}`,
			command: "/opt/test/node", args: []string{"DIR/server/index.js", "--data", "DIR/data", "--verbose", "not-there", "--stdio"}, env: map[string]string{"DATA": "DIR/data"}},
		{name: "python", manifest: `{"server": {"type": "python", "entry_point": "server/main.py",
			"mcp_config": {"command": "python", "args": ["${__dirname}/server/main.py"], "env": {"PYTHONPATH": "${__dirname}/server/lib"}}}}`,
			command: "python3", args: []string{"DIR/server/main.py", "--stdio"}, env: map[string]string{"PYTHONPATH": "DIR/server/lib"}},
		{name: "binary by its entry point", manifest: `{"server": {"type": "binary", "entry_point": "server/run"}}`,
			command: "DIR/server/run", args: []string{"--stdio"}},
		{name: "binary by its linux override", manifest: `{"server": {"type": "binary", "entry_point": "server/run", "mcp_config": {"command": "server/run.exe",
			"platform_overrides": {"linux": {"command": "${__dirname}/server/run-linux", "args": ["--serve"]}, "win32": {"command": "/bin/sh"}}}}}`,
			command: "DIR/server/run-linux", args: []string{"--serve", "--stdio"}},
		{name: "an env value from user_config the entry declares", manifest: `{"server": {"type": "node", "entry_point": "server/index.js",
			"mcp_config": {"command": "node", "env": {"API_KEY": "${user_config.api_key}"}}}}`, declared: []string{"API_KEY"},
			command: "/opt/test/node", args: []string{"DIR/server/index.js", "--stdio"}},

		{name: "no manifest", code: CodeMCPBInvalid},
		{name: "a manifest of the wrong shape", manifest: `{"server": {"type": 3}}`, code: CodeMCPBInvalid},
		{name: "a manifest over its bound", manifest: `{"server": {"type": "node", "entry_point": "server/index.js"}, "pad": "` + strings.Repeat("x", maxManifest) + `"}`, code: CodeMCPBInvalid},
		{name: "no entry point", manifest: `{"server": {"type": "node"}}`, code: CodeMCPBInvalid},
		{name: "an entry point outside", manifest: `{"server": {"type": "node", "entry_point": "../outside.js"}}`, code: CodeMCPBInvalid},
		{name: "an entry point that is absent", manifest: `{"server": {"type": "node", "entry_point": "server/gone.js"}}`, code: CodeMCPBInvalid},
		{name: "an entry point that is a link", manifest: `{"server": {"type": "node", "entry_point": "server/link.js"}}`, code: CodeMCPBInvalid},
		{name: "a node bundle naming another command", manifest: `{"server": {"type": "node", "entry_point": "server/index.js", "mcp_config": {"command": "bash", "args": ["-c", "id"]}}}`, code: CodeMCPBInvalid},
		{name: "a binary outside", manifest: `{"server": {"type": "binary", "entry_point": "server/run", "mcp_config": {"command": "/bin/sh"}}}`, code: CodeMCPBInvalid},
		{name: "a binary up and out", manifest: `{"server": {"type": "binary", "entry_point": "server/run", "mcp_config": {"command": "${__dirname}/../../../bin/sh"}}}`, code: CodeMCPBInvalid},
		{name: "a binary not executable", manifest: `{"server": {"type": "binary", "entry_point": "server/index.js"}}`, code: CodeMCPBInvalid},
		{name: "an unknown type", manifest: `{"server": {"type": "ruby", "entry_point": "server/index.js"}}`, code: CodeMCPBInvalid},
		{name: "a uv bundle", manifest: `{"server": {"type": "uv", "entry_point": "server/main.py"}}`, code: CodeMCPBUnsupported},
		{name: "a variable Zero does not give", manifest: `{"server": {"type": "node", "entry_point": "server/index.js", "mcp_config": {"command": "node", "args": ["${HOME}/.ssh"]}}}`, code: CodeMCPBUnsupported},
		{name: "an env value from user_config the entry does not declare", manifest: `{"server": {"type": "node", "entry_point": "server/index.js",
			"mcp_config": {"command": "node", "env": {"API_KEY": "${user_config.api_key}"}}}}`, code: CodeMCPBUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]fs.FileMode{"server/index.js": 0o644, "server/main.py": 0o644, "server/run": 0o755, "server/run-linux": 0o755, "data/x": 0o644}
			for name, mode := range files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "server/link.js")); err != nil {
				t.Fatal(err)
			}
			if tt.manifest != "" {
				if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(tt.manifest), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := servers.Config{Kind: servers.KindStdio, Args: []string{"--stdio"}, Env: tt.declared}
			var sec servers.Secrets
			err := bundleConfig(&cfg, &sec, dir, DeriveOptions{Runtimes: map[string]string{"node": "/opt/test/node"}})
			if tt.code != "" {
				if code(err) != tt.code {
					t.Errorf("err = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fill := func(s string) string { return strings.ReplaceAll(s, "DIR", dir) }
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = fill(a)
			}
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = fill(v)
			}
			if cfg.Command != fill(tt.command) || !cmp.Equal(cfg.Args, args) || !cmp.Equal(sec.Env, env, cmpEmpty) {
				t.Errorf("got %s %q %v", cfg.Command, cfg.Args, sec.Env)
			}
			for k := range env {
				if !slices.Contains(cfg.Env, k) {
					t.Errorf("%s is not among the configuration's variables %v", k, cfg.Env)
				}
			}
		})
	}
}

// cmpEmpty takes a nil map and an empty one as equal.
var cmpEmpty = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// TestUnpackBundleConcurrently: drafts of one bundle made at once each
// unpack it into a fresh folder of their own and rename it into place;
// whichever rename comes second finds the folder whole and takes it, so
// every one succeeds and the folder holds the bundle once.
func TestUnpackBundleConcurrently(t *testing.T) {
	parent := t.TempDir()
	zipPath := filepath.Join(parent, "b.mcpb")
	if err := os.WriteFile(zipPath, makeZip(t, zipFile{name: "manifest.json", body: "{}"}, zipFile{name: "server/index.js", body: "// a server"}), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "unpacked")
	start := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			<-start
			errs <- unpackBundle(zipPath, dir, defaultBundleLimits)
		}()
	}
	close(start)
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("a concurrent unpacking: %v", err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "server", "index.js")); err != nil || string(got) != "// a server" {
		t.Errorf("the unpacked bundle: %q %v", got, err)
	}
	if names, _ := os.ReadDir(parent); len(names) != 2 {
		t.Errorf("left beside the bundle: %v", names)
	}
}
