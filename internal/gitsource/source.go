package gitsource

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/guard/fsroot"
	"github.com/zero-dev/zero/internal/guard/redact"
)

// DefaultBaseURL is where repositories are, unless ZERO_GITHUB_URL says
// otherwise.
const DefaultBaseURL = "https://github.com"

// Errors, each with a message that says what to do.
var (
	ErrInvalid     = errors.New("refused") // a repository, ref, folder, commit or git host that is not one
	ErrNotFound    = errors.New("not found")
	ErrAuth        = errors.New("the host refused access: the repository is private, or the token cannot read it")
	ErrUnreachable = errors.New("the host could not be reached")
	ErrHost        = errors.New("the host failed: its answer was an error, broke off, or was not git")
	ErrTimeout     = errors.New("timed out")
	ErrLimit       = errors.New("over a limit")
	ErrCorrupt     = errors.New("an object is missing or does not match its id")
	ErrSymlink     = errors.New("symbolic links are refused")
	ErrSubmodule   = errors.New("submodules are refused")

	// errNoObject: the host has no object of an id asked for. Its callers
	// say what that means: a commit not found, or a host whose own trees
	// name what it does not have.
	errNoObject = errors.New("the host has no such object")
)

// Limits bound one snapshot.
type Limits struct {
	Files   int           // files in the folder
	Bytes   int64         // their bytes together
	Timeout time.Duration // the whole snapshot, resolving included
}

// A Source reads repositories under one base URL.
type Source struct {
	// BaseURL is https, or http to a loopback address (tests); repositories
	// are BaseURL/OWNER/NAME.git.
	BaseURL string
	// Token, if set, is sent to BaseURL's origin only, in a header set
	// through git's environment, never in argv.
	Token  string
	Limits Limits
	// TempDir is where the work repositories are made; "" is the
	// system's.
	TempDir string
	// afterFetch, in tests, changes the fetched objects before they are
	// read, as a disk or a git could.
	afterFetch func(gitDir string)
}

