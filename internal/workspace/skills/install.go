// Package skills adds Agent Skills from GitHub to the workspace: a folder
// of a repository, pinned to a full commit SHA and read through gitsource
// (every object checked against its id), previewed with its SKILL.md, its
// files, its licence and what hides in them, then added on an explicit
// request that echoes the reviewed commit and file set. Scripts are stored
// as files and never run; an existing skill is never overwritten; the
// provenance is kept beside the skill, never inside it.
package skills

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/skill"
)

// Bounds of a skill folder.
const (
	MaxSkillMD = 128 << 10 // SKILL.md's bytes
	MaxFiles   = 128       // files in the folder
	MaxBytes   = 4 << 20   // their bytes together
)

// nameRE is what a skill's name may be (the Agent Skills rule).
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// ProvenanceDir is the folder, beside the skills, that holds what Zero
// knows of each skill it added.
const ProvenanceDir = ".provenance"

// Errors.
var (
	ErrInvalid  = errors.New("the skill cannot be added")
	ErrNotFound = errors.New("no such skill")
	ErrExists   = errors.New("a skill of that name is installed: remove it first; Zero never overwrites one")
	ErrChanged  = errors.New("the skill changed since its preview: preview it again")
)

// rootLicences are the names of a repository's licence file looked for at
// its root.
var rootLicences = []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "COPYING", "COPYING.md",
	"License", "License.md", "License.txt", "license", "license.md", "license.txt"}

// Options configure a [Manager].
type Options struct {
	Dir    string            // where skills are installed: $ZERO_HOME/skills
	Source *gitsource.Source // where they come from
	Audit  *audit.Log
	Now    func() time.Time // nil: time.Now
	// Catalog looks an entry up; nil is the catalog shipped inside Zero
	// (Lookup). Tests give their own.
	Catalog func(id string) (Entry, bool)
}

// A Manager previews, adds and removes skills. It is safe for concurrent
// use.
type Manager struct {
	o  Options
	mu sync.Mutex // one add or removal at a time
	// written, in tests, is called when an add has written its staged
	// files, before it reads them back to check them.
	written func(dir string)
}

// New returns a manager of o.Dir (created, mode 0700), after undoing
// whatever an add that did not finish (the process was killed) left.
func New(o Options) (*Manager, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Catalog == nil {
		o.Catalog = Lookup
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, ProvenanceDir), 0o700); err != nil {
		return nil, err
	}
	m := &Manager{o: o}
	return m, m.recover()
}

// A Request names a skill to preview or add: a catalog entry, or a
// repository, ref and folder typed in.
type Request struct {
	CatalogID string `json:"catalog_id,omitempty"`
	Repo      string `json:"repo,omitempty"`
	Ref       string `json:"ref,omitempty"`
	Folder    string `json:"folder,omitempty"`
}

// A PreviewFile is one file of a preview.
type PreviewFile struct {
	Path       string `json:"path"`
	Size       int    `json:"size"`
	Executable bool   `json:"executable"` // its mode upstream; it is stored without it, and never run
}

// A Preview is what a person reviews before adding a skill.
type Preview struct {
	Request
	Commit      string        `json:"commit"`
	Verified    bool          `json:"verified"` // a catalog entry: Zero curated and pinned it
	Name        string        `json:"name"`
	Description string        `json:"description"`
	SkillMD     string        `json:"skill_md"` // the actual text, as it is
	Files       []PreviewFile `json:"files"`
	Findings    []Finding     `json:"findings"`
	Licence     Licence       `json:"licence"`
	// SetHash is the hash of the reviewed file set (each file's path, mode
	// and object id): an add echoes it with the commit.
	SetHash string `json:"set_hash"`
	// Problems say why it cannot be added; empty when it can.
	Problems []string `json:"problems"`
	WebURL   string   `json:"web_url"` // the folder at the commit, on the host
	exists   bool     // a skill of its name is installed: one of the Problems
}

// Installable reports whether p can be added.
func (p *Preview) Installable() bool { return len(p.Problems) == 0 }

