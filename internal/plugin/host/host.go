// Package host runs one plugin under Zero's fixed host, host.js, in a
// sandbox that enforces the plugin's capabilities: it builds the command
// ([Command]) that spawn starts, and serves the plugin's network while it
// runs.
//
// host.js (embedded; [Hash] is its SHA-256, part of what a person approves)
// speaks a minimal MCP over stdio and calls the entry module's exports. It is
// no boundary itself: the plugin's code runs in its process. The boundary is
// made of four controls, each enforcing a capability of the manifest:
//   - bubblewrap (spawn's Bubblewrap isolation, never dropped): no network,
//     and of the host's files only /usr, /etc, the plugin's folder and
//     host.js (read-only), the fs.read paths (read-only), the fs.write paths
//     (writable) and an empty scratch directory the process starts in; its
//     own PID namespace; an environment holding spawn's defaults and the
//     granted secrets only;
//   - Node's permission model: reads only in the plugin's folder, host.js
//     and the fs.read and fs.write paths, writes only in the fs.write paths,
//     no child process unless "process" is granted, no worker thread;
//   - a [netguard.Broker] per process, when network.hosts is granted: its
//     Unix socket is the sandbox's one way out, to the granted hosts only,
//     and never to loopback, private or link-local addresses unless allowed;
//   - cgroups (spawn's Limits): memory, processes and one CPU.
//
// Where bubblewrap or cgroups are unavailable nothing runs, and the error
// says which. docs/security/plugins.md lists what the sandbox stops and what
// it does not, with the test that proves each claim.
package host

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/netguard"
	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/plugin"
)

//go:embed host.js
var source []byte

// Hash is "sha256:" and the lowercase hex SHA-256 of host.js, the host every
// plugin runs under.
var Hash = sha256Hex(source)

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Bounds of the process, beyond the manifest's limits.
const (
	// hostTasks are the processes and threads of the host itself, which the
	// pids limit adds to the plugin's processes: bubblewrap (two) and node
	// (its main thread, four V8 workers, four libuv workers and a few more).
	hostTasks = 16
	// cpuPercent is the CPU a plugin's process may use: one CPU.
	cpuPercent = 100
	// Lifetime bounds a plugin process's life (spawn.Cmd.Timeout); the
	// caller may set its own.
	Lifetime = 30 * time.Minute
	// stderrKept is how much of the plugin's stderr is kept.
	stderrKept = 256 << 10
	// sandboxPATH is the PATH in the sandbox, which shows /usr only.
	sandboxPATH = "/usr/bin:/bin"
)

var (
	// ErrMemoryLimit reports a plugin killed at its memory limit.
	ErrMemoryLimit = errors.New("plugin killed at its memory limit")
	// ErrNode reports a node program that cannot run plugins.
	ErrNode = errors.New("node cannot run plugins")
)

// A Node is the node program plugins run with.
type Node struct {
	Path         string // absolute, links resolved: what runs (spawn.Cmd.Expect)
	Major, Minor int
}

// permissionFlag is the flag that turns on Node's permission model.
func (n Node) permissionFlag() string {
	if n.Major > 23 || n.Major == 23 && n.Minor >= 5 || n.Major == 22 && n.Minor >= 13 {
		return "--permission"
	}
	return "--experimental-permission"
}

// FindNode finds program (such as "node") as spawn finds a stdio server's
// program, in the PATH of Zero's environment, and asks it its version, in
// the sandbox. Node 20 or later is needed, for its permission model. A
// version is asked once per file: the same path with the same inode, size
// and modification time answers from memory.
func FindNode(ctx context.Context, program string) (Node, error) {
	dir, err := os.MkdirTemp("", "zero-node-")
	if err != nil {
		return Node{}, err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return Node{}, err
	}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		return Node{}, err
	}
	defer roots.Close()
	cmd := spawn.Cmd{Program: program, Args: []string{"--version"}, Dir: dir, Roots: roots, Timeout: 30 * time.Second,
		Isolation: spawn.Bubblewrap, OutputLimit: 4096}
	path, err := spawn.Resolve(cmd)
	if err != nil {
		return Node{}, fmt.Errorf("find node: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Node{}, fmt.Errorf("find node: %w", err)
	}
	id := nodeFile{path: path, size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.inode = st.Ino
	}
	nodesMu.Lock()
	n, ok := nodes[id]
	nodesMu.Unlock()
	if ok {
		return n, nil
	}
	cmd.Program, cmd.Expect = path, path
	if !strings.HasPrefix(path, "/usr/") {
		cmd.ReadOnlyFiles = []string{path}
	}
	res, err := spawn.Run(ctx, cmd)
	if err != nil {
		return Node{}, fmt.Errorf("find node: %w", err)
	}
	version := strings.TrimSpace(string(res.Stdout))
	major, minor, ok := parseVersion(version)
	if res.ExitCode != 0 || !ok {
		return Node{}, fmt.Errorf("%w: %s --version said %q (exit %d)", ErrNode, path, version, res.ExitCode)
	}
	if major < 20 {
		return Node{}, fmt.Errorf("%w: %s is node %s; plugins need node 20 or later, for its permission model", ErrNode, path, version)
	}
	n = Node{Path: path, Major: major, Minor: minor}
	nodesMu.Lock()
	nodes[id] = n
	nodesMu.Unlock()
	return n, nil
}

