package registry

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/zero-dev/zero/internal/workspace/servers"
)

// CodeMCPBInvalid: a bundle Zero will not unpack or run as it is.
const CodeMCPBInvalid = "mcpb_invalid"

// Bounds of an unpacked bundle.
const (
	MaxBundleFiles    = 20_000
	MaxBundleUnpacked = 1 << 30
	maxManifest       = 1 << 20
)

// bundleLimits bound one unpacking (tests make them small).
type bundleLimits struct {
	files int
	bytes int64
}

var defaultBundleLimits = bundleLimits{files: MaxBundleFiles, bytes: MaxBundleUnpacked}

// bundleDir is where the bundle whose SHA-256 is sum is unpacked.
func bundleDir(home, sum string) string {
	return filepath.Join(home, "registry", "mcpb", sum)
}

// unpackBundle unpacks the verified bundle at zipPath into dir, unless dir
// is already there (a folder named by the bundle's SHA-256 is only ever
// made whole, by a rename). Only regular files and folders, at local
// paths, within lim; a link, a device, an absolute or ".." path, a
// backslash or a name given twice refuses the whole bundle, and nothing
// is left. Files are written through an os.Root of a fresh folder, so
// none can land outside it whatever its name.
func unpackBundle(zipPath, dir string, lim bundleLimits) error {
	if fi, err := os.Lstat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("mcpb: %s is not a folder", dir)
		}
		return nil
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return refuse(CodeMCPBInvalid, nil, "the bundle is not a zip archive: %v", err)
	}
	defer zr.Close()
	if len(zr.File) > lim.files {
		return refuse(CodeMCPBInvalid, nil, "the bundle holds %d files, over the %d Zero unpacks", len(zr.File), lim.files)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpack-*")
	if err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	defer root.Close()
	left := lim.bytes
	for _, f := range zr.File {
		if left, err = unpackFile(root, f, left); err != nil {
			return err
		}
		if left < 0 {
			return refuse(CodeMCPBInvalid, nil, "the bundle unpacks to more than the %d bytes Zero unpacks", lim.bytes)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil && !isDir(dir) { // else another draft unpacked it first
		return fmt.Errorf("mcpb: %w", err)
	}
	return nil
}

// unpackFile writes one entry of a bundle under root, reading at most
// left+1 bytes of it, and returns what is left: below zero, over.
func unpackFile(root *os.Root, f *zip.File, left int64) (int64, error) {
	name := strings.TrimSuffix(f.Name, "/")
	if !filepath.IsLocal(name) || strings.ContainsAny(name, "\\\x00") || path.Clean(name) != name {
		return left, refuse(CodeMCPBInvalid, nil, "the bundle names a file %q outside its folder, or not by a plain path", f.Name)
	}
	mode := f.Mode()
	switch {
	case mode.IsDir():
		if err := root.MkdirAll(name, 0o755); err != nil {
			return left, refuse(CodeMCPBInvalid, nil, "the bundle's folder %q: %v", name, err)
		}
		return left, nil
	case !mode.IsRegular():
		return left, refuse(CodeMCPBInvalid, nil, "the bundle's %q is a %s, not a file: Zero unpacks files and folders only", name, modeKind(mode))
	}
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return left, refuse(CodeMCPBInvalid, nil, "the bundle's folder %q: %v", dir, err)
		}
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return left, refuse(CodeMCPBInvalid, nil, "the bundle's file %q: %v (a name given twice, or a file where a folder is)", name, err)
	}
	in, err := f.Open()
	if err == nil {
		var n int64
		n, err = io.Copy(out, io.LimitReader(in, left+1))
		in.Close()
		left -= n
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return left, refuse(CodeMCPBInvalid, nil, "the bundle's file %q: %v", name, err)
	}
	return left, nil
}

func modeKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "link"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// A bundleManifest is what Zero reads of a bundle's manifest.json: how to
// start its server. Every other field is ignored.
type bundleManifest struct {
	Server struct {
		Type       string     `json:"type"`
		EntryPoint string     `json:"entry_point"`
		MCPConfig  *mcpConfig `json:"mcp_config"`
	} `json:"server"`
}

type mcpConfig struct {
	Command           string               `json:"command"`
	Args              []string             `json:"args"`
	Env               map[string]string    `json:"env"`
	PlatformOverrides map[string]mcpConfig `json:"platform_overrides"`
}

// bundleRuntimes are the commands a bundle's manifest may name for each
// server type, and the runtime Zero runs for it (a key of
// DeriveOptions.Runtimes and its default).
var bundleRuntimes = map[string]struct {
	names   []string
	runtime string
}{
	"node":   {[]string{"node"}, "node"},
	"python": {[]string{"python", "python3"}, "python3"},
}

var bundleVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^}]*)\}`) })

// bundleConfig completes cfg and sec for the bundle unpacked in dir, from
// its manifest.json (server.type, entry_point and mcp_config, with the
// "linux" platform override): a node or python bundle runs the runtime Zero
// chooses, never another command the manifest names; a binary bundle runs
// a file inside dir. ${__dirname}, ${/} and ${pathSeparator} are
// substituted; any other ${...} is refused, except an environment value
// from user_config for a variable the registry entry declares (the
// person's value for it is used). A relative argument that names a file or
// folder of the bundle is made absolute, since a server's working folder
// is not the bundle's. The manifest decides nothing else.
func bundleConfig(cfg *servers.Config, sec *servers.Secrets, dir string, o DeriveOptions) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	defer root.Close()
	m, err := readManifest(root)
	if err != nil {
		return err
	}
	s := m.Server
	mc := mcpConfig{}
	if s.MCPConfig != nil {
		mc = *s.MCPConfig
		if o, ok := mc.PlatformOverrides["linux"]; ok {
			if o.Command != "" {
				mc.Command = o.Command
			}
			if o.Args != nil {
				mc.Args = o.Args
			}
			for k, v := range o.Env {
				mc.Env = setValue(mc.Env, k, v)
			}
		}
	}
	sub := func(what, v string) (string, error) {
		var bad string
		out := bundleVarRE().ReplaceAllStringFunc(v, func(m string) string {
			switch m {
			case "${__dirname}":
				return dir
			case "${/}", "${pathSeparator}":
				return "/"
			}
			bad = m
			return m
		})
		if bad != "" {
			return "", refuse(CodeMCPBUnsupported, nil, "the bundle's %s uses %s: Zero substitutes only ${__dirname}, ${/} and ${pathSeparator}", what, bad)
		}
		return out, nil
	}
	// inBundle is the absolute path of the file p names in the bundle.
	inBundle := func(what, p string) (string, fs.FileMode, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		rel, err := filepath.Rel(dir, filepath.Clean(p))
		if err != nil || !filepath.IsLocal(rel) {
			return "", 0, refuse(CodeMCPBInvalid, nil, "the bundle's %s %q is outside the bundle", what, p)
		}
		fi, err := root.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() {
			return "", 0, refuse(CodeMCPBInvalid, nil, "the bundle's %s %q is not a file in the bundle", what, rel)
		}
		return filepath.Join(dir, rel), fi.Mode(), nil
	}

	if s.EntryPoint == "" {
		return refuse(CodeMCPBInvalid, nil, "the bundle's manifest names no server.entry_point")
	}
	entry, _, err := inBundle("entry point", s.EntryPoint)
	if err != nil {
		return err
	}
	switch rt, ok := bundleRuntimes[s.Type]; {
	case ok:
		if mc.Command != "" && !slices.Contains(rt.names, mc.Command) {
			return refuse(CodeMCPBInvalid, nil, "a %s bundle runs %s; this one's manifest names %q", s.Type, rt.names[0], mc.Command)
		}
		cfg.Command = rt.runtime
		if prog := o.Runtimes[rt.runtime]; prog != "" {
			cfg.Command = prog
		}
		if mc.Args == nil {
			mc.Args = []string{entry}
		}
	case s.Type == "binary":
		cmd := s.EntryPoint
		if mc.Command != "" {
			if cmd, err = sub("command", mc.Command); err != nil {
				return err
			}
		}
		var mode fs.FileMode
		if cfg.Command, mode, err = inBundle("command", cmd); err != nil {
			return err
		}
		if mode&0o100 == 0 {
			return refuse(CodeMCPBInvalid, nil, "the bundle's command %q is not executable", cmd)
		}
	case s.Type == "uv":
		return refuse(CodeMCPBUnsupported, nil, "a uv bundle leaves installing its dependencies to the host, which Zero does not do: choose another package or a remote")
	default:
		return refuse(CodeMCPBInvalid, nil, "the bundle's server type %q is not node, python, binary or uv", s.Type)
	}

	args := make([]string, 0, len(mc.Args)+len(cfg.Args))
	for _, a := range mc.Args {
		a, err := sub("argument", a)
		if err != nil {
			return err
		}
		if !filepath.IsAbs(a) && !strings.HasPrefix(a, "-") && filepath.IsLocal(a) {
			if _, err := root.Lstat(a); err == nil {
				a = filepath.Join(dir, a)
			}
		}
		args = append(args, a)
	}
	cfg.Args = append(args, cfg.Args...) // the entry's package arguments last

	for _, k := range slices.Sorted(maps.Keys(mc.Env)) {
		v := mc.Env[k]
		if slices.Contains(cfg.Env, k) {
			continue // the entry declares it: the person's value
		}
		if strings.Contains(v, "${user_config.") {
			return refuse(CodeMCPBUnsupported, []string{k}, "the bundle sets %s from its own user_config, which its registry entry does not declare: Zero asks only for an entry's declared inputs", k)
		}
		if v, err = sub("environment variable "+k, v); err != nil {
			return err
		}
		cfg.Env = append(cfg.Env, k)
		sec.Env = setValue(sec.Env, k, v)
	}
	return nil
}

// readManifest reads a bundle's manifest.json, bounded, strict on the
// fields Zero uses.
func readManifest(root *os.Root) (*bundleManifest, error) {
	f, err := root.Open("manifest.json")
	if err != nil {
		return nil, refuse(CodeMCPBInvalid, nil, "the bundle has no manifest.json")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("mcpb: %w", err)
	}
	if len(data) > maxManifest {
		return nil, refuse(CodeMCPBInvalid, nil, "the bundle's manifest.json is over %d KiB", maxManifest>>10)
	}
	var m bundleManifest
	if err := json.Unmarshal(data, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, refuse(CodeMCPBInvalid, nil, "the bundle's manifest.json: %s is not a %s", te.Field, te.Type)
		}
		return nil, refuse(CodeMCPBInvalid, nil, "the bundle's manifest.json: %v", err)
	}
	return &m, nil
}
