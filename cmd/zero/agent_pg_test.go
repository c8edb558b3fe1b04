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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/zero-dev/zero/internal/database/databasetest"
	"github.com/zero-dev/zero/internal/repoagent"
	"github.com/zero-dev/zero/internal/testgit"
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
	for range 2 {
		_, base := startWorker(t, dsn, operator, "http://127.0.0.1:1/v1")
		bases = append(bases, base)
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
		sig := "sha256=" + hex.EncodeToString(mac.Sum(nil)) // once: an HMAC is not safe for concurrent use
		for _, base := range bases {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				req, _ := http.NewRequest("POST", base+"/webhooks/github", bytes.NewReader(body))
				req.Header.Set("X-GitHub-Event", "pull_request")
				req.Header.Set("X-GitHub-Delivery", fmt.Sprint("delivery-", i))
				req.Header.Set("X-Hub-Signature-256", sig)
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

// startWorker runs the real `zero agent serve --database dsn` in a new
// home, with extra flags, and returns it and its base URL once it listens.
func startWorker(t testing.TB, dsn, operator, modelURL string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(zeroBinary(t), append([]string{"agent", "serve", "--addr", "127.0.0.1:0", "--config", operator, "--database", dsn}, extra...)...)
	cmd.Env = agentEnv(filepath.Join(t.TempDir(), "home"), modelURL)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "receives webhooks at "); ok {
			go io.Copy(io.Discard, stderr)
			return cmd, strings.TrimSuffix(after, "/webhooks/{github,gitlab,gitea}")
		}
	}
	t.Fatal("zero agent serve --database printed no address")
	return nil, ""
}

// TestAgentRunAndApproveOnPostgres: `zero agent run --database` holds a
// high-impact change in the workers' PostgreSQL, not in its $ZERO_HOME, and
// writes its record to the shared chain; `zero agent approve --database`
// from another home applies it end to end (a branch on the remote), and
// `zero agent records --database` reads and verifies both records there.
func TestAgentRunAndApproveOnPostgres(t *testing.T) {
	dsn := databasetest.Postgres(t)
	checkout, remote := agentRepo(t)
	workflow := readmeFix + "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\nnew file mode 100644\n--- /dev/null\n+++ b/.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n"
	modelURL := modelServer(t, workflow)
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: fix\n"), 0o644)
	home := filepath.Join(t.TempDir(), "home")
	cmd := exec.Command(zeroBinary(t), "agent", "run", "--repo", checkout, "--mode", "fix", "--config", operator, "--event", writeEvent(t), "--database", dsn)
	cmd.Env = agentEnv(home, modelURL)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "outcome: held_high_impact") {
		t.Fatalf("zero agent run --database: %v\n%s", err, out)
	}
	_, after, _ := strings.Cut(string(out), "zero agent approve ")
	task := strings.Fields(after)[0]
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status string
	if err := db.QueryRow(`SELECT status FROM held_tasks WHERE id = $1`, task).Scan(&status); err != nil || status != "held" {
		t.Fatalf("the held change on PostgreSQL: %q %v", status, err)
	}
	for _, local := range []string{"agent.db", "records.log"} {
		if _, err := os.Stat(filepath.Join(home, "agent", local)); err == nil {
			t.Errorf("zero agent run --database wrote %s in its home", local)
		}
	}

	other := agentEnv(filepath.Join(t.TempDir(), "home"), modelURL)
	approve := exec.Command(zeroBinary(t), "agent", "approve", "--config", operator, "--database", dsn, task)
	approve.Env, approve.Stdin = other, strings.NewReader(task+"\n")
	if out, err := approve.CombinedOutput(); err != nil || !strings.Contains(string(out), "outcome: applied") {
		t.Fatalf("zero agent approve --database: %v\n%s", err, out)
	}
	if branch := testgit.Run(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/"); branch != "refs/heads/agent-zero/"+task {
		t.Errorf("branches after the approval: %q", branch)
	}
	verify := exec.Command(zeroBinary(t), "agent", "records", "--verify", "--database", dsn)
	verify.Env = other
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "2 records, chain intact") || strings.Contains(string(out), dsn) {
		t.Errorf("zero agent records --verify --database: %v\n%s", err, out)
	}
	list := exec.Command(zeroBinary(t), "agent", "records", "--database", dsn)
	list.Env = other
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), "task="+task+" outcome=held_high_impact") ||
		!strings.Contains(string(out), "task="+task+" outcome=applied") {
		t.Errorf("zero agent records --database: %v\n%s", err, out)
	}
}

