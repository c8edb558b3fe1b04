package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/plugin"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/skills"
)

// rootLicences are the names of a repository's licence file looked for at
// its root, as for skills.
var rootLicences = []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "COPYING", "COPYING.md",
	"License", "License.md", "License.txt", "license", "license.md", "license.txt"}

// mcpFile is the portable parts' server list, at the folder's top.
const mcpFile = "mcp.json"

// lfsPointer starts a Git LFS pointer file: Zero fetches no LFS object, so
// the file is not the content it stands for.
var lfsPointer = []byte("version https://git-lfs.github.com/spec/")

// A Request names a plugin to preview or install: a repository, a ref and
// a folder ("" is the repository's root).
type Request struct {
	Repo   string `json:"repo"`
	Ref    string `json:"ref"`
	Folder string `json:"folder,omitempty"`
}

// A File is one file of a preview.
type File struct {
	Path string `json:"path"`
	Size int    `json:"size"`
	OID  string `json:"oid"` // its git blob id, which the set hash covers
}

// A Tool is one tool of a plugin as a review shows it.
type Tool struct {
	Name         string              `json:"name"`
	Description  string              `json:"description"`
	Parameters   json.RawMessage     `json:"parameters"`
	Required     []string            `json:"required"`
	Capabilities plugin.Capabilities `json:"capabilities"`
	Words        []string            `json:"words"` // its capabilities in plain words
	Hash         string              `json:"hash"`  // its tool hash
}

// A SkillOffer is a skill a plugin carries (skills/NAME/SKILL.md), offered
// through the skills' own flow: Request previews it there, at the
// plugin's commit. Preview, in a plugin's preview, is that skill preview's
// verdict.
type SkillOffer struct {
	Name     string          `json:"name"`
	Request  skills.Request  `json:"request"`
	Problems []string        `json:"problems,omitempty"`
	Findings int             `json:"findings"`
	Licence  *skills.Licence `json:"licence,omitempty"`
}

// A ServerOffer is a server a plugin's mcp.json lists: installing the
// plugin saves it as a disabled draft, never approved, its values unset.
type ServerOffer struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	URL     string   `json:"url,omitempty"`
	Env     []string `json:"env,omitempty"`     // names; values are not imported
	Headers []string `json:"headers,omitempty"` // names; values are not imported
}

// An Update is what an update changes of an installed plugin: its tools
// by tool hash against those source.json recorded (Legacy: none were, so
// every tool is reported changed), each list in alphabetical order, and
// its capabilities.
type Update struct {
	ID         int64    `json:"id"`
	FromCommit string   `json:"from_commit"`
	Changed    []string `json:"changed"`
	Added      []string `json:"added"`
	Removed    []string `json:"removed"`
	Legacy     bool     `json:"legacy"`
	// PermissionChanged: the permission hash differs from the one
	// installed. Widened and Narrowed say how, in words.
	PermissionChanged bool     `json:"permission_changed"`
	Widened           []string `json:"widened"`
	Narrowed          []string `json:"narrowed"`
}

