package plugins

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/skills"
)

// A Source is the provenance Zero keeps of an installed plugin, in
// source.json beside its files (never inside them, so that upstream files
// cannot forge it).
type Source struct {
	Name   string `json:"name"`
	Repo   string `json:"repo"`
	Ref    string `json:"ref"`
	Folder string `json:"folder"`
	Commit string `json:"commit"`
	// ToolHashes are the tool hashes installed, by name; a plugin
	// installed before they were recorded has none, and an update then
	// reports every tool as changed.
	ToolHashes     map[string]string `json:"tool_hashes,omitempty"`
	PermissionHash string            `json:"permission_hash"`
	SetHash        string            `json:"set_hash"`
	Licence        skills.Licence    `json:"licence"`
	Attribution    string            `json:"attribution,omitempty"` // the licence file's text
	Installed      time.Time         `json:"installed"`
	InstalledBy    string            `json:"installed_by"`
}

// compareInstalled sets p.Update when a plugin of p's name is installed:
// what updating it would change. An update from another repository or
// folder is refused: it would take over the name, and the secrets, of a
// plugin from elsewhere.
func (m *Manager) compareInstalled(ctx context.Context, p *Preview) error {
	if p.Name == "" {
		return nil
	}
	cur, err := m.byName(ctx, m.o.DB, p.Name)
	if err != nil || cur == nil {
		return err
	}
	if cur.repo != p.Repo || cur.folder != p.Folder {
		p.Problems = append(p.Problems, fmt.Sprintf("a plugin named %s is installed from %s (folder %q): remove it before installing one of that name from elsewhere",
			p.Name, cur.repo, cur.folder))
	}
	src, err := m.readSource(cur)
	if err != nil {
		return err
	}
	u := &Update{ID: cur.id, FromCommit: cur.commit}
	u.Changed, u.Added, u.Removed, u.Legacy = diffTools(src.ToolHashes, p.manifest)
	u.PermissionChanged = cur.permissionHash != p.PermissionHash
	u.Widened, u.Narrowed = diffCapabilities(cur.capabilities(), p.Capabilities)
	p.Update = u
	return nil
}

// diffTools compares the tool hashes recorded (nil: none were) with a
// manifest's (plugin.Compare): tools changed, added and removed, each
// sorted, never nil. Without recorded hashes every tool is changed.
func diffTools(recorded map[string]string, mf *plugin.Manifest) (changed, added, removed []string, legacy bool) {
	now := map[string]string{}
	if mf != nil {
		now = toolHashes(mf)
	}
	changed, added, removed = plugin.Compare(recorded, now)
	orEmpty := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return orEmpty(changed), orEmpty(added), orEmpty(removed), recorded == nil
}

// An Installed is what an install did: the plugin, the skills it offers
// through the skills' flow, the drafts it saved of its mcp.json servers,
// and notes (a draft that could not be saved).
type Installed struct {
	Plugin Plugin           `json:"plugin"`
	Skills []SkillOffer     `json:"skills"`
	Drafts []servers.Server `json:"drafts"`
	Notes  []string         `json:"notes"`
	Update *Update          `json:"update,omitempty"`
}

