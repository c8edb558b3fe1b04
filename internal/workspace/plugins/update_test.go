package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zero-dev/zero/internal/workspace/secrets"
)

// TestUpdateDiff: an update's preview compares the new tool hashes with
// those source.json recorded: a tool whose description changed is
// changed, a new one added, one gone removed, and a renamed one removed
// plus added, never changed; each list alphabetical. The update, approved
// as a whole, leaves the plugin disabled and not runnable until it is
// enabled again under its new fingerprint.
func TestUpdateDiff(t *testing.T) {
	f := newFixture(t)
	v1 := []tool{newTool("zeta", "Z."), newTool("alpha", "A."), newTool("beta", "B."), newTool("gamma", "G."), newTool("delta", "D.")}
	work, _ := f.g.Repo(t, "acme/plugins", helloFiles(nil, v1...))
	p1, in := f.install(hello, false)
	ctx := context.Background()
	if _, err := f.m.Enable(ctx, "user:owner", in.Plugin.ID, p1.Fingerprint); err != nil {
		t.Fatal(err)
	}
	// beta and zeta change, gamma goes, delta is renamed to epsilon, omega
	// and kappa come; alpha stays as it was.
	epsilon := newTool("epsilon", "D.")
	v2 := []tool{newTool("omega", "O."), newTool("alpha", "A."), newTool("beta", "B, and more."), newTool("zeta", "Z."), epsilon, newTool("kappa", "K.")}
	v2[3].Required = []string{"text"}
	f.push(work, map[string]string{"plugins/hello/plugin.json": manifest("hello", nil, v2...)}, false)

	p2, err := f.m.Preview(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	if p2.Update == nil || !p2.Installable() {
		t.Fatalf("the update's preview: %+v", p2)
	}
	want := Update{ID: in.Plugin.ID, FromCommit: p1.Commit, Changed: []string{"beta", "zeta"}, Added: []string{"epsilon", "kappa", "omega"},
		Removed: []string{"delta", "gamma"}, Widened: []string{}, Narrowed: []string{}}
	if diff := cmp.Diff(want, *p2.Update); diff != "" {
		t.Errorf("the diff (-want +got):\n%s", diff)
	}
	if _, err := f.m.Install(ctx, "user:owner", hello, p2.Commit, p2.PermissionHash, p2.SetHash, false); !errors.Is(err, ErrExists) {
		t.Errorf("an update without replaceExisting: %v", err)
	}
	up, err := f.m.Install(ctx, "user:owner", hello, p2.Commit, p2.PermissionHash, p2.SetHash, true)
	if err != nil {
		t.Fatal(err)
	}
	if up.Plugin.ID != in.Plugin.ID || up.Plugin.Enabled || up.Plugin.Approved || up.Plugin.Commit != p2.Commit || len(up.Plugin.Tools) != 6 {
		t.Errorf("updated: %+v", up.Plugin)
	}
	var ar *ApprovalRequired
	if _, err := f.m.Runnable(ctx, in.Plugin.ID); !errors.Is(err, ErrDisabled) && !errors.As(err, &ar) {
		t.Errorf("runnable after the update: %v", err)
	}
	if recs := f.records("plugin.install"); len(recs) != 2 || recs[1].Detail["update"] != "true" || recs[1].Detail["changed"] != "beta,zeta" ||
		recs[1].Detail["added"] != "epsilon,kappa,omega" || recs[1].Detail["removed"] != "delta,gamma" {
		t.Errorf("the update's record: %+v", recs)
	}
	// The old folder is gone; the new one holds the new manifest.
	if entries, rows := f.left(); len(entries) != 1 || rows != 1 {
		t.Errorf("after the update: %v, %d rows", entries, rows)
	}
	if _, err := f.m.Enable(ctx, "user:owner", in.Plugin.ID, p1.Fingerprint); !errors.As(err, &ar) {
		t.Errorf("enable with the old fingerprint: %v", err)
	}
	if _, err := f.m.Enable(ctx, "user:owner", in.Plugin.ID, p2.Fingerprint); err != nil {
		t.Fatal(err)
	}
	run, err := f.m.Runnable(ctx, in.Plugin.ID)
	if err != nil || len(run.ToolSet) != 6 || run.ToolSet["epsilon"] != toolHash(p2.manifest.Zero.Tools[4]) {
		t.Errorf("runnable after enabling the update: %+v %v", run.ToolSet, err)
	}
}

// TestUpdateLegacy: a plugin whose source.json recorded no tool hashes
// (installed before they were) reports every tool of the update as
// changed, none added or removed.
func TestUpdateLegacy(t *testing.T) {
	f := newFixture(t)
	work, _ := f.g.Repo(t, "acme/plugins", helloFiles(nil, newTool("greet", "G."), newTool("wave", "W.")))
	_, in := f.install(hello, false)
	srcPath := filepath.Join(filepath.Dir(in.Plugin.Dir), sourceFile)
	var src map[string]any
	data, _ := os.ReadFile(srcPath)
	json.Unmarshal(data, &src)
	delete(src, "tool_hashes")
	data, _ = json.Marshal(src)
	os.WriteFile(srcPath, data, 0o600)

	f.push(work, map[string]string{"plugins/hello/README.md": "# hello, again\n"}, false)
	p, err := f.m.Preview(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	want := &Update{ID: in.Plugin.ID, FromCommit: in.Plugin.Commit, Changed: []string{"greet", "wave"}, Added: []string{}, Removed: []string{},
		Legacy: true, Widened: []string{}, Narrowed: []string{}}
	if diff := cmp.Diff(want, p.Update); diff != "" {
		t.Errorf("a legacy plugin's diff (-want +got):\n%s", diff)
	}
}

// TestWidenedUpdateNeedsApproval: an update that widens the permissions
// says how, leaves the plugin disabled and not runnable, and its secret
// values stay sealed for the permission hash approved before: they do not
// open for the widened one until the owner enables it, which seals them
// again for it. A secret the update no longer declares is deleted then.
func TestWidenedUpdateNeedsApproval(t *testing.T) {
	f := newFixture(t)
	v1 := map[string]any{"secrets": []string{"API_KEY", "OLD_KEY"}}
	work, _ := f.g.Repo(t, "acme/plugins", helloFiles(v1))
	p1, in := f.install(hello, false)
	ctx := context.Background()
	id := in.Plugin.ID
	for name, v := range map[string]string{"API_KEY": "canary-7f3e", "OLD_KEY": "old-value"} {
		if _, err := f.m.SetSecret(ctx, "user:owner", id, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.m.Enable(ctx, "user:owner", id, p1.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if run, err := f.m.Runnable(ctx, id); err != nil || run.Env["API_KEY"] != "canary-7f3e" {
		t.Fatalf("runnable: %v %v", run.Env, err)
	}

	v2 := map[string]any{"secrets": []string{"API_KEY"}, "network.hosts": []string{"127.0.0.1:9000"}, "process": true}
	f.push(work, map[string]string{"plugins/hello/plugin.json": manifest("hello", v2, newTool("greet", "Greets someone."))}, false)
	p2, err := f.m.Preview(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	u := p2.Update
	if u == nil || !u.PermissionChanged || !slices.Equal(u.Widened, []string{"connects to 127.0.0.1:9000", "starts other programs"}) ||
		!slices.Equal(u.Narrowed, []string{"no longer receives the secret OLD_KEY"}) || len(u.Changed)+len(u.Added)+len(u.Removed) != 0 {
		t.Fatalf("the widened update's preview: %+v", u)
	}
	if _, err := f.m.Install(ctx, "user:owner", hello, p2.Commit, p2.PermissionHash, p2.SetHash, true); err != nil {
		t.Fatal(err)
	}
	pl, _ := f.m.Get(ctx, id)
	if pl.Enabled || pl.Approved || len(pl.Secrets) != 1 || !pl.Secrets[0].Set || !pl.Secrets[0].Pending {
		t.Errorf("after the update: %+v", pl)
	}
	if _, err := f.m.Runnable(ctx, id); !errors.Is(err, ErrDisabled) {
		t.Errorf("runnable before the new approval: %v", err)
	}
	// The stored value is sealed for the old permission hash: it does not
	// open for the widened one.
	var sealed []byte
	var sealedFor string
	f.db.QueryRow(`SELECT sealed, permission_hash FROM plugin_secrets WHERE plugin_id = ? AND name = 'API_KEY'`, id).Scan(&sealed, &sealedFor)
	if sealedFor != p1.PermissionHash {
		t.Errorf("sealed for %s, want the old %s", sealedFor, p1.PermissionHash)
	}
	if _, err := f.box.Open(slot(id, "API_KEY", p2.PermissionHash), sealed); !errors.Is(err, secrets.ErrOpen) {
		t.Errorf("the old value opens for the widened permissions: %v", err)
	}
	if _, err := f.m.Enable(ctx, "user:owner", id, p2.Fingerprint); err != nil {
		t.Fatal(err)
	}
	run, err := f.m.Runnable(ctx, id)
	if err != nil || run.Env["API_KEY"] != "canary-7f3e" || len(run.Env) != 1 || !run.Plugin.Capabilities.Process {
		t.Errorf("runnable after the new approval: %+v %v", run.Env, err)
	}
	var rows int
	f.db.QueryRow(`SELECT count(*) FROM plugin_secrets WHERE plugin_id = ?`, id).Scan(&rows)
	if rows != 1 {
		t.Errorf("secrets kept: %d, want 1 (OLD_KEY deleted)", rows)
	}
	if recs := f.records("plugin.enable"); len(recs) != 2 || recs[1].Detail["secrets_resealed"] != "API_KEY" {
		t.Errorf("the second plugin.enable: %+v", recs)
	}
	for _, r := range f.records("plugin.secret.set") {
		if strings.Contains(strings.Join(slices.Collect(maps.Values(r.Detail)), " "), "canary") {
			t.Errorf("a secret's value in the audit log: %+v", r)
		}
	}
}

// TestSecretsStayWithTheirPlugin: a plugin never gets another plugin's
// secret, nor a server's: two plugins declaring the same name get their
// own values; a value sealed for one plugin, copied into another's row,
// does not open; nor does a server's sealed value; and an undeclared name
// cannot be set.
func TestSecretsStayWithTheirPlugin(t *testing.T) {
	f := newFixture(t)
	caps := map[string]any{"secrets": []string{"TOKEN"}}
	files := helloFiles(caps)
	other := manifest("other", caps, newTool("greet", "Greets."))
	files["plugins/other/plugin.json"], files["plugins/other/plugin.js"] = other, pluginJS
	f.g.Repo(t, "acme/plugins", files)
	pa, a := f.install(hello, false)
	pb, b := f.install(Request{Repo: "acme/plugins", Ref: "main", Folder: "plugins/other"}, false)
	ctx := context.Background()
	f.m.SetSecret(ctx, "user:owner", a.Plugin.ID, "TOKEN", "canary-of-a")
	for _, e := range []struct {
		id int64
		fp string
	}{{a.Plugin.ID, pa.Fingerprint}, {b.Plugin.ID, pb.Fingerprint}} {
		if _, err := f.m.Enable(ctx, "user:owner", e.id, e.fp); err != nil {
			t.Fatal(err)
		}
	}
	if run, err := f.m.Runnable(ctx, b.Plugin.ID); err != nil || len(run.Env) != 0 {
		t.Errorf("b's secrets: %v %v", run.Env, err)
	}
	if _, err := f.m.SetSecret(ctx, "user:owner", b.Plugin.ID, "OTHER", "x"); !errors.Is(err, ErrSecretUnknown) {
		t.Errorf("an undeclared secret: %v", err)
	}
	// a's sealed value, copied into b's row: it does not open for b.
	if _, err := f.db.Exec(`INSERT INTO plugin_secrets (plugin_id, name, sealed, permission_hash, set_by, set_at)
		SELECT ?, name, sealed, permission_hash, set_by, set_at FROM plugin_secrets WHERE plugin_id = ?`, b.Plugin.ID, a.Plugin.ID); err != nil {
		t.Fatal(err)
	}
	if run, err := f.m.Runnable(ctx, b.Plugin.ID); !errors.Is(err, secrets.ErrOpen) || strings.Contains(err.Error(), "canary") {
		t.Errorf("a's value in b's row: %v %v", run.Env, err)
	}
	// A server's value sealed for the same id, name and hash does not open
	// as a plugin's.
	server, _ := f.box.Seal(secrets.Slot{ServerID: b.Plugin.ID, Kind: "env", Name: "TOKEN", Fingerprint: pb.PermissionHash}, "server-canary")
	f.db.Exec(`UPDATE plugin_secrets SET sealed = ? WHERE plugin_id = ?`, server, b.Plugin.ID)
	if _, err := f.m.Runnable(ctx, b.Plugin.ID); !errors.Is(err, secrets.ErrOpen) {
		t.Errorf("a server's value: %v", err)
	}
	if run, err := f.m.Runnable(ctx, a.Plugin.ID); err != nil || run.Env["TOKEN"] != "canary-of-a" {
		t.Errorf("a's own: %v %v", run.Env, err)
	}
}
