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
	"time"
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
	pgbin, err := bin()
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_POSTGRES") != "" {
			t.Fatalf("PostgreSQL is required (ZERO_REQUIRE_POSTGRES is set): %v", err)
		}
		t.Skip(err)
	}
	// Not t.TempDir: its parent is 0700 and root's, which postgres cannot
	// enter. The socket's path must stay short.
	dir, err := os.MkdirTemp("", "zpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, PostgreSQL needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
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
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	const port = "5432"
	srv := command("postgres", "-D", data, "-k", dir, "-p", port, "-c", "listen_addresses=", "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-done
		}
		logf.Close()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if command("pg_isready", "-q", "-h", dir, "-p", port, "-U", "postgres").Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			t.Fatalf("PostgreSQL did not start:\n%s", log)
		}
	}
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=disable", dir, port)
}
