package spawn

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zero-dev/zero/internal/guard/envscrub"
)

// dialEnv, set in the environment of this test binary, makes it connect to
// the Unix socket it names, print the line it reads, then try to read the
// file named by dialBesideEnv (see TestMain), for TestIsolationSocket.
const (
	dialEnv       = "ZERO_SPAWN_TEST_DIAL"
	dialBesideEnv = "ZERO_SPAWN_TEST_DIAL_BESIDE"
)

func dialSocket() {
	c, err := net.Dial("unix", os.Getenv(dialEnv))
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	fmt.Printf("read %q %v\n", line, err)
	if _, err := os.ReadFile(os.Getenv(dialBesideEnv)); err == nil {
		fmt.Println("read the file beside the socket")
	}
	os.Exit(0)
}

// writeFile writes data to a new file, failing the test if it cannot.
func writeFile(t *testing.T, path, data string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// refused runs c (in a fresh workspace unless c has one) with a program
// that would leave a marker, and checks that it is refused, naming want,
// and that nothing ran.
func refused(t *testing.T, what string, c Cmd, want string) {
	t.Helper()
	marker := filepath.Join(outsideDir(t), "ran")
	c.Program, c.Args, c.Isolation = "touch", []string{marker}, Bubblewrap
	_, err := tryRun(t, c)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: Run = %v, want a refusal naming %q", what, err, want)
	}
	if _, err := os.Lstat(marker); err == nil {
		t.Errorf("%s: the command ran", what)
	}
}

// TestIsolationWritable: the directories and files of Cmd.Writable are
// writable in the sandbox, and what is written there is on the host; a
// writable directory inside a read-only one stays writable, and beside them
// nothing is. A path that is not absolute, clean, canonical or existing,
// the root, one in /proc, /dev, /sys, /usr or /etc, one the work directory
// holds and one that holds a read-only path are refused, and nothing runs.
func TestIsolationWritable(t *testing.T) {
	requireIsolation(t)
	rw := outsideDir(t)
	files := outsideDir(t)
	rwFile := writeFile(t, filepath.Join(files, "notes.txt"), "old\n", 0o644)
	ro := outsideDir(t)
	sub := filepath.Join(ro, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`echo a > %[1]s/new && echo wrote-dir
echo b > %[2]s && echo wrote-file
echo c 2>/dev/null > %[3]s/beside && echo wrote-beside-file
echo d 2>/dev/null > %[4]s/x && echo wrote-read-only
echo e > %[5]s/y && echo wrote-sub`, rw, rwFile, files, ro, sub)
	res := runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", script}, ReadOnly: []string{ro}, Writable: []string{rw, rwFile, sub}})
	// Beside the writable file is the sandbox's own /tmp (the test's
	// directories are there), which may be written but never reaches the
	// host.
	got := strings.Replace(string(res.Stdout), "wrote-beside-file\n", "", 1)
	if want := "wrote-dir\nwrote-file\nwrote-sub\n"; got != want {
		t.Errorf("stdout %q, want %q; stderr %s", res.Stdout, want, res.Stderr)
	}
	for path, want := range map[string]string{filepath.Join(rw, "new"): "a\n", rwFile: "b\n", filepath.Join(sub, "y"): "e\n"} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s on the host: %q, %v; want %q", path, got, err, want)
		}
	}
	mustNotExist(t, filepath.Join(files, "beside"))
	mustNotExist(t, filepath.Join(ro, "x"))

	roots, dir := workspace(t)
	link := filepath.Join(outsideDir(t), "link")
	if err := os.Symlink(rw, link); err != nil {
		t.Fatal(err)
	}
	inWork := filepath.Join(dir, "in")
	os.Mkdir(inWork, 0o755)
	roFile := writeFile(t, filepath.Join(outsideDir(t), "ro.txt"), "", 0o644)
	for _, c := range []struct {
		what string
		cmd  Cmd
		want string
	}{
		{"relative", Cmd{Writable: []string{"rel"}}, "not an absolute, clean path"},
		{"unclean", Cmd{Writable: []string{rw + "/."}}, "not an absolute, clean path"},
		{"a link", Cmd{Writable: []string{link}}, "not canonical"},
		{"missing", Cmd{Writable: []string{filepath.Join(rw, "missing")}}, "no such file"},
		{"the root", Cmd{Writable: []string{"/"}}, "the root"},
		{"in /proc", Cmd{Writable: []string{"/proc/1"}}, "/proc"},
		{"in /dev", Cmd{Writable: []string{"/dev/shm"}}, "/dev"},
		{"in /sys", Cmd{Writable: []string{"/sys/kernel"}}, "/sys"},
		{"/usr", Cmd{Writable: []string{"/usr"}}, "in /usr"},
		{"in /usr", Cmd{Writable: []string{"/usr/share"}}, "in /usr"},
		{"in /etc", Cmd{Writable: []string{"/etc/ssl"}}, "in /etc"},
		{"not a file", Cmd{Writable: []string{"/dev/null"}}, "/dev"},
		{"in the work directory", Cmd{Roots: roots, Dir: dir, Writable: []string{inWork}}, "working directory"},
		{"holding a read-only directory", Cmd{ReadOnly: []string{sub}, Writable: []string{ro}}, "keeps read-only"},
		{"holding a read-only file", Cmd{ReadOnlyFiles: []string{roFile}, Writable: []string{filepath.Dir(roFile)}}, "keeps read-only"},
	} {
		refused(t, "Writable "+c.what, c.cmd, c.want)
	}
}