// nodeFile tells one node program file from another.
type nodeFile struct {
	path  string
	size  int64
	mtime time.Time
	inode uint64
}

var (
	nodesMu sync.Mutex
	nodes   = map[nodeFile]Node{}
)

// parseVersion reads "v20.20.2".
func parseVersion(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 || !strings.HasPrefix(v, "v") {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

// Options say what one plugin process is, and what it is granted.
type Options struct {
	Dir   string // the plugin's folder: absolute and canonical
	Entry string // the manifest's entry, relative to Dir
	// Capabilities are the plugin's whole set, as approved: the process
	// runs with all of them.
	Capabilities plugin.Capabilities
	// Workspace is the thread workspace: the fs.read and fs.write paths are
	// relative to its first root and must resolve inside it. A path missing
	// when the process starts is not shown.
	Workspace *fsroot.Set
	// Secrets are the values of the granted secrets, by name; each name
	// must be in Capabilities.Secrets.
	Secrets map[string]string
	Node    Node   // from FindNode
	DataDir string // Zero's data directory: host.js is written in DataDir/plugin-host
	// Allow lists the addresses the broker may reach despite the
	// private-network block (ZERO_ALLOWED_LOCAL_ORIGINS).
	Allow []netip.Prefix
	// Resolver looks up host names for the broker; nil is the system's.
	Resolver netguard.Resolver
	// SocketDir is where the broker makes its socket's directory; "" is
	// the system's temporary directory (a socket's path is at most 107
	// bytes).
	SocketDir string
}

// A Sandbox is one plugin process, ready to start: its command, and what
// serves it while it runs. The caller starts Cmd with spawn.Start and calls
// Close once the process ended.
type Sandbox struct {
	Cmd    spawn.Cmd
	limits plugin.Limits // with the defaults filled in
	broker *netguard.Broker
	roots  *fsroot.Set
	run    string // the scratch directory the process runs in
}

// Command builds the sandbox of one plugin process: it writes host.js (or
// checks the copy there), makes an empty scratch directory for the process
// to start in, resolves the granted paths in the workspace, and starts the
// broker when network.hosts is granted, for as long as ctx lasts or until
// Close.
func Command(ctx context.Context, o Options) (*Sandbox, error) {
	c := o.Capabilities
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	hostFile, err := Install(o.DataDir)
	if err != nil {
		return nil, err
	}
	reads, writes, err := grantedPaths(o.Workspace, c)
	if err != nil {
		return nil, err
	}
	secrets := map[string]string{}
	for name, v := range o.Secrets {
		if !slices.Contains(c.Secrets, name) {
			return nil, fmt.Errorf("plugin: secret %q is not granted (secrets)", name)
		}
		secrets[name] = v
	}
	s := &Sandbox{limits: c.EffectiveLimits()}
	if s.run, err = os.MkdirTemp(filepath.Dir(hostFile), "run-"); err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	if s.roots, err = fsroot.Open([]string{s.run}); err != nil {
		s.Close()
		return nil, fmt.Errorf("plugin: %w", err)
	}
	if len(c.NetworkHosts) > 0 {
		s.broker, err = netguard.NewBroker(ctx, netguard.BrokerOptions{Hosts: c.NetworkHosts, Allow: o.Allow,
			Resolver: o.Resolver, Dir: o.SocketDir})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("plugin: %w", err)
		}
	}
	config := struct {
		Secrets   []string `json:"secrets"`
		Socket    string   `json:"socket"`
		Workspace string   `json:"workspace"`
	}{Secrets: append([]string{}, c.Secrets...)}
	if s.broker != nil {
		config.Socket = s.broker.Socket()
	}
	if roots := o.Workspace.Roots(); len(roots) > 0 {
		config.Workspace = roots[0].Canonical
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		s.Close()
		return nil, err
	}

	args := []string{o.Node.permissionFlag()}
	readOnlyDirs, readOnlyFiles := []string{o.Dir}, []string{hostFile}
	for _, p := range append([]string{o.Dir, hostFile}, reads.all()...) {
		args = append(args, "--allow-fs-read="+p)
	}
	for _, p := range writes.all() {
		args = append(args, "--allow-fs-read="+p)
	}
	for _, p := range writes.all() {
		args = append(args, "--allow-fs-write="+p)
	}
	if c.Process {
		args = append(args, "--allow-child-process")
	}
	args = append(args, hostFile, o.Dir, o.Entry, string(configJSON))
	if !fsroot.Within("/usr", o.Node.Path) {
		readOnlyFiles = append(readOnlyFiles, o.Node.Path)
	}
	s.Cmd = spawn.Cmd{
		Program:       o.Node.Path,
		Expect:        o.Node.Path,
		Args:          args,
		Dir:           s.run,
		Roots:         s.roots,
		Env:           envscrub.Spec{Set: map[string]string{"PATH": sandboxPATH}, Secret: secrets},
		Timeout:       Lifetime,
		OutputLimit:   stderrKept,
		Isolation:     spawn.Bubblewrap,
		ReadOnly:      append(readOnlyDirs, reads.dirs...),
		ReadOnlyFiles: append(readOnlyFiles, reads.files...),
		Writable:      writes.all(),
		Limits: &spawn.Limits{MemoryBytes: int64(s.limits.MemoryMiB) << 20, Pids: s.limits.Processes + hostTasks,
			CPUPercent: cpuPercent},
	}
	if s.broker != nil {
		s.Cmd.Socket = s.broker.Socket()
	}
	return s, nil
}

// checkOptions checks what Command is given beyond what the manifest's
// parser checked: the folder, the entry, node.
func checkOptions(o Options) error {
	switch {
	case o.Workspace == nil:
		return errors.New("plugin: no workspace")
	case o.Node.Path == "":
		return fmt.Errorf("%w: no node program (FindNode)", ErrNode)
	case o.DataDir == "":
		return errors.New("plugin: no data directory")
	}
	if real, err := filepath.EvalSymlinks(o.Dir); err != nil || real != o.Dir || !filepath.IsAbs(o.Dir) {
		return fmt.Errorf("plugin: folder %q is not an absolute, canonical path (%v)", o.Dir, err)
	}
	if !filepath.IsLocal(o.Entry) || filepath.Clean(o.Entry) != o.Entry || !strings.HasSuffix(o.Entry, ".js") {
		return fmt.Errorf("plugin: entry %q is not a .js file inside the plugin's folder", o.Entry)
	}
	if fi, err := os.Lstat(filepath.Join(o.Dir, o.Entry)); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("plugin: entry %s is not a file in the plugin's folder (%v)", o.Entry, err)
	}
	return nil
}