// resolveCatalog fills in a catalog entry's repository, folder and commit.
func (m *Manager) resolveCatalog(r Request) (Request, *Entry, error) {
	if r.CatalogID == "" {
		return r, nil, nil
	}
	e, ok := m.o.Catalog(r.CatalogID)
	if !ok {
		return r, nil, fmt.Errorf("%w: no catalog entry %q", ErrNotFound, r.CatalogID)
	}
	return Request{CatalogID: e.ID, Repo: e.Repo, Ref: e.Commit, Folder: e.Folder}, &e, nil
}

// Preview reads the skill r names at the commit its ref resolves to, and
// says what adding it would add.
func (m *Manager) Preview(ctx context.Context, r Request) (*Preview, error) {
	r, entry, err := m.resolveCatalog(r)
	if err != nil {
		return nil, err
	}
	if r.Ref == "" {
		return nil, fmt.Errorf("%w: a ref (a branch, a tag or a commit SHA) is required", gitsource.ErrInvalid)
	}
	folder, err := gitsource.CleanFolder(r.Folder)
	if err != nil {
		return nil, err
	}
	r.Folder = folder
	commit, err := m.o.Source.Resolve(ctx, r.Repo, r.Ref)
	if err != nil {
		return nil, m.fetchError(r, err)
	}
	snap, err := m.snapshot(ctx, r.Repo, commit, folder)
	if err != nil {
		return nil, m.fetchError(r, err)
	}
	p := m.review(r, snap)
	p.Verified = entry != nil
	return p, nil
}

// fetchError is err, from reading the skill r names; when the git host
// could not be reached, failed or timed out, it says which skill, from
// which host, and where that host is set (ZERO_GITHUB_URL).
func (m *Manager) fetchError(r Request, err error) error {
	if !errors.Is(err, gitsource.ErrUnreachable) && !errors.Is(err, gitsource.ErrHost) && !errors.Is(err, gitsource.ErrTimeout) {
		return err
	}
	host := m.o.Source.Host()
	where := "skills are read from " + host + ", as ZERO_GITHUB_URL says: check that it names the right host, and that the host is up"
	if m.o.Source.BaseURL == "" {
		where = "skills are read from " + host + " unless ZERO_GITHUB_URL names another git host (GitHub Enterprise, say): set it where zero serve starts, and restart zero serve"
	}
	return fmt.Errorf("fetch the skill %s from %s: %w; %s", r.describe(), host, err, where)
}

// describe names the skill r asks for: its repository, ref and folder, and
// its catalog entry.
func (r Request) describe() string {
	folder := r.Folder
	if folder == "" {
		folder = "the root"
	}
	d := fmt.Sprintf("%s (ref %s, folder %s)", r.Repo, r.Ref, folder)
	if r.CatalogID != "" {
		d = fmt.Sprintf("%s of the catalog, %s", r.CatalogID, d)
	}
	return d
}

func (m *Manager) snapshot(ctx context.Context, repo, commit, folder string) (*gitsource.Snapshot, error) {
	src := *m.o.Source
	src.Limits.Files, src.Limits.Bytes = MaxFiles, MaxBytes
	return src.Snapshot(ctx, repo, commit, folder, rootLicences...)
}

