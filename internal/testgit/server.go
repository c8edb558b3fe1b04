package testgit

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Server is a real local git server: git http-backend through Go's CGI
// handler, serving the bare repositories under root, with partial fetches
// and fetches by id allowed as GitHub allows them. A request whose
// Authorization is not "Basic " + the base64 of x-access-token:TOKEN is
// refused for the repositories under root/private/.
type Server struct {
	*httptest.Server
	Root   string
	Token  string
	Hits   atomic.Int64
	Header atomic.Value // the last Authorization header seen
}

func NewServer(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat("/usr/lib/git-core/git-http-backend"); err != nil {
		t.Fatal("git-http-backend is not installed: Debian's git package has it (scripts/test installs git)")
	}
	g := &Server{Root: t.TempDir(), Token: "tok-7f3e"}
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend",
		Env:    []string{"GIT_PROJECT_ROOT=" + g.Root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
		Stderr: io.Discard}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Hits.Add(1)
		g.Header.Store(r.Header.Get("Authorization"))
		if strings.HasPrefix(r.URL.Path, "/private/") && r.Header.Get("Authorization") != "Basic eC1hY2Nlc3MtdG9rZW46dG9rLTdmM2U=" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// Repo makes OWNER/NAME on the server, its main holding files (path to
// content; a content starting "link:" is a symbolic link to the rest, one
// starting "exec:" an executable file of the rest), and
// returns the work checkout (to commit more) and main's commit.
func (g *Server) Repo(t testing.TB, name string, files map[string]string) (string, string) {
	t.Helper()
	work := t.TempDir()
	Run(t, work, "init", "-q", "-b", "main")
	for p, content := range files {
		full := filepath.Join(work, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if target, ok := strings.CutPrefix(content, "link:"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if rest, ok := strings.CutPrefix(content, "exec:"); ok {
			content, mode = rest, 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, work, "add", "-A")
	Run(t, work, "commit", "-q", "-m", "one")
	bare := filepath.Join(g.Root, name+".git")
	os.MkdirAll(filepath.Dir(bare), 0o755)
	Run(t, g.Root, "init", "-q", "--bare", bare)
	Run(t, bare, "config", "uploadpack.allowFilter", "true")
	Run(t, bare, "config", "uploadpack.allowAnySHA1InWant", "true")
	Run(t, bare, "config", "http.receivepack", "true")
	Run(t, work, "push", "-q", bare, "main")
	return work, Run(t, work, "rev-parse", "HEAD")
}

// Loosen turns the packs of the bare repository dir into loose objects,
// so that a planted loose object is the one git reads.
func Loosen(t testing.TB, dir string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(p, ".pack")
		for _, ext := range []string{".pack", ".idx", ".promisor", ".rev"} {
			os.Remove(base + ext)
		}
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Env = append(os.Environ(), "GIT_DIR="+dir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		cmd.Stdin = bytes.NewReader(data)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack-objects: %v %s", err, out)
		}
	}
}

// Plant writes object oid in dir's loose objects with kind and body that
// do not hash to it.
func Plant(t testing.TB, dir, oid, kind, body string) {
	t.Helper()
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	fmt.Fprintf(z, "%s %d\x00%s", kind, len(body), body)
	z.Close()
	objects := filepath.Join(dir, "objects")
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		objects = filepath.Join(dir, ".git", "objects")
	}
	p := filepath.Join(objects, oid[:2], oid[2:])
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Object writes an object of kind with body in the repository dir as it
// is, unchecked (a tree may name an entry twice, as no git writes one),
// and returns its id.
func Object(t testing.TB, dir, kind string, body []byte) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-t", kind, "-w", "--literally", "--stdin")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Tree writes a tree of entries, each "MODE NAME ID" (a mode such as
// 100644 or 40000; the id is after the last space), in the order given
// and unchecked, in the repository dir, and returns its id.
func Tree(t testing.TB, dir string, entries ...string) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		i, j := strings.IndexByte(e, ' '), strings.LastIndexByte(e, ' ')
		id, err := hex.DecodeString(e[j+1:])
		if i < 0 || i == j || err != nil || len(id) != 20 {
			t.Fatalf("tree entry %q: want MODE NAME ID", e)
		}
		fmt.Fprintf(&b, "%s %s\x00%s", e[:i], e[i+1:j], id)
	}
	return Object(t, dir, "tree", b.Bytes())
}
