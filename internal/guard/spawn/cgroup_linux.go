package spawn

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// selfCgroup lists this process's groups (a test points it elsewhere).
var selfCgroup = "/proc/self/cgroup"

// groupPrefix starts the name of every group made (a test makes its own,
// to find them among those of other processes).
var groupPrefix = "zero-"

// A cgroup is the group a limited child and everything it starts run in:
// one directory under the unified hierarchy (v2), or one under each of the
// memory, pids and cpu hierarchies (v1).
type cgroup struct {
	v2   bool
	dirs []string // every directory made, memory's first
	fd   int      // v2: the directory, for clone3's CLONE_INTO_CGROUP
}

// newCgroup makes a group with limits l, under this process's own groups.
func newCgroup(l Limits) (*cgroup, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	if len(own) == 0 {
		return nil, fmt.Errorf("%w: this process is in no group", ErrNoCgroups)
	}
	name := groupPrefix + randomName()
	if path, ok := own[""]; ok && isV2() {
		return newCgroupV2(filepath.Join(cgroupRoot, path, name), l)
	}
	g := &cgroup{fd: -1}
	mounts := v1Mounts()
	type setting struct{ file, value string }
	for _, c := range []struct {
		controller string
		settings   []setting
	}{
		{"memory", []setting{{"memory.limit_in_bytes", limitValue(l.MemoryBytes)}, {"memory.memsw.limit_in_bytes", limitValue(l.MemoryBytes)}}},
		{"pids", []setting{{"pids.max", maxValue(l.Pids)}}},
		{"cpu", []setting{{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", quotaValue(l.CPUPercent)}}},
	} {
		mount, path, ok := v1Hierarchy(c.controller, own, mounts)
		if !ok {
			g.close()
			return nil, fmt.Errorf("%w: no %s hierarchy", ErrNoCgroups, c.controller)
		}
		dir := filepath.Join(mount, path, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			g.close()
			return nil, fmt.Errorf("%w: %v", ErrNoCgroups, err)
		}
		g.dirs = append(g.dirs, dir)
		for _, s := range c.settings {
			if s.value == "" {
				continue
			}
			err := os.WriteFile(filepath.Join(dir, s.file), []byte(s.value), 0)
			if err != nil && !(s.file == "memory.memsw.limit_in_bytes" && errors.Is(err, os.ErrNotExist)) {
				g.close()
				return nil, fmt.Errorf("%w: %s: %v", ErrNoCgroups, s.file, err)
			}
		}
	}
	return g, nil
}

// newCgroupV2 makes dir under the unified hierarchy with limits l.
func newCgroupV2(dir string, l Limits) (*cgroup, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCgroups, err)
	}
	g := &cgroup{v2: true, dirs: []string{dir}, fd: -1}
	controllers, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !slices.Contains(strings.Fields(string(controllers)), c) {
			g.close()
			return nil, fmt.Errorf("%w: the %s controller is not delegated to %s", ErrNoCgroups, c, filepath.Dir(dir))
		}
	}
	for file, value := range map[string]string{"memory.max": maxValue64(l.MemoryBytes), "memory.swap.max": swapValue(l.MemoryBytes),
		"pids.max": maxValue(l.Pids), "cpu.max": cpuMaxValue(l.CPUPercent)} {
		err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0)
		if err != nil && !(file == "memory.swap.max" && errors.Is(err, os.ErrNotExist)) {
			g.close()
			return nil, fmt.Errorf("%w: %s: %v", ErrNoCgroups, file, err)
		}
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		g.close()
		return nil, fmt.Errorf("%w: %v", ErrNoCgroups, err)
	}
	g.fd = fd
	return g, nil
}

