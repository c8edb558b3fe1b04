package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/guard/spawn"
	"github.com/zero-dev/zero/internal/testgit"
)

const agentPolicy = `mode: fix
autofix:
  enabled: true
  minConfidence: 0.8
  allowedChangeRisks: [docs]
checks:
  - [grep, -q, hello, README.md]
`

const readmeFix = `diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-helo
+hello
`

// agentRepo makes a local bare repository as the remote and a checkout of
// it whose main holds the policy and a README with a typo.
func agentRepo(t *testing.T) (checkout, remote string) {
	return testgit.Repo(t, map[string]string{"README.md": "helo\n", ".agent-zero.yml": agentPolicy})
}

// modelServer is a local server in the OpenAI chat-completions format,
// at /v1/chat/completions only, whose replies the test scripts: it reads
// README.md with a tool, then proposes diff with confidence 0.95.
func modelServer(t *testing.T, diff string) string {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		var req struct {
			Messages []struct{ Role string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		msg := map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": "c1", "type": "function",
			"function": map[string]any{"name": "read_file", "arguments": `{"path":"README.md"}`}}}}
		if req.Messages[len(req.Messages)-1].Role == "tool" {
			final, _ := json.Marshal(map[string]any{"summary": "a typo", "findings": []any{}, "diff": diff, "confidence": 0.95})
			msg = map[string]any{"role": "assistant", "content": string(final)}
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func agentEnv(home, modelURL string) []string {
	return append(os.Environ(), "ZERO_HOME="+home, "AGENT_ZERO_MODEL_BASE_URL="+modelURL, "AGENT_ZERO_MODEL=scripted",
		"AGENT_ZERO_MODEL_API_KEY=sk-e2e-canary", "AGENT_ZERO_WEBHOOK_SECRET=hook-secret-e2e")
}

// TestAgentRunObservesByDefault: `zero agent run` without --mode reports
// the model's proposal, its diff marked as unverified model output, and
// writes nothing: the checkout is byte-identical and the remote has no new
// branch.
func TestAgentRunObservesByDefault(t *testing.T) {
	checkout, remote := agentRepo(t)
	before := testgit.TreeHash(t, checkout)
	cmd := exec.Command(zeroBinary(t), "agent", "run", "--repo", checkout)
	cmd.Env = agentEnv(filepath.Join(t.TempDir(), "home"), modelServer(t, readmeFix))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "outcome: observed") || !strings.Contains(string(out), "mode: observe") ||
		!strings.Contains(string(out), "proposed change (from the model, unverified") || !strings.Contains(string(out), "  | +hello") {
		t.Fatalf("zero agent run: %v\n%s", err, out)
	}
	if testgit.TreeHash(t, checkout) != before {
		t.Error("an observe run changed the checkout")
	}
	if refs := testgit.Run(t, remote, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
		t.Errorf("refs on the remote: %s", refs)
	}
}

// TestAgentWebhookEndToEnd: a signed GitHub webhook to the real `zero
// agent serve` (River queue on SQLite, a scripted local model, a local
// bare repository as the remote) leads to a branch pushed with the fix; a
// replay is refused; and the task records verify.
func TestAgentWebhookEndToEnd(t *testing.T) {
	checkout, remote := agentRepo(t)
	home := filepath.Join(t.TempDir(), "home")
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: fix\neventModes:\n  pull_request: fix\nrepositories:\n  - name: acme/widget\n    path: "+checkout+"\n"), 0o644)
	cmd, base := startAgentServe(t, home, operator, modelServer(t, readmeFix))
	send := func(secret string) int { return sendPullRequest(t, base, checkout, secret) }
	if st := send("wrong-secret"); st != 401 {
		t.Errorf("a forged signature: %d", st)
	}
	if st := send("hook-secret-e2e"); st != 202 {
		t.Fatalf("the signed webhook: %d", st)
	}
	if st := send("hook-secret-e2e"); st != 409 {
		t.Errorf("a replay: %d", st)
	}
	var branch string
	for deadline := time.Now().Add(60 * time.Second); branch == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		branch = testgit.Run(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/")
	}
	if branch == "" {
		t.Fatal("no branch was pushed")
	}
	if got := testgit.Run(t, remote, "show", branch+":README.md"); got != "hello" {
		t.Errorf("the pushed README: %q", got)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	verify := exec.Command(zeroBinary(t), "agent", "records", "--verify")
	verify.Env = agentEnv(home, "http://127.0.0.1:1/v1")
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "1 records, chain and head intact") {
		t.Errorf("zero agent records --verify: %v\n%s", err, out)
	}
	list := exec.Command(zeroBinary(t), "agent", "records")
	list.Env = verify.Env
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), "outcome=applied") || strings.Contains(string(out), "please fix") {
		t.Errorf("zero agent records: %v\n%s", err, out)
	}
}