// CheckBaseURL refuses a base URL that is not https (or http to a
// loopback address), or that has credentials, a query or a fragment.
func CheckBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || hasControl(raw) {
		return nil, fmt.Errorf("%w: the git host %q: want https://HOST, without credentials, query or fragment", ErrInvalid, raw)
	}
	host := u.Hostname()
	loopback := host == "127.0.0.1" || host == "::1" || host == "localhost"
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return nil, fmt.Errorf("%w: the git host %q: want https (http only to a loopback address)", ErrInvalid, raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

var (
	repoRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)
	})
	refRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/+-]{0,199}$`) })
	shaRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })
)

// CheckRepo refuses a repository that is not OWNER/NAME.
func CheckRepo(repo string) error {
	if !repoRE().MatchString(repo) || strings.Contains(repo, "..") || strings.HasSuffix(repo, ".git") {
		return fmt.Errorf("%w: repository %q: want OWNER/NAME", ErrInvalid, repo)
	}
	return nil
}

// CheckRef refuses a ref that is not a branch, tag or full commit SHA name.
func CheckRef(ref string) error {
	if !refRE().MatchString(ref) || strings.Contains(ref, "..") || strings.Contains(ref, "//") || strings.HasSuffix(ref, "/") ||
		strings.HasSuffix(ref, ".lock") || strings.HasSuffix(ref, ".") {
		return fmt.Errorf("%w: ref %q: want a branch, a tag or a full commit SHA", ErrInvalid, ref)
	}
	return nil
}

// CleanFolder returns folder as a clean relative path ("" for the
// repository's root), or an error for one that leaves it.
func CleanFolder(folder string) (string, error) {
	f := strings.Trim(folder, "/")
	if f == "" || f == "." {
		return "", nil
	}
	if hasControl(f) || path.Clean(f) != f || f == ".." || strings.HasPrefix(f, "../") || strings.Contains(f, "\\") || len(f) > 400 {
		return "", fmt.Errorf("%w: folder %q: want a clean path inside the repository", ErrInvalid, folder)
	}
	return f, nil
}

// remote is repo's URL.
func (s *Source) remote(repo string) (string, error) {
	if err := CheckRepo(repo); err != nil {
		return "", err
	}
	u, err := CheckBaseURL(s.Host())
	if err != nil {
		return "", err
	}
	return u.String() + "/" + repo + ".git", nil
}

// work makes a bare work repository, and returns it with its roots and a
// cleanup.
func (s *Source) work() (*fsroot.Set, string, func(), error) {
	dir, err := os.MkdirTemp(s.TempDir, "zero-git-")
	if err != nil {
		return nil, "", nil, err
	}
	roots, err := fsroot.Open([]string{dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", nil, err
	}
	return roots, dir, func() { roots.Close(); os.RemoveAll(dir) }, nil
}

func (s *Source) timeout() time.Duration {
	if s.Limits.Timeout > 0 {
		return s.Limits.Timeout
	}
	return time.Minute
}

// Resolve returns the full commit SHA ref names in repo: a full SHA as it
// is (Snapshot checks the commit is there), else the branch or tag of that
// name (a tag peeled to its commit); a name that is both is refused.
func (s *Source) Resolve(ctx context.Context, repo, ref string) (string, error) {
	if err := CheckRef(ref); err != nil {
		return "", err
	}
	remote, err := s.remote(repo)
	if err != nil {
		return "", err
	}
	if shaRE().MatchString(ref) {
		return ref, nil
	}
	roots, _, done, err := s.work()
	if err != nil {
		return "", err
	}
	defer done()
	out, _, err := run(ctx, roots, ".", nil, AuthEnv(remote, s.Token), s.timeout(), 1<<20,
		"ls-remote", "--quiet", "--", remote, "refs/heads/"+ref, "refs/tags/"+ref, "refs/tags/"+ref+"^{}")
	if err != nil {
		return "", s.classify(err, repo)
	}
	var branch, tag, peeled string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		if !ok || !shaRE().MatchString(sha) {
			continue
		}
		switch name {
		case "refs/heads/" + ref:
			branch = sha
		case "refs/tags/" + ref:
			tag = sha
		case "refs/tags/" + ref + "^{}":
			peeled = sha
		}
	}
	if peeled != "" {
		tag = peeled
	}
	switch {
	case branch != "" && tag != "" && branch != tag:
		return "", fmt.Errorf("%w: %q names both a branch and a tag of %s: give the full commit SHA", ErrInvalid, ref, repo)
	case branch != "":
		return branch, nil
	case tag != "":
		return tag, nil
	}
	return "", fmt.Errorf("%w: %s has no branch or tag %q", ErrNotFound, repo, ref)
}

// gitSays maps what git says to why it failed, for the failures that
// only its message tells (an object that does not check is also caught by
// Zero's own check as it reads, whatever git says; see reader.objects).
// The first entry whose text is in git's stderr, lower-cased, wins.
// TestSnapshotLyingHost makes a git host say each of the first four and
// the last four; TestSnapshotRefusals makes it say one of each other kind
// (unreachable, access refused, no such repository).
var gitSays = []struct {
	text string
	err  error
}{
	// The host sent other objects than those asked for (fetch's check of
	// what it received), its own copy is corrupt, or its pack does not check.
	{"did not send all necessary objects", ErrCorrupt},
	{"possible repository corruption on the remote side", ErrCorrupt},
	{"index-pack failed", ErrCorrupt},
	{"not our ref", errNoObject},

	{"could not resolve host", ErrUnreachable},
	{"failed to connect", ErrUnreachable},
	{"connection refused", ErrUnreachable},
	{"couldn't connect", ErrUnreachable},
	{"network is unreachable", ErrUnreachable},

	{"authentication failed", ErrAuth},
	{"could not read username", ErrAuth},
	{"returned error: 401", ErrAuth},
	{"returned error: 403", ErrAuth},

	{"not found", ErrNotFound},
	{"returned error: 404", ErrNotFound},
	{"does not appear to be a git repository", ErrNotFound},

	// The host answered with a server error (to a fetch, "RPC failed"),
	// broke its answer off, or sent something that is not git's protocol.
	{"rpc failed", ErrHost},
	{"returned error: 5", ErrHost},
	{"bytes of body are still expected", ErrHost},
	{"bad line length character", ErrHost},
}

// classify says why git failed, from its stderr: for a host that could not
// be reached or failed, in git's own last words (its "unable to access
// 'URL'" left out). A timeout, a limit or a git that did not start is err as
// it is. Git's words never carry the token (it goes in a header); they are
// redacted of it all the same.
func (s *Source) classify(err error, repo string) error {
	var exit *exitError
	if !errors.As(err, &exit) {
		return err
	}
	stderr := redact.New(map[string]string{"token": s.Token}).String(exit.stderr)
	low := strings.ToLower(stderr)
	for _, says := range gitSays {
		if !strings.Contains(low, says.text) {
			continue
		}
		switch says.err {
		case ErrAuth:
			return fmt.Errorf("%w (%s)", ErrAuth, repo)
		case ErrNotFound:
			return fmt.Errorf("%w: repository %s (a private one needs GH_TOKEN or GITHUB_TOKEN)", ErrNotFound, repo)
		case ErrUnreachable, ErrHost:
			return fmt.Errorf("%w: %s", says.err, lastWords(stderr))
		}
		return fmt.Errorf("%w: git %s: %s", says.err, exit.cmd, stderr)
	}
	return fmt.Errorf("git %s: exit %d: %s", exit.cmd, exit.code, stderr)
}

// lastWords is the last line git wrote, without its "fatal: " and its
// "unable to access 'URL': ", which the caller says better.
func lastWords(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	for _, prefix := range []string{"fatal: ", "error: "} {
		last = strings.TrimPrefix(last, prefix)
	}
	if rest, ok := strings.CutPrefix(last, "unable to access '"); ok {
		if _, after, found := strings.Cut(rest, "': "); found {
			last = after
		}
	}
	return last
}

// Host is the base URL repositories are read from: BaseURL, or
// DefaultBaseURL when it is empty.
func (s *Source) Host() string {
	if s.BaseURL == "" {
		return DefaultBaseURL
	}
	return s.BaseURL
}

// A File is one file of a snapshot, its bytes checked against its id.
type File struct {
	Path string // relative to the folder (or, for a root file, the repository)
	Mode string // "100644" or "100755"
	OID  string // the git object id, hex
	Data []byte
}

// A Snapshot is a folder of a repository at one commit.
type Snapshot struct {
	Repo   string
	Commit string
	Folder string
	Files  []File // by path
	// Root holds the files asked for at the repository's root (a licence)
	// that are there, regular files only.
	Root []File
}

// Snapshot reads folder of repo at commit (a full SHA): every file under
// it, and those of rootFiles at the repository's root that are there.
// Only that commit is fetched, shallow, without blobs but those read. The
// commit, each tree down to the folder and under it, and each blob are
// checked by Zero against their ids: the SHA-1 of "TYPE SIZE\x00BYTES".
// A symbolic link or submodule under the folder is refused, as is a
// folder past the limits.
func (s *Source) Snapshot(ctx context.Context, repo, commit, folder string, rootFiles ...string) (*Snapshot, error) {
	if !shaRE().MatchString(commit) {
		return nil, fmt.Errorf("%w: commit %q: want a full SHA", ErrInvalid, commit)
	}
	folder, err := CleanFolder(folder)
	if err != nil {
		return nil, err
	}
	remote, err := s.remote(repo)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	roots, dir, done, err := s.work()
	if err != nil {
		return nil, err
	}
	defer done()
	auth := AuthEnv(remote, s.Token)
	// git runs git in the work repository; a failure that is not an exit
	// (a timeout, a limit, a git that did not start) gives no output.
	git := func(stdin []byte, limit int, args ...string) ([]byte, error) {
		out, _, err := run(ctx, roots, ".", stdin, auth, s.timeout(), limit, args...)
		return out, err
	}
	// fetch fetches ids from the host, blobless (shallow: without the
	// commits' parents), and says why it could not.
	fetch := func(shallow bool, ids ...string) error {
		args := []string{"-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
			"--recurse-submodules=no", "--filter=blob:none"}
		if shallow {
			args = append(args, "--depth=1")
		}
		_, err := git(nil, 0, append(append(args, "--", remote), ids...)...)
		return s.classify(err, repo)
	}
	if _, err := git(nil, 0, "init", "--quiet", "--bare", "."); err != nil {
		return nil, err
	}
	if err := fetch(true, commit); err != nil {
		if errors.Is(err, errNoObject) {
			return nil, fmt.Errorf("%w: commit %s in %s (it was force-pushed away, or never there)", ErrNotFound, commit, repo)
		}
		return nil, err
	}
	r := &reader{git: git, limit: s.Limits}
	snap := &Snapshot{Repo: repo, Commit: commit, Folder: folder}
	body, err := r.object(commit, "commit")
	if err != nil {
		return nil, err
	}
	tree, err := commitTree(body)
	if err != nil {
		return nil, err
	}
	rootEntries, err := r.tree(tree)
	if err != nil {
		return nil, err
	}
	// The folder: walk down to it, tree by tree.
	entries := rootEntries
	if folder != "" {
		for _, name := range strings.Split(folder, "/") {
			e, ok := find(entries, name)
			if !ok || e.mode != "40000" {
				return nil, fmt.Errorf("%w: folder %q at commit %s of %s", ErrNotFound, folder, commit[:12], repo)
			}
			if entries, err = r.tree(e.oid); err != nil {
				return nil, err
			}
		}
	}
	var blobs []entry
	if err := r.walk(entries, "", &blobs); err != nil {
		return nil, err
	}
	var roots2 []entry
	for _, name := range rootFiles {
		if e, ok := find(rootEntries, name); ok && (e.mode == "100644" || e.mode == "100755") {
			roots2 = append(roots2, entry{mode: e.mode, name: name, oid: e.oid})
		}
	}
	want := append(append([]entry(nil), blobs...), roots2...)
	if len(want) > 0 {
		ids := make([]string, len(want))
		for i, e := range want {
			ids[i] = e.oid
		}
		if err := fetch(false, ids...); err != nil {
			if errors.Is(err, errNoObject) {
				return nil, fmt.Errorf("%w: the host does not have files its own trees name (%v)", ErrCorrupt, err)
			}
			return nil, err
		}
	}
	if s.afterFetch != nil {
		s.afterFetch(dir)
	}
	var total int64
	read := func(es []entry) ([]File, error) {
		oids := make([]string, len(es))
		for i, e := range es {
			oids[i] = e.oid
		}
		bodies, err := r.objects(oids, "blob")
		if err != nil {
			return nil, err
		}
		out := make([]File, len(es))
		for i, e := range es {
			out[i] = File{Path: e.name, Mode: e.mode, OID: e.oid, Data: bodies[i]}
		}
		return out, nil
	}
	if snap.Files, err = read(blobs); err != nil {
		return nil, err
	}
	for _, f := range snap.Files {
		total += int64(len(f.Data))
	}
	if s.Limits.Bytes > 0 && total > s.Limits.Bytes {
		return nil, fmt.Errorf("%w: the folder holds %d bytes, over %d", ErrLimit, total, s.Limits.Bytes)
	}
	if snap.Root, err = read(roots2); err != nil {
		return nil, err
	}
	return snap, nil
}

// A reader reads objects of the work repository, each checked against its
// id.
type reader struct {
	git   func(stdin []byte, limit int, args ...string) ([]byte, error)
	limit Limits
}

// object returns the body of object oid, which must be of kind (see
// objects).
func (r *reader) object(oid, kind string) ([]byte, error) {
	bodies, err := r.objects([]string{oid}, kind)
	if err != nil {
		return nil, err
	}
	return bodies[0], nil
}

// objects returns the bodies of objects oids, in order, each of kind,
// after checking that the SHA-1 of "KIND SIZE\x00BODY" is its id: Zero's
// own check, not git's word. An object that is not there is ErrCorrupt by
// that check too, whatever git's exit: cat-file stops at it (and dies
// asking the host for it, in a partial repository that may not ask).
func (r *reader) objects(oids []string, kind string) ([][]byte, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	limit := 64 << 20
	if r.limit.Bytes > 0 {
		limit = int(r.limit.Bytes) + len(oids)*128 + 1
	}
	out, err := r.git([]byte(strings.Join(oids, "\n")+"\n"), limit, "cat-file", "--batch")
	var exit *exitError
	if err != nil && !errors.As(err, &exit) {
		return nil, err
	}
	bodies, cerr := checkBatch(out, oids, kind)
	if cerr != nil {
		return nil, cerr
	}
	return bodies, err
}

// checkBatch reads cat-file --batch's out: the bodies of oids, in order,
// each of kind and hashing to its id.
func checkBatch(out []byte, oids []string, kind string) ([][]byte, error) {
	bodies := make([][]byte, 0, len(oids))
	for _, oid := range oids {
		head, rest, ok := bytes.Cut(out, []byte("\n"))
		fields := strings.Fields(string(head))
		if !ok || len(fields) != 3 || fields[0] != oid {
			return nil, fmt.Errorf("%w: the host did not send the %s %s, or sent another in its place", ErrCorrupt, kind, oid)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil || size < 0 || size > len(rest) {
			return nil, fmt.Errorf("%w: object %s", ErrCorrupt, oid)
		}
		if fields[1] != kind {
			return nil, fmt.Errorf("%w: object %s is a %s, not a %s", ErrCorrupt, oid, fields[1], kind)
		}
		body := rest[:size]
		if got := ObjectID(kind, body); got != oid {
			return nil, fmt.Errorf("%w: the %s read as %s hashes to %s", ErrCorrupt, kind, oid, got)
		}
		bodies = append(bodies, body)
		out = bytes.TrimPrefix(rest[size:], []byte("\n"))
	}
	return bodies, nil
}

// ObjectID is the git object id of an object of kind ("blob", "tree",
// "commit") with body: the hex SHA-1 of "KIND SIZE\x00BODY".
func ObjectID(kind string, body []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(body))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// commitTree reads the tree id of a commit's body.
func commitTree(body []byte) (string, error) {
	line, _, _ := bytes.Cut(body, []byte("\n"))
	tree, ok := strings.CutPrefix(string(line), "tree ")
	if !ok || !shaRE().MatchString(tree) {
		return "", fmt.Errorf("%w: a commit without a tree", ErrCorrupt)
	}
	return tree, nil
}

// An entry of a tree.
type entry struct {
	mode, name, oid string
}

// tree reads tree oid's entries (checked against oid).
func (r *reader) tree(oid string) ([]entry, error) {
	body, err := r.object(oid, "tree")
	if err != nil {
		return nil, err
	}
	var out []entry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+21 {
			return nil, fmt.Errorf("%w: tree %s does not parse", ErrCorrupt, oid)
		}
		out = append(out, entry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), oid: hex.EncodeToString(body[nul+1 : nul+21])})
		body = body[nul+21:]
	}
	return out, nil
}

func find(entries []entry, name string) (entry, bool) {
	for _, e := range entries {
		if e.name == name {
			return e, true
		}
	}
	return entry{}, false
}

// walk collects the files under entries, at prefix, refusing links and
// submodules, and stopping at the file limit.
func (r *reader) walk(entries []entry, prefix string, out *[]entry) error {
	for _, e := range entries {
		name := path.Join(prefix, e.name)
		if e.name == "" || e.name == "." || e.name == ".." || strings.Contains(e.name, "/") ||
			strings.ContainsFunc(e.name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return fmt.Errorf("%w: a file name %q", ErrCorrupt, e.name)
		}
		switch e.mode {
		case "100644", "100755":
			*out = append(*out, entry{mode: e.mode, name: name, oid: e.oid})
			if r.limit.Files > 0 && len(*out) > r.limit.Files {
				return fmt.Errorf("%w: the folder holds more than %d files", ErrLimit, r.limit.Files)
			}
		case "40000":
			sub, err := r.tree(e.oid)
			if err != nil {
				return err
			}
			if err := r.walk(sub, name, out); err != nil {
				return err
			}
		case "120000":
			return fmt.Errorf("%w: %s is a symbolic link", ErrSymlink, name)
		case "160000":
			return fmt.Errorf("%w: %s is a submodule", ErrSubmodule, name)
		default:
			return fmt.Errorf("%w: %s has mode %s", ErrCorrupt, name, e.mode)
		}
	}
	return nil
}

// DirFiles reads the files under dir as a snapshot lists them: each
// regular file's path (relative, with '/'), its blob id, and mode 100644,
// as Zero installs them. Anything else but a directory is an error.
func DirFiles(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, File{Path: filepath.ToSlash(rel), Mode: "100644", OID: ObjectID("blob", data)})
		return nil
	})
	return files, err
}
