package databasetest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
)

// bin finds the PostgreSQL programs: Debian's newest version.
func bin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL under /usr/lib/postgresql (Debian's postgresql package installs it)")
}

// Postgres starts a throwaway PostgreSQL cluster for t and returns its DSN
// (the postgres database, as the postgres user, over the socket): initdb in
// a new temporary folder, the server on a Unix socket there (no TCP),
// without fsync, stopped and removed when the test ends. As root it runs as
// the postgres user that Debian's package makes (PostgreSQL refuses root).
// Without PostgreSQL the test is skipped, or fails when
// ZERO_REQUIRE_POSTGRES is set (scripts/test sets it).
func Postgres(t testing.TB) string {
	t.Helper()
	return postgres(t, false)
}

// PostgresDurable is Postgres with fsync and synchronous commits on, as a
// real server runs: for benchmarks that compare its figures with SQLite's,
// which syncs every commit.
func PostgresDurable(t testing.TB) string {
	t.Helper()
	return postgres(t, true)
}

func postgres(t testing.TB, durable bool) string {
	t.Helper()
	if _, err := bin(); err != nil {
		if os.Getenv("ZERO_REQUIRE_POSTGRES") != "" {
			t.Fatalf("PostgreSQL is required (ZERO_REQUIRE_POSTGRES is set): %v", err)
		}
		t.Skip(err)
	}
	dsn, stop, err := startCluster(durable)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return dsn
}

// startCluster starts a throwaway cluster, as Postgres describes (durable:
// with fsync), and returns its DSN and what stops and removes it.
func startCluster(durable bool) (dsn string, stop func(), err error) {
	pgbin, err := bin()
	if err != nil {
		return "", nil, err
	}
	// Not a test's TempDir: its parent is 0700 and root's, which postgres
	// cannot enter. The socket's path must stay short.
	dir, err := os.MkdirTemp("", "zpg-")
	if err != nil {
		return "", nil, err
	}
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	stops = append(stops, func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", nil, fmt.Errorf("running as root, PostgreSQL needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", nil, err
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(pgbin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C", "TZ=UTC"}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// pg_ctl starts the server in the background, not as this process's
	// child: tests that look for the children a workspace left see none
	// of PostgreSQL's.
	const port = "5432"
	logPath := filepath.Join(dir, "postgres.log")
	opts := "-k " + dir + " -p " + port + " -c listen_addresses= -c max_connections=300"
	if !durable {
		opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if out, err := command("pg_ctl", "-D", data, "-l", logPath, "-o", opts, "-w", "-t", "30", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logPath)
		return "", nil, fmt.Errorf("PostgreSQL did not start: %v\n%s\n%s", err, out, log)
	}
	stops = append(stops, func() {
		command("pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "20", "stop").Run()
	})
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=disable", dir, port), stop, nil
}