// CallTimeout is how long one call of the plugin may take.
func (s *Sandbox) CallTimeout() time.Duration {
	return s.limits.Timeout()
}

// Refusals returns the network requests the broker refused since the last
// call (none without network.hosts), and forgets them: what the result of
// a call should report.
func (s *Sandbox) Refusals() []netguard.Refusal {
	if s.broker == nil {
		return nil
	}
	return s.broker.Refusals()
}

// Ended says why the process ended, as spawn reported it, when a limit of
// the sandbox ended it: nil otherwise (it exited, or was stopped).
func (s *Sandbox) Ended(res spawn.Result) error {
	switch {
	case res.MemoryKilled:
		return fmt.Errorf("%w: the plugin's process went over %d MiB (limits.memory_mib) and the kernel killed it", ErrMemoryLimit, s.limits.MemoryMiB)
	case res.TimedOut:
		return fmt.Errorf("the plugin's process reached the end of its lifetime (%v) and was stopped", s.Cmd.Timeout)
	}
	return nil
}

// Close stops the broker and removes the scratch directory. The process
// must have ended. It may be called more than once.
func (s *Sandbox) Close() error {
	var errs []error
	if s.broker != nil {
		errs = append(errs, s.broker.Close())
	}
	if s.roots != nil {
		errs = append(errs, s.roots.Close())
		s.roots = nil
	}
	if s.run != "" {
		errs = append(errs, os.RemoveAll(s.run))
		s.run = ""
	}
	return errors.Join(errs...)
}