// startAgentServe runs the real `zero agent serve` and returns it and its
// base URL.
func startAgentServe(t *testing.T, home, operator, modelURL string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(zeroBinary(t), "agent", "serve", "--addr", "127.0.0.1:0", "--config", operator)
	cmd.Env = agentEnv(home, modelURL)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	var base string
	for base == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "receives webhooks at "); ok {
			base = strings.TrimSuffix(after, "/webhooks/{github,gitlab,gitea}")
		}
	}
	if base == "" {
		t.Fatal("zero agent serve printed no address")
	}
	go io.Copy(io.Discard, stderr)
	return cmd, base
}

// sendPullRequest sends a GitHub pull_request webhook for the checkout's
// HEAD, signed with secret, and returns the status.
func sendPullRequest(t *testing.T, base, checkout, secret string) int {
	t.Helper()
	head := testgit.Run(t, checkout, "rev-parse", "HEAD")
	body, _ := json.Marshal(map[string]any{"action": "opened", "number": 7,
		"pull_request": map[string]any{"number": 7, "title": "Typo", "body": "please fix", "head": map[string]any{"sha": head}},
		"repository":   map[string]any{"full_name": "acme/widget", "default_branch": "main"}})
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", base+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "e2e-delivery-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAgentWebhookCannotRaiseMode: with a repository policy of fix and an
// operator ceiling of autonomous, a webhook whose kind the operator gives
// no mode runs in observe: the record says observed (the run asked for
// no more) and nothing is pushed.
func TestAgentWebhookCannotRaiseMode(t *testing.T) {
	checkout, remote := agentRepo(t)
	home := filepath.Join(t.TempDir(), "home")
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: autonomous\nrepositories:\n  - name: acme/widget\n    path: "+checkout+"\n"), 0o644)
	cmd, base := startAgentServe(t, home, operator, modelServer(t, readmeFix))
	if st := sendPullRequest(t, base, checkout, "hook-secret-e2e"); st != 202 {
		t.Fatalf("the signed webhook: %d", st)
	}
	var out []byte
	for deadline := time.Now().Add(60 * time.Second); !bytes.Contains(out, []byte("outcome=")) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list := exec.Command(zeroBinary(t), "agent", "records")
		list.Env = agentEnv(home, "http://127.0.0.1:1/v1")
		out, _ = list.CombinedOutput()
	}
	if !bytes.Contains(out, []byte("outcome=observed mode=observe")) {
		t.Errorf("the webhook's run: %s", out)
	}
	if refs := testgit.Run(t, remote, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
		t.Errorf("refs on the remote: %s", refs)
	}
	cmd.Process.Signal(syscall.SIGTERM)
}