// TestIsolationReadOnlyFiles: a file of Cmd.ReadOnlyFiles is readable in
// the sandbox and not writable, the files beside it are not there, and a
// program given as one runs. A directory, a path that is not absolute,
// clean, canonical or existing, one in /proc, one the work directory holds
// and one a writable path holds are refused, and nothing runs.
func TestIsolationReadOnlyFiles(t *testing.T) {
	requireIsolation(t)
	outside := outsideDir(t)
	shown := writeFile(t, filepath.Join(outside, "shown.txt"), "visible\n", 0o644)
	writeFile(t, filepath.Join(outside, "beside.txt"), "s3cr3t\n", 0o644)
	script := fmt.Sprintf(`cat %[1]s/shown.txt; cat %[1]s/beside.txt 2>/dev/null; echo more 2>/dev/null >> %[1]s/shown.txt && echo wrote`, outside)
	res := runIsolated(t, Cmd{Program: "sh", Args: []string{"-c", script}, ReadOnlyFiles: []string{shown}})
	if got := string(res.Stdout); got != "visible\n" {
		t.Errorf("stdout %q, want only the shown file; stderr %s", got, res.Stderr)
	}
	if got, _ := os.ReadFile(shown); string(got) != "visible\n" {
		t.Errorf("the read-only file changed on the host: %q", got)
	}

	tool := writeFile(t, filepath.Join(outsideDir(t), "zero-test-tool"), "#!/bin/sh\necho ran\n", 0o755)
	if _, err := tryRun(t, Cmd{Program: tool, Isolation: Bubblewrap}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a program outside the sandbox: %v, want ErrNotFound", err)
	}
	if res := runIsolated(t, Cmd{Program: tool, ReadOnlyFiles: []string{tool}}); string(res.Stdout) != "ran\n" {
		t.Errorf("a program given as a read-only file: stdout %q, stderr %s", res.Stdout, res.Stderr)
	}

	roots, dir := workspace(t)
	inWork := writeFile(t, filepath.Join(dir, "in.txt"), "", 0o644)
	link := filepath.Join(outsideDir(t), "link")
	if err := os.Symlink(shown, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		cmd  Cmd
		want string
	}{
		{"a directory", Cmd{ReadOnlyFiles: []string{outside}}, "not a regular file"},
		{"relative", Cmd{ReadOnlyFiles: []string{"shown.txt"}}, "not an absolute, clean path"},
		{"a link", Cmd{ReadOnlyFiles: []string{link}}, "not canonical"},
		{"missing", Cmd{ReadOnlyFiles: []string{filepath.Join(outside, "missing")}}, "no such file"},
		{"in /proc", Cmd{ReadOnlyFiles: []string{"/proc/self/status"}}, "not canonical"},
		{"in /proc, canonical", Cmd{ReadOnlyFiles: []string{"/proc/1/status"}}, "/proc"},
		{"in the work directory", Cmd{Roots: roots, Dir: dir, ReadOnlyFiles: []string{inWork}}, "working directory"},
		{"in a writable directory", Cmd{ReadOnlyFiles: []string{shown}, Writable: []string{outside}}, "keeps read-only"},
	} {
		refused(t, "ReadOnlyFiles "+c.what, c.cmd, c.want)
	}
}

// TestIsolationSocket: a sandbox with no network reaches a Unix socket of
// the host given as Cmd.Socket, and nothing else of its directory; without
// it, the socket is not there. A path that is not a socket, not absolute,
// canonical or existing, or that the work directory holds is refused, and
// nothing runs.
func TestIsolationSocket(t *testing.T) {
	requireIsolation(t)
	dir := outsideDir(t)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "hello from the host")
			c.Close()
		}
	}()
	beside := writeFile(t, filepath.Join(dir, "beside"), "s3cr3t", 0o644)
	self, err := filepath.EvalSymlinks(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dial := Cmd{Program: self, ReadOnlyFiles: []string{self}, Socket: sock,
		Env: envSet(dialEnv, sock, dialBesideEnv, beside)}
	res := runIsolated(t, dial)
	if got, want := string(res.Stdout), "read \"hello from the host\\n\" <nil>\n"; got != want {
		t.Errorf("through the socket: stdout %q, want %q; stderr %s", got, want, res.Stderr)
	}
	dial.Socket = ""
	if res := runIsolated(t, dial); res.ExitCode == 0 || strings.Contains(string(res.Stdout), "hello") {
		t.Errorf("without Socket: exit %d, stdout %q", res.ExitCode, res.Stdout)
	}

	roots, work := workspace(t)
	inWork := filepath.Join(work, "s")
	ln2, err := net.Listen("unix", inWork)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	link := filepath.Join(outsideDir(t), "link")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(outsideDir(t), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		cmd  Cmd
		want string
	}{
		{"a file", Cmd{Socket: beside}, "not a Unix socket"},
		{"a fifo", Cmd{Socket: fifo}, "not a Unix socket"},
		{"relative", Cmd{Socket: "s"}, "not an absolute, clean path"},
		{"a link", Cmd{Socket: link}, "not canonical"},
		{"missing", Cmd{Socket: filepath.Join(dir, "missing")}, "no such file"},
		{"in the work directory", Cmd{Roots: roots, Dir: work, Socket: inWork}, "working directory"},
	} {
		refused(t, "Socket "+c.what, c.cmd, c.want)
	}
}

// envSet makes an envscrub.Spec setting name, value pairs.
func envSet(kv ...string) (s envscrub.Spec) {
	s.Set = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Set[kv[i]] = kv[i+1]
	}
	return s
}
