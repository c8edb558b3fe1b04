package providers

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/model/modeltest"
	"github.com/zero-dev/zero/internal/workspace/secrets"
	"github.com/zero-dev/zero/internal/workspace/store"
)

// TestWireAPIAnthropic: a provider saved with the Anthropic wire keeps it,
// lists its models from /v1/models with Anthropic's headers, and its
// client speaks Anthropic's Messages API with the key in x-api-key.
func TestWireAPIAnthropic(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	srv := modeltest.NewAnthropic(t)
	f.m.http = srv.Client()
	p, err := f.m.Save(ctx, "user:owner", Provider{Name: "claude", BaseURL: srv.BaseURL(), WireAPI: model.WireAnthropic, Stream: true, DefaultModel: "scripted-1"},
		Key{Set: true, Value: canary})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.m.Get(ctx, p.ID); got.WireAPI != model.WireAnthropic {
		t.Errorf("saved wire API %q, want %q", got.WireAPI, model.WireAnthropic)
	}
	if err := f.m.Reach(ctx, p); err != nil {
		t.Errorf("reach: %v", err)
	}
	if p, err = f.m.Discover(ctx, "user:owner", p.ID); err != nil || strings.Join(p.Models, ",") != "scripted-1,scripted-2" {
		t.Fatalf("discover: %v %v (refused: %q)", p.Models, err, srv.Refused())
	}
	c, _, err := f.m.Client(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	srv.Push(modeltest.Reply{Text: "hello from claude"})
	res, err := c.Stream(ctx, model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}, nil)
	if err != nil || res.Message.Content != "hello from claude" {
		t.Fatalf("stream: %+v %v", res, err)
	}
	hs := srv.Headers()
	if h := hs[len(hs)-1]; h.Get("x-api-key") != canary || h.Get("Authorization") != "" {
		t.Errorf("headers: x-api-key %q, Authorization %q", h.Get("x-api-key"), h.Get("Authorization"))
	}
	log, _ := os.ReadFile(f.auditPath)
	if !strings.Contains(string(log), `"wire_api":"anthropic-messages"`) {
		t.Errorf("audit log does not say the wire API:\n%s", log)
	}
}

// TestWireAPIRefusedAndDefault: an unknown wire API is refused; none is
// chat completions.
func TestWireAPIRefusedAndDefault(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, bad := range []string{"anthropic", "openai", "Responses", "chat"} {
		_, err := f.m.Save(ctx, "user:owner", Provider{Name: "x", BaseURL: "https://api.example.com/v1", WireAPI: bad}, Key{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "wire API") {
			t.Errorf("wire API %q: %v, want it refused", bad, err)
		}
	}
	p, err := f.m.Save(ctx, "user:owner", Provider{Name: "x", BaseURL: "https://api.example.com/v1"}, Key{})
	if err != nil || p.WireAPI != model.WireChat {
		t.Errorf("no wire API: %q %v, want %q", p.WireAPI, err, model.WireChat)
	}
	p.WireAPI = model.WireResponses
	if p, err = f.m.Save(ctx, "user:owner", p, Key{}); err != nil || p.WireAPI != model.WireResponses {
		t.Errorf("changed to responses: %q %v", p.WireAPI, err)
	}
}

// TestWireAPIMigration: a provider saved before the wire API existed
// speaks chat completions after the migration.
func TestWireAPIMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	migrations := store.Migrations()
	old := databasetest.OpenAt(t, path, migrations[:len(migrations)-1])
	if _, err := old.Exec(`INSERT INTO providers (name, base_url, stream, default_model, models, api_key, key_set_by, updated_at)
		VALUES ('old', 'https://api.example.com/v1', 1, 'm', '[]', NULL, '', '2025-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db := databasetest.OpenAt(t, path, migrations)
	key := make([]byte, 32)
	rand.Read(key)
	box, _ := secrets.New(key)
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	list, err := New(db, box, log).List(context.Background())
	if err != nil || len(list) != 1 || list[0].WireAPI != model.WireChat {
		t.Errorf("after the migration: %+v %v", list, err)
	}
}