// review is what a snapshot shows, and what stands in the way of adding
// it.
func (m *Manager) review(r Request, snap *gitsource.Snapshot) *Preview {
	p := &Preview{Request: r, Commit: snap.Commit, Files: []PreviewFile{}, Findings: []Finding{}, Problems: []string{}, SetHash: setHash(snap.Files)}
	p.WebURL = m.webURL(r.Repo, snap.Commit, r.Folder)
	folderFiles := map[string][]byte{}
	var md []byte
	for _, f := range snap.Files {
		p.Files = append(p.Files, PreviewFile{Path: f.Path, Size: len(f.Data), Executable: f.Mode == "100755"})
		p.Findings = append(p.Findings, Findings(f.Path, f.Data)...)
		folderFiles[f.Path] = f.Data
		if f.Path == "SKILL.md" {
			md = f.Data
		}
	}
	rootFiles := map[string][]byte{}
	for _, f := range snap.Root {
		rootFiles[f.Path] = f.Data
	}
	p.Licence = Classify(folderFiles, rootFiles)
	name := path.Base(r.Folder)
	if r.Folder == "" {
		name = path.Base(r.Repo)
	}
	switch {
	case md == nil:
		p.Problems = append(p.Problems, "the folder has no SKILL.md")
	case len(md) > MaxSkillMD:
		p.Problems = append(p.Problems, fmt.Sprintf("SKILL.md is %d bytes, over %d", len(md), MaxSkillMD))
	default:
		p.SkillMD = string(md)
		s, err := skill.Parse(md)
		if err == nil {
			p.Name, p.Description = s.Name, s.Description
			err = s.Validate(name)
		}
		if err != nil {
			p.Problems = append(p.Problems, "SKILL.md: "+err.Error())
		}
	}
	p.Problems = append(p.Problems, Collisions(snap.Files)...)
	if !p.Licence.Copyable() {
		p.Problems = append(p.Problems, "its licence does not let Zero copy it ("+string(p.Licence.Class)+"): read it on the host instead")
	}
	if p.Name != "" {
		if _, err := os.Lstat(filepath.Join(m.o.Dir, p.Name)); err == nil {
			p.exists = true
			p.Problems = append(p.Problems, "a skill named "+p.Name+" is installed: remove it first; Zero never overwrites one")
		}
	}
	return p
}

// Collisions says which files of a set cannot be written as one folder,
// each its own file: a path the set holds twice (a crafted tree can name
// an entry twice), two paths a file system that folds case or Unicode
// forms takes for one (SKILL.md and skill.md), and a path that is a file
// and a folder too. Staging, which never writes over a file, would fail on
// them, and a person reviewing could not tell which file is which.
func Collisions(files []gitsource.File) []string {
	key := func(p string) string { return norm.NFC.String(cases.Fold().String(p)) }
	type seen struct {
		path string
		dir  bool
	}
	at := map[string]seen{}
	var out []string
	for _, f := range files {
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if s, ok := at[key(d)]; ok && !s.dir {
				out = append(out, fmt.Sprintf("%+q is a file and a folder", s.path))
			} else if ok {
				continue
			}
			at[key(d)] = seen{d, true}
		}
		switch s, ok := at[key(f.Path)]; {
		case ok && s.dir:
			out = append(out, fmt.Sprintf("%+q is a file and a folder", f.Path))
		case ok:
			out = append(out, fmt.Sprintf("two files would be one on disk: %+q and %+q", s.path, f.Path))
		default:
			at[key(f.Path)] = seen{f.Path, false}
		}
	}
	return out
}

// webURL is where a person reads the folder at the commit on the host.
func (m *Manager) webURL(repo, commit, folder string) string {
	base := m.o.Source.BaseURL
	if base == "" {
		base = gitsource.DefaultBaseURL
	}
	u := strings.TrimRight(base, "/") + "/" + repo + "/tree/" + commit
	if folder != "" {
		u += "/" + folder
	}
	return u
}