func limitValue(n int64) string {
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func maxValue(n int) string {
	if n <= 0 {
		return "max"
	}
	return strconv.Itoa(n)
}

func maxValue64(n int64) string {
	if n <= 0 {
		return "max"
	}
	return strconv.FormatInt(n, 10)
}

func swapValue(n int64) string {
	if n <= 0 {
		return "max"
	}
	return "0"
}

func quotaValue(percent int) string {
	if percent <= 0 {
		return "-1"
	}
	return strconv.Itoa(percent * 1000)
}

func cpuMaxValue(percent int) string {
	if percent <= 0 {
		return "max 100000"
	}
	return strconv.Itoa(percent*1000) + " 100000"
}

func randomName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// isV2 reports whether the unified hierarchy is mounted at cgroupRoot.
func isV2() bool {
	var st unix.Statfs_t
	return unix.Statfs(cgroupRoot, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// ownCgroups reads this process's groups: controller (or "" for the
// unified hierarchy) to path.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open(selfCgroup)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCgroups, err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// A v1Mount is where a v1 hierarchy is mounted, and the group path its
// mount shows as its root.
type v1Mount struct{ root, dir string }

// v1Mounts reads /proc/self/mountinfo once: each v1 controller's mount.
func v1Mounts() map[string]v1Mount {
	out := map[string]v1Mount{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 0 || sep+3 >= len(fields) || fields[sep+1] != "cgroup" || len(fields) < 5 {
			continue
		}
		for _, opt := range strings.Split(fields[sep+3], ",") {
			if _, seen := out[opt]; !seen {
				out[opt] = v1Mount{root: fields[3], dir: fields[4]}
			}
		}
	}
	return out
}

// v1Hierarchy finds where controller's v1 hierarchy is mounted (mounts)
// and this process's path in it (own), relative to the mount.
func v1Hierarchy(controller string, own map[string]string, mounts map[string]v1Mount) (mount, path string, ok bool) {
	path, ok = own[controller]
	m, mounted := mounts[controller]
	if !ok || !mounted {
		return "", "", false
	}
	rel := strings.TrimPrefix(path, m.root)
	if m.root != "/" && !strings.HasPrefix(path, m.root) {
		rel = "/"
	}
	return m.dir, rel, true
}

// start starts cmd inside g before it runs any code of its own: on v2
// through clone3 into the group; on v1 traced, so that it stops right after
// its exec, moved into the group, then let go. (The tracing thread is the
// one that forked it, as ptrace requires; the thread itself never joins the
// group.)
func (g *cgroup) start(cmd *exec.Cmd) error {
	if g.v2 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = g.fd
		return cmd.Start()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd.SysProcAttr.Ptrace = true
		if err := cmd.Start(); err != nil {
			done <- err
			return
		}
		pid := cmd.Process.Pid
		fail := func(err error) {
			unix.Kill(pid, unix.SIGKILL)
			unix.PtraceDetach(pid)
			cmd.Wait()
			done <- err
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
			fail(fmt.Errorf("the child did not stop at its start: %v", err))
			return
		}
		for _, dir := range g.dirs {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				fail(fmt.Errorf("%w: join %s: %v", ErrNoCgroups, dir, err))
				return
			}
		}
		if err := unix.PtraceDetach(pid); err != nil {
			fail(fmt.Errorf("let the child go: %v", err))
			return
		}
		done <- nil
	}()
	return <-done
}

// memoryKilled reports whether the kernel killed a process of g at its
// memory limit.
func (g *cgroup) memoryKilled() bool {
	if len(g.dirs) == 0 {
		return false
	}
	file := "memory.oom_control"
	if g.v2 {
		file = "memory.events"
	}
	data, err := os.ReadFile(filepath.Join(g.dirs[0], file))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok && strings.TrimSpace(n) != "0" {
			return true
		}
	}
	return false
}

// close kills whatever is left in g (a process that left the child's
// process group), then removes its directories.
func (g *cgroup) close() {
	for i := len(g.dirs) - 1; i >= 0; i-- {
		dir := g.dirs[i]
		// A group is removed once the last of its processes is gone, which
		// the kernel may take a moment to see: try for up to 2 s.
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, p := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(p); err == nil && pid > 0 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
		}
	}
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	g.dirs = nil
}

// LimitsAvailable reports whether resource limits can be enforced here: a
// group can be made, limited and removed. It is nil, or wraps
// ErrNoCgroups with why not.
func LimitsAvailable() error {
	g, err := newCgroup(Limits{MemoryBytes: 64 << 20, Pids: 64, CPUPercent: 100})
	if err != nil {
		return err
	}
	g.close()
	return nil
}
