package spawn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/guard/fsroot"
)

// bwrapPath is where bubblewrap must be. It is a fixed path, not a PATH
// lookup, so that nothing earlier in a PATH can stand in for the sandbox.
const bwrapPath = "/usr/bin/bwrap"

// bwrapFlags returns the bubblewrap options for a sandbox whose writable
// directory is workdir (canonical, absolute), shown at at (workdir itself
// unless [Cmd].WorkAt), as user 65534 when nobody, showing b too. The probe
// uses the same flags as every run.
//
// They follow the recipe verified on these machines, with three changes:
//   - Debian merges /usr, so binding /usr alone leaves no dynamic loader:
//     /lib, /lib64, /bin and /sbin are recreated as the same symbolic links
//     into /usr as on the host.
//   - /etc is bound read-only: without it /etc/alternatives links (awk,
//     editor...) dangle, and users, groups and ld.so.cache are missing. What
//     of it not every user may read (/etc/shadow, /etc/ssl/private...) is
//     hidden ([hiddenEtc]): run as root, the sandbox would read it.
//   - The work directory is bound at its own path, not at /work, so that the
//     paths a caller sees (and passes as arguments) mean the same inside
//     (unless the caller asks for another, [Cmd].WorkAt).
//     It is bound after --tmpfs /tmp, so a work directory under /tmp shows
//     through the empty tmpfs.
//
// Two hardenings are added: --cap-drop ALL (run as root, bubblewrap would
// otherwise keep every capability inside the sandbox's user namespace) and
// --remount-ro / (the sandbox's root directory, a tmpfs bubblewrap makes,
// would otherwise be writable). What stays writable is the work directory,
// and the sandbox's private /tmp and /dev/shm, which vanish with it.
//
// The paths of b (canonical) are bound after the private /tmp, so one under
// /tmp shows through, and before the work directory, so the work directory
// stays writable inside one of them: the read-only directories, then the
// read-only files, then the writable paths (a writable path inside a
// read-only directory stays writable), then the socket.
func bwrapFlags(workdir, at string, nobody bool, b binds) []string {
	flags := []string{
		"--unshare-all", // user (when possible), ipc, pid, net, uts, cgroup: no network but an empty loopback
		"--die-with-parent",
		"--new-session", // no ioctl(TIOCSTI) into the caller's terminal
		"--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin",
		"--symlink", "usr/sbin", "/sbin",
		"--ro-bind", "/etc", "/etc",
	}
	if nobody {
		flags = append(flags, "--unshare-user", "--uid", "65534", "--gid", "65534")
	}
	flags = append(flags, hiddenEtc()...)
	flags = append(flags,
		"--proc", "/proc",
		"--dev", "/dev",
		"--tmpfs", "/tmp",
	)
	for _, p := range b.readOnlyPaths() {
		flags = append(flags, "--ro-bind", p, p)
	}
	for _, p := range b.writable {
		flags = append(flags, "--bind", p, p)
	}
	if b.socket != "" {
		flags = append(flags, "--ro-bind", b.socket, b.socket) // connecting needs no write access to the mount
	}
	return append(flags,
		"--bind", workdir, at,
		"--remount-ro", "/", // the sandbox's own root, else a writable tmpfs
		"--chdir", at,
	)
}

// binds are the host paths a sandbox shows besides /usr, /etc and the work
// directory, each canonical.
type binds struct {
	readOnly      []string // directories ([Cmd].ReadOnly)
	readOnlyFiles []string
	writable      []string
	socket        string
}

// readOnlyPaths are the paths b shows read-only.
func (b binds) readOnlyPaths() []string { return slices.Concat(b.readOnly, b.readOnlyFiles) }

// checkBinds checks the paths c asks a sandbox to show, each on its own;
// [prepared.sandbox] checks them against each other and the work directory.
func checkBinds(c Cmd) (binds, error) {
	var b binds
	var err error
	if b.readOnly, err = readOnlyDirs(c.ReadOnly); err != nil {
		return binds{}, err
	}
	for _, f := range c.ReadOnlyFiles {
		mode, err := canonicalBind("read-only file", f)
		if err != nil {
			return binds{}, err
		}
		if !mode.IsRegular() {
			return binds{}, fmt.Errorf("read-only file %s is not a regular file", f)
		}
		b.readOnlyFiles = append(b.readOnlyFiles, f)
	}
	for _, w := range c.Writable {
		mode, err := canonicalBind("writable path", w)
		if err != nil {
			return binds{}, err
		}
		if !mode.IsRegular() && !mode.IsDir() {
			return binds{}, fmt.Errorf("writable path %s is neither a directory nor a regular file", w)
		}
		for _, sys := range sandboxVisible {
			if fsroot.Within(sys, w) {
				return binds{}, fmt.Errorf("writable path %s is in %s, which the sandbox keeps read-only", w, sys)
			}
		}
		b.writable = append(b.writable, w)
	}
	if c.Socket != "" {
		mode, err := canonicalBind("socket", c.Socket)
		if err != nil {
			return binds{}, err
		}
		if mode&fs.ModeSocket == 0 {
			return binds{}, fmt.Errorf("socket %s is not a Unix socket", c.Socket)
		}
		b.socket = c.Socket
	}
	return b, nil
}