// TestAgentApproveCommand: a held change is shown with its diff and
// applied only after the person types the task id.
func TestAgentApproveCommand(t *testing.T) {
	remote, env, operator, task := holdChange(t)

	refuse := exec.Command(zeroBinary(t), "agent", "approve", "--config", operator, task)
	refuse.Env, refuse.Stdin = env, strings.NewReader("no\n")
	if out, err := refuse.CombinedOutput(); err == nil || !strings.Contains(string(out), ".github/workflows/ci.yml") {
		t.Errorf("a refused approval: %v\n%s", err, out)
	}
	approve := exec.Command(zeroBinary(t), "agent", "approve", "--config", operator, task)
	approve.Env, approve.Stdin = env, strings.NewReader(task+"\n")
	if out, err := approve.CombinedOutput(); err != nil || !strings.Contains(string(out), "outcome: applied") {
		t.Fatalf("zero agent approve: %v\n%s", err, out)
	}
	if branch := testgit.Run(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/"); branch == "" {
		t.Error("no branch after the approval")
	}
}

// holdChange runs `zero agent run` under a ceiling of fix on a pull
// request whose change adds a workflow, which the chain holds, and returns
// the remote, the environment, the operator's file and the task.
func holdChange(t *testing.T) (remote string, env []string, operator, task string) {
	t.Helper()
	checkout, remote := agentRepo(t)
	home := filepath.Join(t.TempDir(), "home")
	workflow := readmeFix + "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\nnew file mode 100644\n--- /dev/null\n+++ b/.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n"
	env = agentEnv(home, modelServer(t, workflow))
	operator = filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: fix\n"), 0o644)
	cmd := exec.Command(zeroBinary(t), "agent", "run", "--repo", checkout, "--mode", "fix", "--config", operator, "--event", writeEvent(t))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "outcome: held_high_impact") {
		t.Fatalf("zero agent run: %v\n%s", err, out)
	}
	_, after, _ := strings.Cut(string(out), "zero agent approve ")
	return remote, env, operator, strings.Fields(after)[0]
}

// writeEvent writes a pull-request event for `zero agent run --event`.
func writeEvent(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event.json")
	os.WriteFile(path, []byte(`{"Forge":"github","Kind":"pull_request","Action":"opened","Repo":"acme/widget","Number":7}`), 0o644)
	return path
}

// TestAgentApproveAfterTheCeilingIsLowered: a change held under a ceiling
// of fix is not pushed by `zero agent approve` once the operator lowers
// the ceiling to observe: the approval goes through the same chain, with
// the configuration as it is now, and lifts only the high-impact hold.
func TestAgentApproveAfterTheCeilingIsLowered(t *testing.T) {
	remote, env, operator, task := holdChange(t)

	os.WriteFile(operator, []byte("ceiling: observe\n"), 0o644)
	approve := exec.Command(zeroBinary(t), "agent", "approve", "--config", operator, task)
	approve.Env, approve.Stdin = env, strings.NewReader(task+"\n")
	out, err := approve.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "outcome: refused_mode") || strings.Contains(string(out), "every step of the chain held") ||
		!strings.Contains(string(out), "the operator's ceiling, observe") {
		t.Fatalf("zero agent approve under a lowered ceiling: %v\n%s", err, out)
	}
	if refs := testgit.Run(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/"); refs != "" {
		t.Errorf("pushed: %s", refs)
	}
}

// TestAgentSIGTERMDuringACheck: `zero agent run` stopped by SIGTERM while
// a check hangs records the task as interrupted, not as a refusal that
// blames the change, and exits 1.
func TestAgentSIGTERMDuringACheck(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	hanging := strings.Replace(agentPolicy, "[grep, -q, hello, README.md]", "[sh, hang.sh]", 1)
	checkout, _ := testgit.Repo(t, map[string]string{"README.md": "helo\n", ".agent-zero.yml": hanging,
		"hang.sh": "touch '" + marker + "'\nexec sleep 60\n"})
	home := filepath.Join(t.TempDir(), "home")
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: fix\n"), 0o644)
	cmd := exec.Command(zeroBinary(t), "agent", "run", "--repo", checkout, "--mode", "fix", "--config", operator, "--event", writeEvent(t))
	cmd.Env = agentEnv(home, modelServer(t, readmeFix))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the check never started:\n%s", out.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if err == nil || !strings.Contains(out.String(), "outcome: interrupted") {
		t.Fatalf("zero agent run after SIGTERM: %v\n%s", err, out.String())
	}
	list := exec.Command(zeroBinary(t), "agent", "records")
	list.Env = agentEnv(home, "http://127.0.0.1:1/v1")
	if recs, err := list.CombinedOutput(); err != nil || !strings.Contains(string(recs), "outcome=interrupted") || strings.Contains(string(recs), "refused_checks_failed") {
		t.Errorf("zero agent records: %v\n%s", err, recs)
	}
}