// TestAgentRecordsOneChainOnPostgres: eight `zero agent run --database`
// processes at once on a new database, each in its own home, make the
// tables once and append their task records to one chain: it holds eight
// records of eight tasks and verifies; a record changed in the table makes
// `zero agent records --verify --database` fail.
func TestAgentRecordsOneChainOnPostgres(t *testing.T) {
	dsn := databasetest.Postgres(t)
	checkout, _ := agentRepo(t)
	modelURL := modelServer(t, readmeFix)
	runOnce := func() error {
		cmd := exec.Command(zeroBinary(t), "agent", "run", "--repo", checkout, "--database", dsn)
		cmd.Env = agentEnv(filepath.Join(t.TempDir(), "home"), modelURL)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "outcome: observed") {
			return fmt.Errorf("zero agent run --database: %v\n%s", err, out)
		}
		return nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := runOnce(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	env := agentEnv(filepath.Join(t.TempDir(), "home"), "http://127.0.0.1:1/v1")
	verify := exec.Command(zeroBinary(t), "agent", "records", "--verify", "--database", dsn)
	verify.Env = env
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "8 records, chain intact") {
		t.Fatalf("zero agent records --verify --database: %v\n%s", err, out)
	}
	list := exec.Command(zeroBinary(t), "agent", "records", "--database", dsn)
	list.Env = env
	out, err := list.CombinedOutput()
	tasks := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, after, ok := strings.Cut(l, " task="); ok {
			tasks[strings.Fields(after)[0]] = true
		}
	}
	if err != nil || len(tasks) != 8 {
		t.Errorf("zero agent records --database: %d tasks, %v\n%s", len(tasks), err, out)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE audit_records SET detail = replace(detail, 'observed', 'applied') WHERE seq = 5`); err != nil {
		t.Fatal(err)
	}
	again := exec.Command(zeroBinary(t), "agent", "records", "--verify", "--database", dsn)
	again.Env = env
	if out, err := again.CombinedOutput(); err == nil || !strings.Contains(string(out), "is not whole") || !strings.Contains(string(out), "record 5") {
		t.Errorf("verify a changed chain: %v\n%s", err, out)
	}
}

// TestAgentKill9MidTaskRetriedOnce: two `zero agent serve --database`
// workers; a pull request's task reaches its check, which waits on a fifo
// the test holds, and the worker running it is killed with SIGKILL. River
// takes the task for stuck after --rescue-after and retries it on the
// other worker, which pushes. The real git server then has exactly one
// agent-zero branch, named for the job's task (each attempt is the same
// task), with the fix; the shared chain holds one record, applied, and
// verifies; the job completed in its second attempt, by the other worker.
func TestAgentKill9MidTaskRetriedOnce(t *testing.T) {
	if outcome := killMidTask(t, false); outcome != "outcome=applied reason=chain_held" {
		t.Errorf("the retry's record: %s", outcome)
	}
}

// TestAgentKill9AfterThePush: as TestAgentKill9MidTaskRetriedOnce, but the
// worker is killed after its push landed and before its record (the test
// holds the records' advisory lock, so the append waits) and the job's
// completion. The retry on the other worker pushes nothing: the one
// agent-zero branch is still at the first attempt's commit, and the chain
// holds one record, the retry's, failed with branch_exists.
func TestAgentKill9AfterThePush(t *testing.T) {
	if outcome := killMidTask(t, true); outcome != "outcome=failed reason=branch_exists" {
		t.Errorf("the retry's record: %s", outcome)
	}
}

// killMidTask runs the kill -9 test: in the check, or (afterPush) once the
// push has landed; it checks the job, the one branch and the chain of one
// record, and returns that record's outcome and reason.
func killMidTask(t *testing.T, afterPush bool) (outcome string) {
	dsn := databasetest.Postgres(t)
	fifos := t.TempDir()
	started := filepath.Join(fifos, "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	// The check tells the test which worker runs it (its parent, PID), then
	// waits until the test opens the fifo release.PID and closes it.
	policy := strings.Replace(agentPolicy, "checks:\n", "checks:\n  - [sh, wait.sh]\n", 1)
	srv := testgit.NewServer(t)
	srv.Repo(t, "acme/widget", map[string]string{"README.md": "helo\n", ".agent-zero.yml": policy,
		"wait.sh": "echo $PPID > '" + started + "'\ncat '" + fifos + "'/release.$PPID > /dev/null\n"})
	checkout := filepath.Join(t.TempDir(), "widget")
	testgit.Run(t, filepath.Dir(checkout), "clone", "-q", "-b", "main", srv.URL+"/acme/widget.git", checkout)
	bare := filepath.Join(srv.Root, "acme", "widget.git")
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: fix\neventModes:\n  pull_request: fix\ncheckTimeout: 5m\nrepositories:\n  - name: acme/widget\n    path: "+checkout+"\n"), 0o644)

	modelURL := modelServer(t, readmeFix)
	workers := map[int]*exec.Cmd{}
	var base string
	for range 2 {
		cmd, b := startWorker(t, dsn, operator, modelURL, "--task-timeout", "15s", "--rescue-after", "16s")
		workers[cmd.Process.Pid], base = cmd, b
		if err := syscall.Mkfifo(filepath.Join(fifos, fmt.Sprint("release.", cmd.Process.Pid)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Whatever happens, the checks left waiting (the killed worker's
	// outlives it) are released when the test ends.
	t.Cleanup(func() {
		for pid := range workers {
			if f, err := os.OpenFile(filepath.Join(fifos, fmt.Sprint("release.", pid)), os.O_RDWR, 0); err == nil {
				f.Close()
			}
		}
	})
	pids := make(chan int, 4)
	go func() {
		for {
			f, err := os.Open(started)
			if err != nil {
				return
			}
			var pid int
			_, err = fmt.Fscan(f, &pid)
			f.Close()
			if err == nil { // else the last writer was still closing: nothing new
				pids <- pid
			}
		}
	}()
	t.Cleanup(func() { os.Remove(started) })
	next := func(what string) int {
		select {
		case pid := <-pids:
			if workers[pid] == nil {
				t.Fatalf("%s: the check's parent %d is not a worker", what, pid)
			}
			return pid
		case <-time.After(90 * time.Second):
			t.Fatalf("%s: no check started", what)
		}
		return 0
	}

	releaseCheck := func(pid int) {
		f, err := os.OpenFile(filepath.Join(fifos, fmt.Sprint("release.", pid)), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var hold *sql.Conn
	if afterPush {
		// audit.Table's advisory lock ("zeroaudt"), held on one session: the
		// first attempt's record waits for it, after its push.
		if hold, err = db.Conn(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer hold.Close()
		if _, err := hold.ExecContext(context.Background(), `SELECT pg_advisory_lock($1)`, int64(0x7a65726f61756474)); err != nil {
			t.Fatal(err)
		}
	}

	if st := sendPullRequest(t, base, checkout, "hook-secret-e2e"); st != 202 {
		t.Fatalf("the signed webhook: %d", st)
	}
	first := next("the first attempt")
	var pushed string
	if afterPush {
		releaseCheck(first)
		for deadline := time.Now().Add(60 * time.Second); pushed == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			pushed = testgit.Run(t, bare, "for-each-ref", "--format=%(objectname)", "refs/heads/agent-zero/")
		}
		if pushed == "" {
			t.Fatal("the first attempt pushed nothing")
		}
	}
	workers[first].Process.Kill() // SIGKILL, mid-check or before the record
	workers[first].Wait()
	if afterPush {
		if _, err := hold.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(0x7a65726f61756474)); err != nil {
			t.Fatal(err)
		}
	}
	second := next("the retry")
	if second == first {
		t.Fatalf("the retry ran on the killed worker %d", first)
	}
	releaseCheck(second)

	var (
		id                int64
		state             string
		attempt, workedBy int
		created           time.Time
	)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		err = db.QueryRow(`SELECT id, state, attempt, cardinality(attempted_by), created_at FROM river_job`).Scan(&id, &state, &attempt, &workedBy, &created)
		if err == nil && state == "completed" {
			break
		}
	}
	if state != "completed" || attempt != 2 || workedBy != 2 {
		t.Fatalf("the job: %s, attempt %d, by %d workers, %v; want completed, in attempt 2, by 2", state, attempt, workedBy, err)
	}
	task := repoagent.JobTaskID(id, created)
	branches := testgit.Run(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/agent-zero/")
	if branches != "refs/heads/agent-zero/"+task {
		recs, _ := exec.Command(zeroBinary(t), "agent", "records", "--database", dsn).CombinedOutput()
		t.Fatalf("agent-zero branches on the git server: %q, want one, refs/heads/agent-zero/%s; records:\n%s", branches, task, recs)
	}
	if got := testgit.Run(t, bare, "show", branches+":README.md"); got != "hello" {
		t.Errorf("the pushed README: %q", got)
	}
	commit := testgit.Run(t, bare, "rev-parse", branches)
	if afterPush && commit != pushed {
		t.Errorf("the branch moved from the first attempt's %s to %s", pushed, commit)
	}
	env := agentEnv(filepath.Join(t.TempDir(), "home"), "http://127.0.0.1:1/v1")
	verify := exec.Command(zeroBinary(t), "agent", "records", "--verify", "--database", dsn)
	verify.Env = env
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "1 records, chain intact") {
		t.Errorf("zero agent records --verify --database: %v\n%s", err, out)
	}
	list := exec.Command(zeroBinary(t), "agent", "records", "--database", dsn)
	list.Env = env
	out, err := list.CombinedOutput()
	_, rest, ok := strings.Cut(string(out), " task="+task+" ")
	if err != nil || !ok {
		t.Fatalf("zero agent records --database: %v\n%s", err, out)
	}
	fields := strings.Fields(rest)
	for _, f := range fields {
		if strings.HasPrefix(f, "outcome=") || strings.HasPrefix(f, "reason=") {
			outcome = strings.TrimSpace(outcome + " " + f)
		}
	}
	return outcome
}

// BenchmarkAgentWebhooks: signed webhook deliveries per second that one
// and two `zero agent serve --database` workers on one PostgreSQL accept
// (each verified, taken once in the shared ledger and queued in River),
// 16 in flight from a client on the same machine, spread over the
// workers. The deliveries are for a repository no worker enables, so each
// job is worked and ignored: the figure is the receiving, not the tasks.
func BenchmarkAgentWebhooks(b *testing.B) {
	operator := filepath.Join(b.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: observe\n"), 0o644)
	body, _ := json.Marshal(map[string]any{"action": "opened", "number": 1,
		"pull_request": map[string]any{"number": 1, "title": "t", "body": "b", "head": map[string]any{"sha": strings.Repeat("a", 40)}},
		"repository":   map[string]any{"full_name": "acme/widget", "default_branch": "main"}})
	mac := hmac.New(sha256.New, []byte("hook-secret-e2e"))
	mac.Write(body)
	signature := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	var sent atomic.Int64
	for _, n := range []int{1, 2} {
		var bases []string
		var cmds []*exec.Cmd
		b.Run(fmt.Sprintf("workers=%d", n), func(sb *testing.B) {
			if bases == nil { // once, on the parent: the rounds reuse them
				dsn := databasetest.Postgres(b)
				for range n {
					cmd, base := startWorker(b, dsn, operator, "http://127.0.0.1:1/v1")
					cmds, bases = append(cmds, cmd), append(bases, base)
				}
			}
			var next atomic.Int64
			sb.ResetTimer()
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(sb.N); i = next.Add(1) {
						req, _ := http.NewRequest("POST", bases[int(i)%len(bases)]+"/webhooks/github", bytes.NewReader(body))
						req.Header.Set("X-GitHub-Event", "pull_request")
						req.Header.Set("X-GitHub-Delivery", fmt.Sprint("bench-", sent.Add(1)))
						req.Header.Set("X-Hub-Signature-256", signature)
						resp, err := client.Do(req)
						if err != nil {
							sb.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 202 {
							sb.Errorf("a delivery: %d", resp.StatusCode)
							return
						}
					}
				})
			}
			wg.Wait()
			sb.ReportMetric(float64(sb.N)/sb.Elapsed().Seconds(), "deliveries/s")
		})
		for _, c := range cmds { // the next figure runs without these
			c.Process.Kill()
			c.Wait()
		}
	}
}

// TestAgentWorkersStartTogether: four `zero agent serve --database`
// workers started at the same moment on a new, empty database all start
// (the tables are made once, under an advisory lock, not raced for).
func TestAgentWorkersStartTogether(t *testing.T) {
	dsn := databasetest.Postgres(t)
	operator := filepath.Join(t.TempDir(), "operator.yml")
	os.WriteFile(operator, []byte("ceiling: observe\n"), 0o644)
	var wg sync.WaitGroup
	for range 4 {
		cmd := exec.Command(zeroBinary(t), "agent", "serve", "--addr", "127.0.0.1:0", "--config", operator, "--database", dsn)
		cmd.Env = agentEnv(filepath.Join(t.TempDir(), "home"), "http://127.0.0.1:1/v1")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		wg.Go(func() {
			var said []string
			for lines := bufio.NewScanner(stderr); lines.Scan(); {
				if strings.Contains(lines.Text(), "receives webhooks at ") {
					go io.Copy(io.Discard, stderr)
					return
				}
				said = append(said, lines.Text())
			}
			t.Errorf("a worker did not start: %s", strings.Join(said, "\n"))
		})
	}
	wg.Wait()
}
