package spawn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/envscrub"
)

// Modes of this test binary (see TestMain): a memory hog, and a process
// that starts as many children as it can.
const (
	hogEnv   = "ZERO_SPAWN_TEST_HOG"
	forksEnv = "ZERO_SPAWN_TEST_FORKS"
)

// hog touches 512 MiB, then says it did: under a lower memory limit it is
// killed first.
func hog() {
	var keep [][]byte
	for range 64 {
		b := make([]byte, 8<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		keep = append(keep, b)
	}
	fmt.Println("survived", len(keep))
	os.Exit(0)
}

// forks starts up to 200 sleeping children and says how many started and
// how many the kernel refused.
func forks() {
	started, refused := 0, 0
	var pids []string
	for range 200 {
		pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
		switch {
		case err == nil:
			started++
			pids = append(pids, strconv.Itoa(pid))
		case errors.Is(err, syscall.EAGAIN):
			refused++
		}
	}
	fmt.Printf("started %d refused %d pids %s\n", started, refused, strings.Join(pids, ","))
	os.Exit(0)
}

// limited skips the test where limits cannot be enforced (no writable
// cgroup hierarchy), saying so.
func limited(t *testing.T) {
	t.Helper()
	if err := LimitsAvailable(); err != nil {
		if os.Getenv("ZERO_REQUIRE_CGROUPS") != "" {
			t.Fatalf("cgroups are required (ZERO_REQUIRE_CGROUPS is set): %v", err)
		}
		t.Skipf("no resource limits here: %v", err)
	}
}

// selfCmd runs this test binary in the mode env names, under l.
func selfCmd(t *testing.T, env string, l *Limits) Cmd {
	roots, dir := workspace(t)
	return Cmd{Program: os.Args[0], Dir: dir, Roots: roots, Timeout: 60 * time.Second,
		Env: envscrub.Spec{Set: map[string]string{env: "1"}}, Limits: l}
}

// TestMemoryLimit: a child that goes past its memory limit is killed by
// the kernel, and the result says it was killed at the memory limit; the
// same child under no limit finishes.
func TestMemoryLimit(t *testing.T) {
	limited(t)
	res := run(t, selfCmd(t, hogEnv, &Limits{MemoryBytes: 64 << 20}))
	if !res.MemoryKilled || res.Signal != "killed" || strings.Contains(string(res.Stdout), "survived") {
		t.Fatalf("a hog under 64 MiB: killed %v, signal %q, exit %d, %s", res.MemoryKilled, res.Signal, res.ExitCode, res.Stdout)
	}
	res = run(t, selfCmd(t, hogEnv, &Limits{MemoryBytes: 1 << 30}))
	if res.MemoryKilled || res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "survived 64") {
		t.Fatalf("a hog under 1 GiB: killed %v, exit %d, %s", res.MemoryKilled, res.ExitCode, res.Stdout)
	}
}

// TestPidsLimit: a child that starts children without end is stopped at
// its process limit (the kernel refuses the rest), and what it started is
// gone when the run ends, its group removed.
func TestPidsLimit(t *testing.T) {
	limited(t)
	old := groupPrefix
	groupPrefix = "zero-test-" + randomName() + "-"
	defer func() { groupPrefix = old }()
	res := run(t, selfCmd(t, forksEnv, &Limits{Pids: 48}))
	var started, refused int
	var pids string
	if _, err := fmt.Sscanf(string(res.Stdout), "started %d refused %d pids %s", &started, &refused, &pids); err != nil {
		t.Fatalf("output %q: %v", res.Stdout, err)
	}
	if started >= 48 || refused == 0 {
		t.Errorf("under pids.max 48: %d started, %d refused", started, refused)
	}
	for _, pid := range strings.Split(pids, ",") {
		if data, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && string(data) == "sleep\x0030\x00" {
			t.Errorf("child %s is left running after the run", pid)
		}
	}
	made, _ := filepath.Glob("/sys/fs/cgroup/*/" + groupPrefix + "*")
	if len(made) != 0 {
		t.Errorf("groups left: %v", made)
	}
}

// TestCPULimit: the quota is written as asked (a share of one CPU), and
// a group without a CPU limit has none.
func TestCPULimit(t *testing.T) {
	limited(t)
	g, err := newCgroup(Limits{CPUPercent: 25})
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	file, want := "cpu.cfs_quota_us", "25000"
	if g.v2 {
		file, want = "cpu.max", "25000 100000"
	}
	for _, dir := range g.dirs {
		if data, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
			if got := strings.TrimSpace(string(data)); got != want {
				t.Errorf("%s: %q, want %q", file, got, want)
			}
			return
		}
	}
	t.Errorf("no group holds %s", file)
}

// TestLimitsInSandbox: limits hold for a child in bubblewrap too (the
// sandbox and what it runs are in the group): tail of /dev/zero, which
// reads one endless line, is killed at 64 MiB.
func TestLimitsInSandbox(t *testing.T) {
	limited(t)
	if err := IsolationAvailable(); err != nil {
		t.Skipf("no bubblewrap: %v", err)
	}
	roots, dir := workspace(t)
	res := run(t, Cmd{Program: "tail", Args: []string{"/dev/zero"}, Dir: dir, Roots: roots, Timeout: 60 * time.Second,
		Isolation: Bubblewrap, Limits: &Limits{MemoryBytes: 64 << 20, Pids: 32}})
	if !res.MemoryKilled || res.Isolation != Bubblewrap {
		t.Fatalf("tail /dev/zero in the sandbox under 64 MiB: killed %v, exit %d, signal %q, %s", res.MemoryKilled, res.ExitCode, res.Signal, res.Stderr)
	}
}

// TestLimitsRefusedWithoutCgroups: where no group can be made, a child
// with limits does not run at all (never unlimited), and the error says
// why.
func TestLimitsRefusedWithoutCgroups(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "cgroup")
	os.WriteFile(empty, nil, 0o600)
	old := selfCgroup
	selfCgroup = empty
	defer func() { selfCgroup = old }()
	roots, dir := workspace(t)
	marker := filepath.Join(dir, "ran")
	_, err := tryRun(t, Cmd{Program: "touch", Args: []string{marker}, Dir: dir, Roots: roots, Limits: &Limits{MemoryBytes: 64 << 20}})
	if !errors.Is(err, ErrNoCgroups) {
		t.Fatalf("without cgroups: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the child ran without its limits")
	}
	if err := LimitsAvailable(); !errors.Is(err, ErrNoCgroups) {
		t.Errorf("LimitsAvailable without cgroups: %v", err)
	}
}