// setHash is the hash of a file set: each file's mode, object id and path,
// by path.
func setHash(files []gitsource.File) string {
	lines := make([]string, 0, len(files))
	for _, f := range files {
		lines = append(lines, f.Mode+" "+f.OID+" "+f.Path+"\n")
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// A Provenance is what Zero keeps of a skill it added, beside it.
type Provenance struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CatalogID   string    `json:"catalog_id,omitempty"`
	Repo        string    `json:"repo"`
	Ref         string    `json:"ref"`
	Folder      string    `json:"folder"`
	Commit      string    `json:"commit"`
	SetHash     string    `json:"set_hash"`
	Licence     Licence   `json:"licence"`
	Attribution string    `json:"attribution,omitempty"` // the licence file's text
	Files       int       `json:"files"`
	Added       time.Time `json:"added"`
	AddedBy     string    `json:"added_by"`
}

// Add adds the skill r names, at commit, if what is there now is what was
// reviewed: the same commit (a catalog entry's pin, or where the ref points
// now) and the same file set (setHash), still installable. The files are
// staged, hashed again as they are on disk, then moved into place in one
// rename that never replaces a folder; the provenance is written beside,
// and the add is audited (skill.install).
func (m *Manager) Add(ctx context.Context, actor string, r Request, commit, reviewedSet string) (Provenance, error) {
	r, entry, err := m.resolveCatalog(r)
	if err != nil {
		return Provenance{}, err
	}
	if entry != nil && entry.Commit != commit {
		return Provenance{}, fmt.Errorf("%w: the catalog's pin of %s is %s now, not the %s previewed", ErrChanged, entry.ID, entry.Commit[:12], short(commit))
	}
	folder, err := gitsource.CleanFolder(r.Folder)
	if err != nil {
		return Provenance{}, err
	}
	r.Folder = folder
	now, err := m.o.Source.Resolve(ctx, r.Repo, r.Ref)
	if err != nil {
		return Provenance{}, m.fetchError(r, err)
	}
	if now != commit {
		return Provenance{}, fmt.Errorf("%w: %s's %s is at %s now, not the %s previewed (a new commit or a force-push)", ErrChanged, r.Repo, r.Ref, short(now), short(commit))
	}
	snap, err := m.snapshot(ctx, r.Repo, commit, folder)
	if err != nil {
		return Provenance{}, m.fetchError(r, err)
	}
	p := m.review(r, snap)
	if p.SetHash != reviewedSet {
		return Provenance{}, fmt.Errorf("%w: the files at %s are not the set previewed", ErrChanged, short(commit))
	}
	switch {
	case p.exists:
		return Provenance{}, fmt.Errorf("%w: %s", ErrExists, p.Name)
	case !p.Installable():
		return Provenance{}, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(p.Problems, "; "))
	}
	prov := Provenance{Name: p.Name, Description: p.Description, CatalogID: r.CatalogID, Repo: r.Repo, Ref: r.Ref, Folder: folder,
		Commit: commit, SetHash: p.SetHash, Licence: p.Licence, Files: len(snap.Files), Added: m.o.Now().UTC(), AddedBy: actor}
	for _, f := range slices.Concat(snap.Files, snap.Root) {
		if f.Path == p.Licence.File {
			prov.Attribution = string(f.Data)
		}
	}
	if err := m.install(prov, snap.Files); err != nil {
		return Provenance{}, err
	}
	detail := map[string]string{"name": prov.Name, "repo": prov.Repo, "folder": prov.Folder, "commit": prov.Commit,
		"set_hash": prov.SetHash, "licence": prov.Licence.SPDX, "licence_class": string(prov.Licence.Class)}
	if prov.CatalogID != "" {
		detail["catalog_id"] = prov.CatalogID
	}
	if _, err := m.o.Audit.Append(audit.Event{Actor: actor, Action: "skill.install", Target: "skill:" + prov.Name, Detail: detail}); err != nil {
		return prov, err
	}
	return prov, nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// A marker is what an add in progress leaves beside the skills: if the
// process dies, New undoes the add by it.
type marker struct {
	Name    string `json:"name"`
	SetHash string `json:"set_hash"`
	Staging string `json:"staging"`
}

func (m *Manager) markerPath(name string) string {
	return filepath.Join(m.o.Dir, ProvenanceDir, name+".adding")
}

func (m *Manager) provenancePath(name string) string {
	return filepath.Join(m.o.Dir, ProvenanceDir, name+".json")
}

// install stages files, checks them as they are on disk, and moves them
// into place as skill prov.Name.
func (m *Manager) install(prov Provenance, files []gitsource.File) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dest := filepath.Join(m.o.Dir, prov.Name)
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, prov.Name)
	}
	staging := filepath.Join(m.o.Dir, ".staging-"+randomHex())
	mk, _ := json.Marshal(marker{Name: prov.Name, SetHash: prov.SetHash, Staging: filepath.Base(staging)})
	if err := writeNew(m.markerPath(prov.Name), mk); err != nil {
		return fmt.Errorf("%w: %s (another add of it is going on)", ErrExists, prov.Name)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(staging)
			os.Remove(m.markerPath(prov.Name))
		}
	}()
	tree := filepath.Join(staging, prov.Name)
	if err := os.MkdirAll(tree, 0o700); err != nil {
		return err
	}
	if err := Stage(tree, files, m.written); err != nil {
		return err
	}
	// The one step that installs: a rename that never replaces.
	if err := unix.Renameat2(unix.AT_FDCWD, tree, unix.AT_FDCWD, dest, unix.RENAME_NOREPLACE); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%w: %s", ErrExists, prov.Name)
		}
		return err
	}
	data, _ := json.MarshalIndent(prov, "", "  ")
	if err := writeFile(m.provenancePath(prov.Name), data); err != nil {
		os.RemoveAll(dest)
		return err
	}
	ok = true
	os.RemoveAll(staging)
	os.Remove(m.markerPath(prov.Name))
	return nil
}

