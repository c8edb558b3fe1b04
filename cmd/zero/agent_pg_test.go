package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/zero-dev/zero/internal/database/databasetest"
)

// TestAgentWorkersShareOnePostgres: two `zero agent serve --database`
// workers on one PostgreSQL get the same 200 signed deliveries at once,
// each sent to both: each delivery is accepted by exactly one of them (the
// other refuses it as a replay), and River works each exactly once, in
// one attempt.
func TestAgentWorkersShareOnePostgres(t *testing.T) {
	dsn := databasetest.Postgres(t)
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: observe\n"), 0o644)
	var bases []string
	for i := range 2 {
		cmd := exec.Command(zeroBinary(t), "agent", "serve", "--addr", "127.0.0.1:0", "--config", operator, "--database", dsn)
		cmd.Env = agentEnv(filepath.Join(t.TempDir(), fmt.Sprint("home", i)), "http://127.0.0.1:1/v1")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if _, after, ok := strings.Cut(lines.Text(), "receives webhooks at "); ok {
				bases = append(bases, strings.TrimSuffix(after, "/webhooks/{github,gitlab,gitea}"))
				break
			}
		}
		go io.Copy(io.Discard, stderr)
	}
	if len(bases) != 2 {
		t.Fatalf("workers: %v", bases)
	}
	var mu sync.Mutex
	status := map[int]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range 200 {
		body, _ := json.Marshal(map[string]any{"action": "opened", "number": i + 1,
			"pull_request": map[string]any{"number": i + 1, "title": "t", "body": "b", "head": map[string]any{"sha": strings.Repeat("a", 40)}},
			"repository":   map[string]any{"full_name": "acme/widget", "default_branch": "main"}})
		mac := hmac.New(sha256.New, []byte("hook-secret-e2e"))
		mac.Write(body)
		for _, base := range bases {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				req, _ := http.NewRequest("POST", base+"/webhooks/github", bytes.NewReader(body))
				req.Header.Set("X-GitHub-Event", "pull_request")
				req.Header.Set("X-GitHub-Delivery", fmt.Sprint("delivery-", i))
				req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				status[resp.StatusCode]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if status[202] != 200 || status[409] != 200 {
		t.Fatalf("answers: %v, want 200 accepted and 200 refused as replays", status)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var jobs, done, retried int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		db.QueryRowContext(context.Background(), `SELECT count(*), count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE attempt > 1) FROM river_job`).
			Scan(&jobs, &done, &retried)
		if done == 200 {
			break
		}
	}
	if jobs != 200 || done != 200 || retried != 0 {
		t.Errorf("River: %d jobs, %d completed, %d retried; want 200, 200, 0", jobs, done, retried)
	}
}

// TestAgentApproveFromPostgres: zero agent approve --database reads the
// held change from the workers' PostgreSQL: one it does not hold is
// refused as unknown there, and nothing runs.
func TestAgentApproveFromPostgres(t *testing.T) {
	dsn := databasetest.Postgres(t)
	cmd := exec.Command(zeroBinary(t), "agent", "approve", "--database", dsn, "task-nope")
	cmd.Env = agentEnv(filepath.Join(t.TempDir(), "home"), "http://127.0.0.1:1/v1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `no such held task: "task-nope"`) {
		t.Fatalf("approve an unknown task: %v\n%s", err, out)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM held_tasks`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the held tasks table on PostgreSQL: %d %v", n, err)
	}
}
