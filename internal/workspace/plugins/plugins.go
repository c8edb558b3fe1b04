// Package plugins installs plugins from GitHub into the workspace and keeps
// them: a folder of a repository, pinned to a full commit SHA and read
// through gitsource (every object checked against its id), previewed with
// its manifest, each tool's capabilities and tool hash, the plugin's
// permission hash, its licence, its portable parts and what hides in its
// files, then installed, not enabled, on a request that echoes the reviewed
// commit, permission hash and file set. Enabling is the approval: it echoes
// the plugin's fingerprint. An update runs the same flow, reports its tools
// changed, added and removed, and leaves the plugin disabled until it is
// enabled again. Secret values are sealed for the permission hash they were
// set under and released only to the approved one. Nothing here runs a
// plugin: Runnable says what the runtime may run.
package plugins

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/gitsource"
	"github.com/zero-dev/zero/internal/workspace/runtime"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/servers"
	"github.com/zero-dev/zero/internal/workspace/skills"
)

// Bounds of a plugin's folder, beside plugin.MaxManifest.
const (
	MaxFiles     = 256     // files in the folder
	MaxBytes     = 8 << 20 // their bytes together
	MaxSkills    = 16      // skills a preview offers
	MaxSecretLen = 16 << 10
)

// Errors.
var (
	ErrInvalid  = errors.New("the plugin cannot be installed")
	ErrNotFound = errors.New("no such plugin")
	ErrExists   = errors.New("a plugin of that name is installed: update it, or remove it first")
	ErrChanged  = errors.New("the plugin changed since its preview: preview it again")
	ErrDisabled = errors.New("the plugin is not enabled")
	// ErrNothingToRun refuses to enable a plugin that has no tools of
	// Zero's (an Agent Plugin with portable parts only).
	ErrNothingToRun = errors.New("the plugin has no tools of Zero's to run: its skills and servers go through their own pages")
	// ErrFilesChanged reports installed files that are no longer the set
	// installed.
	ErrFilesChanged = errors.New("the plugin's installed files are not those installed: remove it and install it again")
	// ErrNoNode reports that plugins cannot run on this host: no node 20
	// or later is found, or bubblewrap, their sandbox, is unavailable.
	ErrNoNode = errors.New("plugins cannot run on this host")
	// ErrSecretUnknown refuses a secret the plugin does not declare.
	ErrSecretUnknown = errors.New("the plugin declares no secret of that name")
)

// An ApprovalRequired error refuses an enable whose fingerprint is not the
// plugin's as it is now; Plugin is the plugin as it is now.
type ApprovalRequired struct{ Plugin Plugin }

func (e *ApprovalRequired) Error() string {
	return "approval required: the plugin's fingerprint is " + e.Plugin.Fingerprint + "; review it and send that back"
}

// A ChangedError refuses an install whose preview no longer holds: Preview
// is a fresh one, for the person to review again.
type ChangedError struct {
	Why     string
	Preview *Preview
}

func (e *ChangedError) Error() string { return ErrChanged.Error() + ": " + e.Why }
func (e *ChangedError) Unwrap() error { return ErrChanged }

// nameRE is what a plugin's name may be: it names its folder.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// dirRE is the name of an installed plugin's folder: its name and an
// install's random part.
var dirRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]{1,64}@[0-9a-f]{16}$`) })

// Files beside an installed plugin's files, in its folder.
const (
	filesDir   = "plugin"      // the repository folder's files
	sourceFile = "source.json" // the provenance
)

// Options configure a [Manager].
type Options struct {
	Dir    string // where plugins are installed: $ZERO_HOME/plugins
	DB     *sql.DB
	Box    *secrets.Box
	Audit  *audit.Log
	Source *gitsource.Source
	// Skills offers a plugin's skills through the skills' own flow; nil
	// offers none.
	Skills *skills.Manager
	// Servers saves a plugin's mcp.json servers as drafts; nil saves none.
	Servers *servers.Manager
	// Runtime runs the enabled plugins: a Spec carries its epoch.
	Runtime *runtime.Runtime
	// LocalOrigins are the allowed local origins (ZERO_ALLOWED_LOCAL_ORIGINS,
	// scheme://host:port): a plugin granted one's host and port may reach
	// it though it is loopback or private.
	LocalOrigins []string
	Now          func() time.Time // nil: time.Now
	// Changed, if set, hears of plugin id after every committed change to
	// it (the runtime then stops what it runs of it). It must not block.
	Changed func(id int64)
}

// A Manager previews, installs, updates, enables and removes plugins. It
// is safe for concurrent use.
type Manager struct {
	o  Options
	mu sync.Mutex // one install, update or removal at a time
	// step, in tests, is called at the steps of an install: "staged" once
	// the files are written, before they are read back, and "moved" once
	// they are in place, before the install is committed.
	step func(name, dir string)
}

// New returns a manager of o.Dir (created, mode 0700), after undoing what
// an install, update or removal that did not finish left.
func New(ctx context.Context, o Options) (*Manager, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	m := &Manager{o: o}
	return m, m.recover(ctx)
}

// recover removes the staging folders, and every installed folder no
// plugin's row names: an install or update that did not commit, or the
// folder an update or a removal that committed left behind. Only names an
// install makes (NAME@HEX) are touched.
func (m *Manager) recover(ctx context.Context) error {
	entries, err := os.ReadDir(m.o.Dir)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	rows, err := m.o.DB.QueryContext(ctx, `SELECT dir FROM plugins`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return err
		}
		used[d] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".staging-") || dirRE().MatchString(e.Name()) && !used[e.Name()] {
			if err := os.RemoveAll(filepath.Join(m.o.Dir, e.Name())); err != nil {
				return fmt.Errorf("recover %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// changed ends plugin id's running process, calls in flight included, and
// refuses the Specs built before (it was enabled, disabled, updated or
// removed, or a secret changed), then tells Options.Changed.
func (m *Manager) changed(id int64) {
	if m.o.Runtime != nil {
		m.o.Runtime.Plugins().Stop(id)
	}
	if m.o.Changed != nil {
		m.o.Changed(id)
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