// A Preview is what a person reviews before installing or updating a
// plugin.
type Preview struct {
	Request
	Commit      string `json:"commit"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	Manifest    string `json:"manifest"` // plugin.json, as it is
	// Entry, Tools, Capabilities: Zero's part; none for an Agent Plugin
	// with portable parts only.
	Entry           string              `json:"entry"`
	Tools           []Tool              `json:"tools"`
	Capabilities    plugin.Capabilities `json:"capabilities"`
	CapabilityWords []string            `json:"capability_words"`
	PermissionHash  string              `json:"permission_hash"`
	Skills          []SkillOffer        `json:"skills"`
	Servers         []ServerOffer       `json:"servers"`
	Files           []File              `json:"files"`
	Findings        []skills.Finding    `json:"findings"`
	Licence         skills.Licence      `json:"licence"`
	// SetHash is the hash of the file set (each file's path and blob id):
	// an install echoes it with the commit and the permission hash.
	SetHash string `json:"set_hash"`
	// Fingerprint is what enabling it would approve.
	Fingerprint string `json:"fingerprint"`
	// Node is the node program that would run it, "" when none is found;
	// CannotRun says why it cannot run on this host now, "" when it can.
	Node      string  `json:"node"`
	CannotRun string  `json:"cannot_run,omitempty"`
	Update    *Update `json:"update,omitempty"` // a plugin of its name is installed
	// Notes say what is left out (an mcp.json entry that cannot be a
	// draft, skills past MaxSkills); Problems why it cannot be installed,
	// empty when it can.
	Notes    []string `json:"notes"`
	Problems []string `json:"problems"`
	WebURL   string   `json:"web_url"`

	manifest *plugin.Manifest
	snap     *gitsource.Snapshot
	drafts   []servers.Imported
}

// Installable reports whether p can be installed (or, with Update set,
// update the plugin installed).
func (p *Preview) Installable() bool { return len(p.Problems) == 0 }

// Preview reads the plugin r names at the commit its ref resolves to, and
// says what installing it (or updating the plugin of its name) would do.
func (m *Manager) Preview(ctx context.Context, r Request) (*Preview, error) {
	r, err := checkRequest(r)
	if err != nil {
		return nil, err
	}
	commit, err := m.o.Source.Resolve(ctx, r.Repo, r.Ref)
	if err != nil {
		return nil, m.fetchError(r, err)
	}
	p, err := m.previewAt(ctx, r, commit)
	if err != nil {
		return nil, err
	}
	m.offerSkills(ctx, p)
	return p, nil
}

func checkRequest(r Request) (Request, error) {
	if r.Ref == "" {
		return r, fmt.Errorf("%w: a ref (a branch, a tag or a commit SHA) is required", gitsource.ErrInvalid)
	}
	folder, err := gitsource.CleanFolder(r.Folder)
	r.Folder = folder
	return r, err
}

// previewAt reads the plugin r names at commit and reviews it.
func (m *Manager) previewAt(ctx context.Context, r Request, commit string) (*Preview, error) {
	src := *m.o.Source
	src.Limits.Files, src.Limits.Bytes = MaxFiles, MaxBytes
	snap, err := src.Snapshot(ctx, r.Repo, commit, r.Folder, rootLicences...)
	if err != nil {
		return nil, m.fetchError(r, err)
	}
	p := m.review(ctx, r, snap)
	if err := m.compareInstalled(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// fetchError is err, from reading the plugin r names; when the git host
// could not be reached, failed or timed out, it says which plugin, from
// which host, and where that host is set.
func (m *Manager) fetchError(r Request, err error) error {
	if !errors.Is(err, gitsource.ErrUnreachable) && !errors.Is(err, gitsource.ErrHost) && !errors.Is(err, gitsource.ErrTimeout) {
		return err
	}
	host := m.o.Source.Host()
	return fmt.Errorf("fetch the plugin %s (ref %s, folder %q) from %s: %w; plugins are read from the git host ZERO_GITHUB_URL names (github.com when unset)",
		r.Repo, r.Ref, r.Folder, host, err)
}

// review is what a snapshot shows, and what stands in the way of
// installing it.
func (m *Manager) review(ctx context.Context, r Request, snap *gitsource.Snapshot) *Preview {
	p := &Preview{Request: r, Commit: snap.Commit, snap: snap, Tools: []Tool{}, Skills: []SkillOffer{}, Servers: []ServerOffer{},
		Files: []File{}, Findings: []skills.Finding{}, Notes: []string{}, Problems: []string{}, CapabilityWords: []string{}}
	p.SetHash = setHash(snap.Files)
	p.WebURL = webURL(m.o.Source, r.Repo, snap.Commit, r.Folder)
	problem := func(format string, args ...any) { p.Problems = append(p.Problems, fmt.Sprintf(format, args...)) }
	folderFiles := map[string][]byte{}
	var manifest, mcp []byte
	for _, f := range snap.Files {
		p.Files = append(p.Files, File{Path: f.Path, Size: len(f.Data), OID: f.OID})
		p.Findings = append(p.Findings, skills.Findings(f.Path, f.Data)...)
		folderFiles[f.Path] = f.Data
		switch f.Path {
		case plugin.ManifestFile:
			manifest = f.Data
		case mcpFile:
			mcp = f.Data
		}
		if bytes.HasPrefix(f.Data, lfsPointer) {
			problem("%s is a Git LFS pointer, not the file it stands for: Zero fetches no LFS objects", f.Path)
		}
	}
	rootFiles := map[string][]byte{}
	for _, f := range snap.Root {
		rootFiles[f.Path] = f.Data
	}
	p.Licence = skills.Classify(folderFiles, rootFiles)
	switch {
	case manifest == nil:
		problem("the folder has no %s", plugin.ManifestFile)
	case len(manifest) > plugin.MaxManifest:
		problem("%s is %d bytes, over the %d (256 KiB) a manifest may be", plugin.ManifestFile, len(manifest), plugin.MaxManifest)
	default:
		p.Manifest = string(manifest)
		if mf, err := parseManifest(manifest); err != nil {
			problem("%s: %v", plugin.ManifestFile, err)
		} else {
			p.read(mf, folderFiles, problem)
		}
	}
	p.Problems = append(p.Problems, skills.Collisions(snap.Files)...)
	if !p.Licence.Copyable() {
		problem("its licence does not let Zero copy it (%s): read it on the host instead", p.Licence.Class)
	}
	p.offerServers(mcp)
	p.listSkills(folderFiles)
	node, why := m.cannotRun(ctx)
	p.Node, p.CannotRun = node.Path, why
	if p.manifest != nil {
		p.Fingerprint = fingerprint(p.Commit, p.PermissionHash, toolHashes(p.manifest), p.SetHash, p.Node)
	}
	return p
}

// read fills in what a parsed manifest says.
func (p *Preview) read(mf *plugin.Manifest, files map[string][]byte, problem func(string, ...any)) {
	p.manifest = mf
	p.Name, p.Version, p.Description = mf.Name, mf.Version, mf.Description
	if !nameRE().MatchString(mf.Name) || len(mf.Name) > 64 {
		problem("the name %q cannot name a plugin's folder: want 1-64 lower-case letters, digits and single hyphens", mf.Name)
	}
	p.PermissionHash = permissionHash(plugin.Capabilities{})
	z := mf.Zero
	if z == nil {
		return
	}
	p.Entry, p.Capabilities = z.Entry, z.Capabilities
	p.CapabilityWords = capabilityWords(z.Capabilities)
	p.PermissionHash = permissionHash(z.Capabilities)
	if _, ok := files[z.Entry]; !ok {
		problem("the entry file %s is not in the folder", z.Entry)
	}
	for _, t := range z.Tools {
		p.Tools = append(p.Tools, toolView(t))
	}
}

func toolView(t plugin.Tool) Tool {
	req := t.Required
	if req == nil {
		req = []string{}
	}
	return Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Required: req,
		Capabilities: t.Capabilities, Words: t.Capabilities.Words(), Hash: toolHash(t)}
}

// toolHashes maps a manifest's tools to their tool hashes.
func toolHashes(mf *plugin.Manifest) map[string]string {
	out := map[string]string{}
	if mf.Zero != nil {
		for _, t := range mf.Zero.Tools {
			out[t.Name] = toolHash(t)
		}
	}
	return out
}

// listSkills lists the skills the folder carries: skills/NAME/SKILL.md.
func (p *Preview) listSkills(files map[string][]byte) {
	var names []string
	for f := range files {
		if rest, ok := strings.CutPrefix(f, "skills/"); ok {
			if name, ok := strings.CutSuffix(rest, "/SKILL.md"); ok && !strings.Contains(name, "/") {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	if len(names) > MaxSkills {
		p.Notes = append(p.Notes, fmt.Sprintf("the plugin carries %d skills; the first %d are offered", len(names), MaxSkills))
		names = names[:MaxSkills]
	}
	for _, name := range names {
		p.Skills = append(p.Skills, SkillOffer{Name: name,
			Request: skills.Request{Repo: p.Repo, Ref: p.Commit, Folder: path.Join(p.Folder, "skills", name)}})
	}
}

// offerSkills previews each skill offered through the skills' own flow,
// at the plugin's commit: exactly the checks of a skill from GitHub.
func (m *Manager) offerSkills(ctx context.Context, p *Preview) {
	if m.o.Skills == nil {
		return
	}
	for i := range p.Skills {
		s := &p.Skills[i]
		sp, err := m.o.Skills.Preview(ctx, s.Request)
		if err != nil {
			s.Problems = []string{err.Error()}
			continue
		}
		s.Problems, s.Findings, s.Licence = sp.Problems, len(sp.Findings), &sp.Licence
	}
}

// offerServers lists the servers of mcp.json as the servers' import reads
// them; an entry it refuses, and what it notes, become notes.
func (p *Preview) offerServers(data []byte) {
	if data == nil {
		return
	}
	entries, notes, err := servers.ParseImport(data)
	var refused *servers.ImportError
	if errors.As(err, &refused) {
		for _, pr := range refused.Problems {
			p.Notes = append(p.Notes, "mcp.json: "+pr.String())
		}
	}
	for _, n := range notes {
		p.Notes = append(p.Notes, "mcp.json: "+n.String())
	}
	for _, e := range entries {
		c := e.Config
		p.Servers = append(p.Servers, ServerOffer{Name: c.Name, Kind: c.Kind, Command: c.Command, Args: c.Args, URL: c.URL, Env: c.Env, Headers: c.Headers})
		p.drafts = append(p.drafts, servers.Imported{Config: c})
	}
}

// setHash is the hash of a file set: each file's blob id and path, by
// path. Modes are left out: no file is installed executable.
func setHash(files []gitsource.File) string {
	lines := make([]string, 0, len(files))
	for _, f := range files {
		lines = append(lines, f.OID+" "+f.Path+"\n")
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// webURL is where a person reads the folder at the commit on the host.
func webURL(src *gitsource.Source, repo, commit, folder string) string {
	u := strings.TrimRight(src.Host(), "/") + "/" + repo + "/tree/" + commit
	if folder != "" {
		u += "/" + folder
	}
	return u
}