// readmeBlock returns the fenced block of the README's Agent Zero section
// whose first line is first (a "# NAME" comment, or "export" for the shell).
func readmeBlock(t *testing.T, first string) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Agent Zero\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, block := range strings.Split(section, "```")[1:] {
		_, body, _ := strings.Cut(block, "\n")
		if strings.HasPrefix(body, first) {
			return body
		}
	}
	t.Fatalf("the README's Agent Zero section has no block starting %q", first)
	return ""
}

// TestAgentREADMEFirstWrite runs the README's first write exactly as it is
// written: its operator.yml at $ZERO_HOME/agent/operator.yml, its
// .agent-zero.yml on the default branch, its environment variables (the
// base URL's path kept, its host a local model server that answers only
// there) and its command, on a Go repository with a typo; the fix is
// applied after `go test ./...` passed in the container, and pushed.
func TestAgentREADMEFirstWrite(t *testing.T) {
	if err := spawn.IsolationAvailable(); err != nil {
		if os.Getenv("ZERO_REQUIRE_BWRAP") != "" {
			t.Fatalf("bubblewrap is required: %v", err)
		}
		t.Skip(err)
	}
	const path = "/srv/checkouts/widget"
	checkout, remote := testgit.Repo(t, map[string]string{
		"README.md": "helo\n", "go.mod": "module example.com/widget\n\ngo 1.22\n",
		"widget.go":      "package widget\n\nfunc Two() int { return 2 }\n",
		"widget_test.go": "package widget\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(Two())\n\t}\n}\n",
	})
	os.WriteFile(filepath.Join(checkout, ".agent-zero.yml"), []byte(readmeBlock(t, "# .agent-zero.yml")), 0o644)
	testgit.Run(t, checkout, "add", ".agent-zero.yml")
	testgit.Run(t, checkout, "commit", "--quiet", "-m", "agent zero")
	testgit.Run(t, checkout, "push", "--quiet", "origin", "main")

	home := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(filepath.Join(home, "agent"), 0o700)
	operator := strings.ReplaceAll(readmeBlock(t, "# operator.yml"), path, checkout)
	os.WriteFile(filepath.Join(home, "agent", "operator.yml"), []byte(operator), 0o600)

	model := modelServer(t, readmeFix) // ends in /v1; it answers only at /v1/chat/completions
	env := append(os.Environ(), "ZERO_HOME="+home)
	var argv []string
	for _, line := range strings.Split(readmeBlock(t, "export "), "\n") {
		line, _, _ = strings.Cut(line, " #")
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "export "):
			name, value, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			if name == "AGENT_ZERO_MODEL_BASE_URL" {
				u, err := url.Parse(value)
				if err != nil || u.Scheme != "https" {
					t.Fatalf("the README's base URL %q", value)
				}
				value = strings.TrimSuffix(model, "/v1") + u.Path
			}
			env = append(env, name+"="+value)
		case strings.HasPrefix(line, "zero "):
			argv = strings.Fields(strings.ReplaceAll(line, path, checkout))[1:]
		}
	}
	cmd := exec.Command(zeroBinary(t), argv...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "outcome: applied") || !strings.Contains(string(out), "checks: passed (isolation: container)") {
		t.Fatalf("zero %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	branch := testgit.Run(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/")
	if branch == "" || testgit.Run(t, remote, "show", branch+":README.md") != "hello" {
		t.Errorf("the pushed branch %q", branch)
	}
}