// Install installs, not enabled, the plugin r names at commit, if what is
// there now is what was reviewed: the same commit (where the ref points
// now), the same permission hash and the same file set, still installable.
// With replace it updates the plugin of its name (from the same repository
// and folder), which is then disabled until it is enabled again; without,
// a plugin of its name is ErrExists. A preview that no longer holds is a
// *ChangedError with a fresh preview.
//
// The files are staged, hashed again as they are on disk, and moved into
// place with the provenance beside them in one rename that never replaces
// a folder; the database then records the plugin (the step that installs
// it), and the install is audited (plugin.install).
func (m *Manager) Install(ctx context.Context, actor string, r Request, commit, permission, set string, replace bool) (Installed, error) {
	r, err := checkRequest(r)
	if err != nil {
		return Installed{}, err
	}
	now, err := m.o.Source.Resolve(ctx, r.Repo, r.Ref)
	if err != nil {
		return Installed{}, m.fetchError(r, err)
	}
	p, err := m.previewAt(ctx, r, now)
	if err != nil {
		return Installed{}, err
	}
	changed := func(why string) (Installed, error) {
		m.offerSkills(ctx, p)
		return Installed{}, &ChangedError{Why: why, Preview: p}
	}
	switch {
	case now != commit:
		return changed(fmt.Sprintf("%s's %s is at %s now, not the %s previewed (a new commit or a force-push)", r.Repo, r.Ref, short(now), short(commit)))
	case p.PermissionHash != permission:
		return changed("its permission hash is " + p.PermissionHash + ", not the one previewed")
	case p.SetHash != set:
		return changed("the files at " + short(commit) + " are not the set previewed")
	case replace && p.Update == nil:
		return changed("no plugin named " + p.Name + " is installed to update")
	case !replace && p.Update != nil:
		return Installed{}, fmt.Errorf("%w: %s", ErrExists, p.Name)
	case !p.Installable():
		return Installed{}, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(p.Problems, "; "))
	}
	src := Source{Name: p.Name, Repo: r.Repo, Ref: r.Ref, Folder: r.Folder, Commit: commit, ToolHashes: toolHashes(p.manifest),
		PermissionHash: p.PermissionHash, SetHash: p.SetHash, Licence: p.Licence, Installed: m.o.Now().UTC(), InstalledBy: actor}
	for _, f := range slices.Concat(p.snap.Files, p.snap.Root) {
		if f.Path == p.Licence.File {
			src.Attribution = string(f.Data)
		}
	}
	id, err := m.install(ctx, actor, p, src)
	if err != nil {
		return Installed{}, err
	}
	m.changed(id)
	out := Installed{Skills: p.Skills, Drafts: []servers.Server{}, Notes: []string{}, Update: p.Update}
	out.Drafts, out.Notes = m.saveDrafts(ctx, actor, p)
	out.Plugin, err = m.Get(ctx, id)
	return out, err
}

// install stages p's files with src beside them, moves them into place
// and records the plugin, in that order; what fails on the way is undone,
// and what a crash leaves is undone at the next start (recover).
func (m *Manager) install(ctx context.Context, actor string, p *Preview, src Source) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir := p.Name + "@" + randomHex()
	staging := filepath.Join(m.o.Dir, ".staging-"+randomHex())
	defer os.RemoveAll(staging)
	tree := filepath.Join(staging, dir)
	if err := os.MkdirAll(filepath.Join(tree, filesDir), 0o700); err != nil {
		return 0, err
	}
	step := func(name string) {
		if m.step != nil {
			m.step(name, tree)
		}
	}
	if err := skills.Stage(filepath.Join(tree, filesDir), p.snap.Files, func(string) { step("staged") }); err != nil {
		if errors.Is(err, skills.ErrChanged) {
			return 0, &ChangedError{Why: err.Error(), Preview: p}
		}
		return 0, err
	}
	data, _ := json.MarshalIndent(src, "", "  ")
	if err := os.WriteFile(filepath.Join(tree, sourceFile), data, 0o600); err != nil {
		return 0, err
	}
	// The files and their provenance, in place in one rename that never
	// replaces; the plugin is installed once the database says so.
	dest := filepath.Join(m.o.Dir, dir)
	if err := unix.Renameat2(unix.AT_FDCWD, tree, unix.AT_FDCWD, dest, unix.RENAME_NOREPLACE); err != nil {
		return 0, err
	}
	step("moved")
	id, old, err := m.record(ctx, actor, p, src, dir)
	if err != nil {
		os.RemoveAll(dest)
		return 0, err
	}
	if old != "" {
		os.RemoveAll(filepath.Join(m.o.Dir, old))
	}
	return id, nil
}

