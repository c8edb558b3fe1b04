package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/workspace/auth"
	"github.com/zero-dev/zero/internal/workspace/store"
)

// serveLockFile is the file in $ZERO_HOME that the running zero serve
// holds an exclusive flock on for its whole life. Once it listens, the
// file names it:
//
//	url http://127.0.0.1:7077
//	pid 1234
//	schema 3
//
// The lock, not the file, says whether a server runs: a server that died
// leaves the file behind, and its lock with it released. The file is never
// removed, so that two processes can never lock two different files.
const serveLockFile = "serve.lock"

// ErrNotRunning reports that no zero serve holds a home's lock.
var ErrNotRunning = errors.New("no zero serve is running")

// A RunningError reports that another zero serve holds the home's lock.
type RunningError struct {
	Home string
	URL  string // "" while it is starting
	PID  int
}

func (e *RunningError) Error() string {
	if e.URL == "" {
		return fmt.Sprintf("another zero serve is starting on %s (pid %d); wait for it, or stop it first", e.Home, e.PID)
	}
	return fmt.Sprintf("a zero serve is already running on %s at %s (pid %d): use it, or stop it first; 'zero login' prints a new login link",
		e.Home, e.URL, e.PID)
}

// listen takes zero serve's address before anything is made or opened
// under home. An address in use is the running server's, if home has one,
// or another program's: then it says how to pick another port.
func listen(l localhttp.Listen, home string) (net.Listener, error) {
	ln, err := net.Listen("tcp", l.Addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, err
	}
	if srv, rerr := running(home); rerr == nil {
		return nil, &RunningError{Home: home, URL: srv.URL, PID: srv.PID}
	}
	msg := fmt.Sprintf("%s is in use by another program: pick another port with --addr", l.Addr)
	if _, port, _ := net.SplitHostPort(l.Addr); port != "" {
		if free := freePort(l.Host, port); free != "" {
			msg += ", such as zero serve --addr " + free
		}
	}
	return nil, errors.New(msg)
}

// freePort returns an address on host with a port just above port that is
// free at this moment, or "".
func freePort(host, port string) string {
	n, err := strconv.Atoi(port)
	if err != nil {
		return ""
	}
	for p := n + 1; p <= n+100 && p < 1<<16; p++ {
		addr := net.JoinHostPort(host, strconv.Itoa(p))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	return ""
}

// serveLock is the held lock of a running zero serve.
type serveLock struct{ f *os.File }

// lockServe takes home's lock, or says which server holds it. A server
// still starting is given a moment to say where it listens.
func lockServe(home string) (*serveLock, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", home, err)
	}
	path := filepath.Join(home, serveLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for try := 0; ; try++ {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// A server still starting has not said where it listens yet, and a
		// 'zero login' holds a shared lock for a moment: try again a little.
		held := readLock(f)
		if held.URL != "" && try >= 4 || try >= 20 {
			f.Close()
			return nil, &RunningError{Home: home, URL: held.URL, PID: held.PID}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Forget a dead server's address before anyone reads it.
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("clear %s: %w", path, err)
	}
	pid := strconv.Itoa(os.Getpid())
	if _, err := f.WriteAt([]byte("pid "+pid+"\n"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &serveLock{f: f}, nil
}

// publish writes where the server listens.
func (l *serveLock) publish(url string) error {
	content := fmt.Sprintf("url %s\npid %d\nschema %d\n", url, os.Getpid(), store.Version())
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	if _, err := l.f.WriteAt([]byte(content), 0); err != nil {
		return err
	}
	return l.f.Sync()
}

// release clears the file and lets the lock go.
func (l *serveLock) release() error {
	l.f.Truncate(0)
	return l.f.Close()
}

// lockInfo is what a lock file says.
type lockInfo struct {
	URL         string
	PID, Schema int
}

// readLock parses a lock file.
func readLock(f *os.File) lockInfo {
	var info lockInfo
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	for _, line := range strings.Split(string(b[:n]), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "url":
			info.URL = v
		case "pid":
			info.PID, _ = strconv.Atoi(v)
		case "schema":
			info.Schema, _ = strconv.Atoi(v)
		}
	}
	return info
}

// running returns what the lock of the zero serve running on home says, or
// an error wrapping ErrNotRunning.
func running(home string) (lockInfo, error) {
	path := filepath.Join(home, serveLockFile)
	notRunning := fmt.Errorf("%w on %s: start one with 'zero serve', which prints a login link", ErrNotRunning, home)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return lockInfo{}, notRunning
	}
	if err != nil {
		return lockInfo{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return lockInfo{}, notRunning
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return lockInfo{}, fmt.Errorf("lock %s: %w", path, err)
	}
	info := readLock(f)
	if info.URL == "" {
		return lockInfo{}, fmt.Errorf("zero serve on %s is still starting; try again in a moment", home)
	}
	return info, nil
}

// NewLoginLink makes a one-time login link for the owner of the workspace
// under home, for the zero serve running on it (ErrNotRunning if none). It
// opens the database, never the audit log, which the server holds. Whoever
// can read home is its owner: this is the owner's own way back in.
func NewLoginLink(ctx context.Context, home, databaseURL string) (string, error) {
	srv, err := running(home)
	if err != nil {
		return "", err
	}
	if srv.Schema != store.Version() {
		// Opening the database would migrate it under the running server.
		return "", fmt.Errorf("the zero serve at %s uses database schema %d, this zero %d: run the 'zero login' of the binary that serves",
			srv.URL, srv.Schema, store.Version())
	}
	db, err := openStore(ctx, Options{Home: home, DatabaseURL: databaseURL})
	if err != nil {
		return "", err
	}
	defer db.Close()
	a := auth.New(db)
	owner, err := a.EnsureOwner(ctx, "owner")
	if err != nil {
		return "", fmt.Errorf("find the owner: %w", err)
	}
	token, err := a.LoginLink(ctx, owner)
	if err != nil {
		return "", fmt.Errorf("make a login link: %w", err)
	}
	return auth.LoginURL(srv.URL, token), nil
}