// Stage writes files under dir, each a new regular file without the
// executable bit, and reads each back to check its bytes against its git
// object id (written, if set, is called in between); a file whose bytes
// changed on disk is ErrChanged. Package plugins stages the same way.
func Stage(dir string, files []gitsource.File, written func(string)) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		if d := path.Dir(f.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		w, err := root.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, werr := w.Write(f.Data)
		serr := w.Sync()
		if err := errors.Join(werr, serr, w.Close()); err != nil {
			return err
		}
	}
	if written != nil {
		written(dir)
	}
	for _, f := range files {
		data, err := root.ReadFile(f.Path)
		if err != nil {
			return err
		}
		if gitsource.ObjectID("blob", data) != f.OID {
			return fmt.Errorf("%w: %s changed in staging", ErrChanged, f.Path)
		}
	}
	return nil
}

func randomHex() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// writeNew writes a new file (never one that is there), mode 0600.
func writeNew(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Sync(), f.Close())
}

// writeFile writes p through a new temporary file and a rename.
func writeFile(p string, data []byte) error {
	tmp := p + ".tmp-" + randomHex()
	if err := writeNew(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// recover undoes the adds that did not finish: their staging folders go,
// and a skill their marker names goes too when it has no provenance and
// holds exactly the files that add staged (so that nothing a person put
// there is touched).
func (m *Manager) recover() error {
	entries, err := os.ReadDir(m.o.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".staging-") {
			os.RemoveAll(filepath.Join(m.o.Dir, e.Name()))
		}
	}
	marks, _ := filepath.Glob(filepath.Join(m.o.Dir, ProvenanceDir, "*.adding"))
	for _, mp := range marks {
		data, err := os.ReadFile(mp)
		var mk marker
		if err == nil && json.Unmarshal(data, &mk) == nil && mk.Name != "" && !strings.ContainsAny(mk.Name, `/\`) {
			dest := filepath.Join(m.o.Dir, mk.Name)
			if _, err := os.Stat(m.provenancePath(mk.Name)); errors.Is(err, fs.ErrNotExist) {
				if h, err := dirSetHash(dest); err == nil && h == mk.SetHash {
					os.RemoveAll(dest)
				}
			}
		}
		os.Remove(mp)
	}
	return nil
}

// dirSetHash is setHash of the files under dir as installed (mode 100644).
func dirSetHash(dir string) (string, error) {
	files, err := gitsource.DirFiles(dir)
	return setHash(files), err
}

// Installed returns the provenance of every skill Zero added, by name.
func (m *Manager) Installed() ([]Provenance, error) {
	paths, err := filepath.Glob(filepath.Join(m.o.Dir, ProvenanceDir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := []Provenance{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var prov Provenance
		if err := json.Unmarshal(data, &prov); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, prov)
	}
	slices.SortFunc(out, func(a, b Provenance) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Remove removes skill name, which Zero added, and its provenance, and
// audits it (skill.remove). A folder Zero did not add is not touched.
func (m *Manager) Remove(actor, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !nameRE().MatchString(name) {
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	data, err := os.ReadFile(m.provenancePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s was not added by Zero", ErrNotFound, name)
	}
	if err != nil {
		return err
	}
	var prov Provenance
	json.Unmarshal(data, &prov)
	// Out of the way first, in one rename, then gone.
	trash := filepath.Join(m.o.Dir, ".staging-"+randomHex())
	if err := os.Rename(filepath.Join(m.o.Dir, name), trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(m.provenancePath(name)); err != nil {
		return err
	}
	os.RemoveAll(trash)
	_, err = m.o.Audit.Append(audit.Event{Actor: actor, Action: "skill.remove", Target: "skill:" + name,
		Detail: map[string]string{"name": name, "repo": prov.Repo, "commit": prov.Commit}})
	return err
}