// record writes the plugin's row (a new one, or the update of the one of
// its name, disabled), and audits it, in one transaction; it returns the
// folder an update replaced.
func (m *Manager) record(ctx context.Context, actor string, p *Preview, src Source, dir string) (int64, string, error) {
	tx, err := m.o.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", err
	}
	defer tx.Rollback()
	now := stamp(m.o.Now())
	detail := map[string]string{"name": p.Name, "repo": p.Repo, "folder": p.Folder, "commit": p.Commit,
		"permission_hash": p.PermissionHash, "set_hash": p.SetHash, "tools": strconv.Itoa(len(p.Tools)), "licence": p.Licence.SPDX}
	var id int64
	var old string
	if p.Update == nil {
		err = tx.QueryRowContext(ctx, `INSERT INTO plugins (name, dir, repo, ref, folder, commit_sha, set_hash, permission_hash, manifest,
			installed_by, installed_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			p.Name, dir, p.Repo, p.Ref, p.Folder, p.Commit, p.SetHash, p.PermissionHash, p.Manifest, actor, now, now).Scan(&id)
		if isUnique(err) {
			return 0, "", fmt.Errorf("%w: %s", ErrExists, p.Name)
		}
	} else {
		cur, lerr := m.lockAndLoad(ctx, tx, p.Update.ID)
		if lerr != nil {
			return 0, "", lerr
		}
		if cur.commit != p.Update.FromCommit || cur.name != p.Name {
			return 0, "", &ChangedError{Why: "the plugin installed changed since the preview", Preview: p}
		}
		id, old = cur.id, cur.dir
		detail["update"], detail["from_commit"] = "true", cur.commit
		detail["changed"], detail["added"], detail["removed"] = strings.Join(p.Update.Changed, ","), strings.Join(p.Update.Added, ","), strings.Join(p.Update.Removed, ",")
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET dir = ?, ref = ?, commit_sha = ?, set_hash = ?, permission_hash = ?, manifest = ?,
			enabled = 0, installed_by = ?, installed_at = ?, updated_at = ? WHERE id = ?`,
			dir, p.Ref, p.Commit, p.SetHash, p.PermissionHash, p.Manifest, actor, now, now, id)
	}
	if err != nil {
		return 0, "", err
	}
	if _, err := m.o.Audit.Append(audit.Event{Actor: actor, Action: "plugin.install", Target: target(id), Fingerprint: p.Fingerprint, Detail: detail}); err != nil {
		return 0, "", err
	}
	return id, old, tx.Commit()
}

func isUnique(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "unique"))
}

func target(id int64) string { return "plugin:" + strconv.FormatInt(id, 10) }

// saveDrafts saves each server of p's mcp.json as a disabled draft,
// unapproved, its environment and header names declared without values;
// one that cannot be saved (its name taken, the policy refusing it) is a
// note.
func (m *Manager) saveDrafts(ctx context.Context, actor string, p *Preview) ([]servers.Server, []string) {
	drafts, notes := []servers.Server{}, []string{}
	if m.o.Servers == nil {
		return drafts, notes
	}
	for _, d := range p.drafts {
		s, err := m.o.Servers.Create(ctx, actor, d.Config, servers.Secrets{}, "", false)
		if err != nil {
			notes = append(notes, fmt.Sprintf("mcp.json's server %s was not saved as a draft: %v", d.Config.Name, err))
			continue
		}
		drafts = append(drafts, s)
	}
	return drafts, notes
}

// readSource reads an installed plugin's source.json.
func (m *Manager) readSource(r *row) (Source, error) {
	var src Source
	data, err := os.ReadFile(filepath.Join(m.o.Dir, r.dir, sourceFile))
	if err != nil {
		return src, fmt.Errorf("plugin %s: %w", r.name, err)
	}
	if err := json.Unmarshal(data, &src); err != nil {
		return src, fmt.Errorf("plugin %s: %s: %w", r.name, sourceFile, err)
	}
	return src, nil
}

// installedSetHash is the set hash of the files under dir as installed.
func installedSetHash(dir string) (string, error) {
	files, err := gitsource.DirFiles(dir)
	return setHash(files), err
}

func randomHex() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