// canonicalBind checks a path to bind into a sandbox: absolute, existing,
// canonical (bubblewrap binds it at that path, and would follow a link),
// neither the root nor in a directory the sandbox makes its own. It
// returns the path's type.
func canonicalBind(what, p string) (fs.FileMode, error) {
	if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 || filepath.Clean(p) != p {
		return 0, fmt.Errorf("%s %q: not an absolute, clean path", what, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if real != p {
		return 0, fmt.Errorf("%s %s is not canonical: it resolves to %s", what, p, real)
	}
	if p == "/" {
		return 0, fmt.Errorf("%s %s is the root", what, p)
	}
	for _, k := range kernelDirs {
		if fsroot.Within(k, p) {
			return 0, fmt.Errorf("%s %s is in %s, which the sandbox makes its own", what, p, k)
		}
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return fi.Mode(), nil
}

// kernelDirs may not be bound read-only into the sandbox: it has its own.
var kernelDirs = []string{"/proc", "/dev", "/sys"}

// readOnlyDirs checks [Cmd].ReadOnly and returns each directory with its
// links resolved.
func readOnlyDirs(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) || strings.IndexByte(d, 0) >= 0 {
			return nil, fmt.Errorf("read-only directory %q: not an absolute path", d)
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("read-only directory: %w", err)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("read-only directory %s is not a directory", d)
		}
		if real == "/" {
			return nil, fmt.Errorf("read-only directory %s is the root", d)
		}
		for _, k := range kernelDirs {
			if fsroot.Within(k, real) {
				return nil, fmt.Errorf("read-only directory %s is in %s, which the sandbox makes its own", d, k)
			}
		}
		out = append(out, real)
	}
	return out, nil
}

// sandboxVisible are the host directories the sandbox shows (besides the
// work directory): a program must lie in one of them, or in the work
// directory, to be run there.
var sandboxVisible = []string{"/usr", "/etc"}

// sandbox turns p into a bubblewrap run of the same program. set is what the
// caller set explicitly in the environment, which the sandbox leaves alone.
func (p *prepared) sandbox(bwrap string, set map[string]string) error {
	// Binding a work directory that holds /usr or /etc read-write would undo
	// the read-only view of the system.
	shown := append(slices.Clone(sandboxVisible), p.binds.readOnly...)
	for _, sys := range shown {
		if fsroot.Within(p.dir, sys) {
			return fmt.Errorf("working directory %s holds %s, which the sandbox keeps read-only", p.dir, sys)
		}
	}
	// A path bound before another that holds it is covered by it: the work
	// directory, bound last, and the writable paths, bound after the
	// read-only ones, would make what they hold writable.
	own := slices.Concat(p.binds.readOnlyFiles, p.binds.writable)
	if p.binds.socket != "" {
		own = append(own, p.binds.socket)
	}
	for _, b := range own {
		if fsroot.Within(p.dir, b) {
			return fmt.Errorf("working directory %s holds %s, which the sandbox binds on its own", p.dir, b)
		}
	}
	for _, w := range p.binds.writable {
		for _, r := range p.binds.readOnlyPaths() {
			if fsroot.Within(w, r) {
				return fmt.Errorf("writable path %s holds %s, which the sandbox keeps read-only", w, r)
			}
		}
	}
	at := p.dir
	if p.workAt != "" {
		if err := p.checkWorkAt(); err != nil {
			return err
		}
		at = p.workAt
	}
	// p.path has its links resolved (see resolve).
	visible := fsroot.Within(p.dir, p.path)
	for _, d := range slices.Concat(shown, p.binds.readOnlyFiles, p.binds.writable) {
		visible = visible || fsroot.Within(d, p.path)
	}
	if !visible {
		return fmt.Errorf("%w: %s is not visible inside the sandbox (only /usr, /etc, the working directory and the paths given to bind are)", ErrNotFound, p.path)
	}
	program := p.path
	if rel, err := filepath.Rel(p.dir, p.path); err == nil && fsroot.Within(p.dir, p.path) {
		program = filepath.Join(at, rel)
	}
	// The parent's home and temporary directory are not in the sandbox.
	if _, ok := set["HOME"]; !ok {
		p.env = setEnv(p.env, "HOME", at)
	}
	if _, ok := lookupEnv(p.env, "TMPDIR"); ok {
		if _, ok := set["TMPDIR"]; !ok {
			p.env = setEnv(p.env, "TMPDIR", "/tmp")
		}
	}
	argv := append([]string{"bwrap"}, bwrapFlags(p.dir, at, p.nobody, p.binds)...)
	argv = append(argv, "--", program)
	p.argv = append(argv, p.argv[1:]...)
	p.path = bwrap
	return nil
}

// checkWorkAt checks where the sandbox is to show the work directory: it
// is bound last, so it may not cover what the sandbox shows on its own or
// was asked to bind, nor lie in it.
func (p *prepared) checkWorkAt() error {
	at := p.workAt
	if !filepath.IsAbs(at) || strings.IndexByte(at, 0) >= 0 || filepath.Clean(at) != at || at == "/" {
		return fmt.Errorf("work directory's place %q: not an absolute, clean path below the root", at)
	}
	own := slices.Concat(sandboxVisible, kernelDirs, p.binds.readOnlyPaths(), p.binds.writable)
	if p.binds.socket != "" {
		own = append(own, p.binds.socket)
	}
	for _, o := range own {
		if fsroot.Within(at, o) || fsroot.Within(o, at) {
			return fmt.Errorf("work directory's place %s overlaps %s, which the sandbox shows on its own", at, o)
		}
	}
	return nil
}

// prober runs the bubblewrap probe once and remembers its answer.
type prober struct {
	bwrap string
	once  sync.Once
	err   error
}

// isolation is the probe Run and IsolationAvailable consult.
var isolation = &prober{bwrap: bwrapPath}

// IsolationAvailable reports whether [Bubblewrap] isolation works here: nil
// when it does, or an error wrapping [ErrIsolationUnavailable] that says why.
// The first call runs /usr/bin/true in a sandbox with the exact flags every
// run uses; the answer is kept for the life of the process.
func IsolationAvailable() error {
	return isolation.available()
}

func (pr *prober) available() error {
	pr.once.Do(func() { pr.err = pr.probe() })
	return pr.err
}

func (pr *prober) probe() error {
	unavailable := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrIsolationUnavailable, fmt.Sprintf(format, args...))
	}
	if runtime.GOOS != "linux" {
		return unavailable("bubblewrap runs on Linux only")
	}
	if err := executable(pr.bwrap); err != nil {
		return unavailable("%v", err)
	}
	tmp, err := os.MkdirTemp("", "zero-spawn-probe-")
	if err != nil {
		return unavailable("probe directory: %v", err)
	}
	defer os.RemoveAll(tmp)
	dir, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return unavailable("probe directory: %v", err)
	}
	p := &prepared{path: "/usr/bin/true", argv: []string{"true"}, dir: dir, env: []string{}, timeout: 10 * time.Second, limit: 4096}
	if err := p.sandbox(pr.bwrap, nil); err != nil {
		return unavailable("%v", err)
	}
	res, err := runWith(context.Background(), func() (*prepared, error) { return p, nil })
	switch {
	case err != nil:
		return unavailable("%v", err)
	case res.ExitCode != 0 || res.Signal != "":
		return unavailable("%s exited with code %d %s: %s", pr.bwrap, res.ExitCode, res.Signal, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

// maxHidden bounds the entries of /etc that hiddenEtc hides; past it the
// sandbox shows no /etc at all.
const maxHidden = 256

// hiddenEtc returns the bubblewrap options that hide, in the /etc a
// sandbox shows, every entry not every user may read: a file without the
// read bit for others is covered with an empty file, a directory without
// read and search bits for others with an empty, read-only tmpfs. Read once
// per process: what /etc holds changes seldom, and a file added later is
// covered at the next start of Zero.
var hiddenEtc = sync.OnceValue(func() []string {
	var flags []string
	err := filepath.WalkDir("/etc", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch perm := fi.Mode().Perm(); {
		case d.IsDir() && perm&0o005 != 0o005:
			flags = append(flags, "--tmpfs", p, "--remount-ro", p)
			return fs.SkipDir
		case !d.IsDir() && perm&0o004 == 0:
			flags = append(flags, "--ro-bind", "/dev/null", p)
		}
		if len(flags) > 3*maxHidden {
			return errTooMany
		}
		return nil
	})
	if err != nil {
		// What cannot be read here cannot be judged: show no /etc.
		return []string{"--tmpfs", "/etc", "--remount-ro", "/etc"}
	}
	return flags
})

var errTooMany = errors.New("too many entries to hide")