// Install writes host.js into dataDir/plugin-host (mode 0700), named by its
// hash, unless the file there has the right bytes, and returns its
// canonical path. A file there with other bytes is replaced, so the host
// that runs is always the one Hash names.
func Install(dataDir string) (string, error) {
	dir := filepath.Join(dataDir, "plugin-host")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("plugin host: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("plugin host: %s is not a directory", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("plugin host: %w", err)
		}
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", fmt.Errorf("plugin host: %w", err)
	}
	// .cjs: node reads it as CommonJS whatever a package.json above says.
	file := filepath.Join(dir, "host-"+strings.TrimPrefix(Hash, "sha256:")[:16]+".cjs")
	if data, err := os.ReadFile(file); err == nil && sha256Hex(data) == Hash {
		return file, nil
	}
	tmp, err := os.CreateTemp(dir, ".host-*")
	if err != nil {
		return "", fmt.Errorf("plugin host: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(source); err != nil {
		tmp.Close()
		return "", fmt.Errorf("plugin host: %w", err)
	}
	if err := tmp.Chmod(0o400); err != nil {
		tmp.Close()
		return "", fmt.Errorf("plugin host: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("plugin host: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return "", fmt.Errorf("plugin host: %w", err)
	}
	return file, nil
}

// paths are granted paths that exist, canonical, split by kind.
type paths struct{ dirs, files []string }

func (p paths) all() []string { return append(append([]string{}, p.dirs...), p.files...) }

// grantedPaths resolves c's fs.read and fs.write paths in the workspace. A
// path that does not exist is left out; so is one inside another of the
// same kind, or a read path inside a write path (the write grant covers it).
func grantedPaths(ws *fsroot.Set, c plugin.Capabilities) (reads, writes paths, err error) {
	resolve := func(kind string, list []string) (paths, error) {
		var out paths
		for _, rel := range list {
			if !filepath.IsLocal(rel) || strings.HasPrefix(rel, "~") {
				return paths{}, fmt.Errorf("plugin: %s path %q is not relative to the workspace", kind, rel)
			}
			p, err := ws.Resolve(rel)
			if err != nil {
				return paths{}, fmt.Errorf("plugin: %s path: %w", kind, err)
			}
			if !p.Exists {
				continue
			}
			// Node reads "," and "*" in a permission flag as a list and a
			// wildcard.
			if strings.ContainsAny(p.Abs, ",*") {
				return paths{}, fmt.Errorf("plugin: %s path %s holds a comma or an asterisk, which node's permission flags cannot name", kind, p.Abs)
			}
			fi, err := os.Stat(p.Abs)
			switch {
			case err != nil:
				return paths{}, fmt.Errorf("plugin: %s path: %w", kind, err)
			case fi.IsDir():
				out.dirs = append(out.dirs, p.Abs)
			case fi.Mode().IsRegular():
				out.files = append(out.files, p.Abs)
			default:
				return paths{}, fmt.Errorf("plugin: %s path %s is neither a directory nor a regular file", kind, rel)
			}
		}
		return out, nil
	}
	if writes, err = resolve("fs.write", c.FSWrite); err != nil {
		return paths{}, paths{}, err
	}
	if reads, err = resolve("fs.read", c.FSRead); err != nil {
		return paths{}, paths{}, err
	}
	writes.dirs, writes.files = outermost(writes.dirs, nil), outermost(writes.files, writes.dirs)
	reads.dirs = outermost(reads.dirs, writes.dirs)
	reads.files = outermost(reads.files, slices.Concat(reads.dirs, writes.dirs, writes.files))
	return reads, writes, nil
}

// outermost returns the paths of list that lie in no other of list, nor in
// one of covered, without duplicates.
func outermost(list, covered []string) []string {
	var out []string
	for i, p := range list {
		inside := false
		for j, q := range list {
			if i != j && fsroot.Within(q, p) && (q != p || j < i) {
				inside = true
			}
		}
		for _, q := range covered {
			inside = inside || fsroot.Within(q, p)
		}
		if !inside {
			out = append(out, p)
		}
	}
	return out
}
