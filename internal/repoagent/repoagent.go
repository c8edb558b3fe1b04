// Package repoagent is Agent Zero, `zero agent`: repository automation that
// observes by default. It wires the pieces: the operator's configuration,
// credentials from fixed environment variables only, Agent Zero's state
// and task records under $ZERO_HOME/agent (or, with a database URL, in a
// PostgreSQL database several workers share), one run on a checkout
// (package run), approvals of held changes, and the webhook receiver with
// its durable queue (River on SQLite or PostgreSQL) and workers.
package repoagent

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/zero-dev/zero/internal/audit"
	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/guard/localhttp"
	"github.com/zero-dev/zero/internal/model"
	"github.com/zero-dev/zero/internal/repoagent/policy"
	"github.com/zero-dev/zero/internal/repoagent/record"
	"github.com/zero-dev/zero/internal/repoagent/run"
	"github.com/zero-dev/zero/internal/repoagent/state"
	"github.com/zero-dev/zero/internal/repoagent/webhook"
)

// DefaultAddr is where `zero agent serve` listens.
const DefaultAddr = "127.0.0.1:7078"

// TaskTimeout is the default bound on one queued task (ServeOptions): a
// model review, then up to 20 checks (run twice when the change touches
// its tests) of at most the operator's checkTimeout each would not fit in
// River's default minute. A task cut by it is recorded as interrupted.
const TaskTimeout = time.Hour

// RescueMargin is how much longer than the task timeout a task must have
// been running before River takes it for stuck (its worker killed or cut
// off) and retries it, unless ServeOptions says otherwise.
const RescueMargin = 10 * time.Minute

// MinTaskTimeout is the shortest task timeout Serve accepts.
const MinTaskTimeout = time.Second

// The environment variables Agent Zero reads, and no others (besides
// those package model reads: AGENT_ZERO_MODEL_BASE_URL,
// AGENT_ZERO_MODEL_API_KEY and AGENT_ZERO_MODEL).
const (
	EnvWebhookSecret = "AGENT_ZERO_WEBHOOK_SECRET"
	EnvGitLabToken   = "AGENT_ZERO_GITLAB_TOKEN"
	EnvGitHubToken   = "AGENT_ZERO_GITHUB_TOKEN"
)

// Options configure an Agent.
type Options struct {
	Home         string              // $ZERO_HOME; Agent Zero keeps its files in Home/agent
	OperatorFile string              // the operator's configuration; "" means Home/agent/operator.yml if it exists
	Getenv       func(string) string // reads the environment (the CLI passes os.Getenv); nil: an empty one
	Stderr       io.Writer
	// DatabaseURL, if set, names a PostgreSQL database that holds the state
	// (held changes, the delivery ledger), the work queue and the task
	// records' hash chain instead of Home/agent, which several workers on
	// several machines may share.
	DatabaseURL string
}

// An Agent is Agent Zero, open.
type Agent struct {
	dir      string
	operator policy.Operator
	model    *model.Client
	secrets  []string
	hooks    webhook.Secrets
	token    string
	state    *state.State
	pool     *database.Pool // with Options.DatabaseURL: River's connections
	records  *record.Log
	log      *slog.Logger
}

// Open reads the operator's configuration and the environment, and opens
// the state and the record log.
func Open(ctx context.Context, o Options) (*Agent, error) {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	a := &Agent{dir: filepath.Join(o.Home, "agent"), operator: policy.DefaultOperator(),
		log: slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	file := o.OperatorFile
	if file == "" {
		if _, err := os.Stat(filepath.Join(a.dir, "operator.yml")); err == nil {
			file = filepath.Join(a.dir, "operator.yml")
		}
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if a.operator, err = policy.ParseOperator(data); err != nil {
			return nil, fmt.Errorf("operator configuration %s: %w", file, err)
		}
	}
	if cfg, err := model.FromEnv("AGENT_ZERO", o.Getenv); err == nil {
		a.model = model.New(cfg, nil)
		a.secrets = append(a.secrets, cfg.APIKey)
	} else if o.Getenv("AGENT_ZERO_MODEL_BASE_URL") != "" {
		return nil, err // configured, but wrongly
	}
	a.hooks = webhook.Secrets{HMAC: o.Getenv(EnvWebhookSecret), GitLab: o.Getenv(EnvGitLabToken)}
	a.token = o.Getenv(EnvGitHubToken)
	a.secrets = append(a.secrets, a.hooks.HMAC, a.hooks.GitLab, a.token)
	var err error
	if o.DatabaseURL != "" {
		if a.pool, err = database.OpenPool(ctx, o.DatabaseURL); err != nil {
			return nil, err
		}
		if a.state, a.records, err = openShared(ctx, a.pool, o.DatabaseURL, true); err != nil {
			a.pool.Close()
			return nil, err
		}
		return a, nil
	}
	if a.state, err = state.Open(ctx, a.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		a.Close()
		return nil, err
	}
	if a.records, err = record.Open(a.RecordsFile()); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// setupLock is the PostgreSQL advisory lock a worker holds while it makes
// or migrates the tables (the state's, the records', River's), so that
// workers starting at once on a new database do not race to make them
// (PostgreSQL refuses the second CREATE TABLE of a table being made).
const setupLock = 0x7a65726f61676e74 // "zeroagnt"

// openShared opens the state and the records' chain in the PostgreSQL
// database dsn names, and migrates River's tables if queue, each under
// setupLock, taken on a connection of pool.
func openShared(ctx context.Context, pool *database.Pool, dsn string, queue bool) (st *state.State, recs *record.Log, err error) {
	err = database.WithSessionLock(ctx, pool, setupLock, func() error {
		if st, err = state.OpenPostgres(ctx, dsn); err != nil {
			return err
		}
		recs, err = record.OpenTable(ctx, st.DB)
		if err == nil && queue {
			err = migrateQueue(ctx, riverpgxv5.New(pool))
		}
		if err != nil {
			st.Close()
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return st, recs, nil
}

// SharedRecords names the task records' chain in a PostgreSQL database,
// for a person: never the database's URL, which may hold a password.
const SharedRecords = "the shared chain in PostgreSQL (audit_records)"

// ReadRecords returns the task records, verified: the shared chain in the
// PostgreSQL database databaseURL names, else the log under home; where
// names which, for a person.
func ReadRecords(ctx context.Context, home, databaseURL string) (where string, recs []audit.Record, err error) {
	if databaseURL == "" {
		recs, err = record.Read(RecordsPath(home))
		return RecordsPath(home), recs, err
	}
	err = withSharedRecords(ctx, databaseURL, func(db *sql.DB) (err error) {
		recs, err = record.ReadTable(ctx, db)
		return err
	})
	return SharedRecords, recs, err
}

// VerifyRecords verifies the task records' chain, as ReadRecords finds
// it, and returns how many records it holds.
func VerifyRecords(ctx context.Context, home, databaseURL string) (where string, n int, err error) {
	if databaseURL == "" {
		n, err = record.Verify(RecordsPath(home))
		return RecordsPath(home), n, err
	}
	err = withSharedRecords(ctx, databaseURL, func(db *sql.DB) (err error) {
		n, err = record.VerifyTable(ctx, db)
		return err
	})
	return SharedRecords, n, err
}

// withSharedRecords opens the state in the PostgreSQL database, with the
// records' table (empty if no worker wrote one yet), for f.
func withSharedRecords(ctx context.Context, databaseURL string, f func(*sql.DB) error) error {
	pool, err := database.OpenPool(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	st, _, err := openShared(ctx, pool, databaseURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st.DB)
}

// Close closes the state, the queue's connections and the record log.
func (a *Agent) Close() error {
	var errs []error
	if a.records != nil {
		errs = append(errs, a.records.Close())
	}
	if a.pool != nil {
		a.pool.Close()
	}
	if a.state != nil {
		errs = append(errs, a.state.Close())
	}
	return errors.Join(errs...)
}

// RecordsFile is the task record log's path, without Options.DatabaseURL.
func (a *Agent) RecordsFile() string { return filepath.Join(a.dir, "records.log") }

// RecordsPath is the task record log's path under home.
func RecordsPath(home string) string { return filepath.Join(home, "agent", "records.log") }

// RunOptions are one on-demand run's.
type RunOptions struct {
	RepoDir   string
	Name      string // owner/name for the report and record; "" means the operator's name for the path, else the directory's name
	Event     *webhook.Event
	Requested policy.Mode
}

// WorkOf is the kind of work an event (or none: on demand) asks for.
func WorkOf(e *webhook.Event) policy.Work {
	if e == nil {
		return policy.WorkProactive
	}
	switch e.Kind {
	case webhook.KindPullRequest:
		return policy.WorkPullRequest
	case webhook.KindPush:
		return policy.WorkPush
	case webhook.KindIssue, webhook.KindIssueComment:
		return policy.WorkIssue
	}
	return policy.WorkProactive
}

// Run runs one task on a checkout.
func (a *Agent) Run(ctx context.Context, o RunOptions) (run.Report, error) {
	name, remote := o.Name, "origin"
	abs, _ := filepath.Abs(o.RepoDir)
	for _, r := range a.operator.Repositories {
		if filepath.Clean(r.Path) == abs {
			remote = r.Remote
			if name == "" {
				name = r.Name
			}
		}
	}
	if name == "" {
		name = filepath.Base(abs)
	}
	return run.Run(ctx, a.runOptions(o.RepoDir, name, remote, o.Event, o.Requested, "--mode"))
}

// runOptions are a task's options; requestedBy says what asked for the
// requested mode, for the report.
func (a *Agent) runOptions(dir, name, remote string, e *webhook.Event, requested policy.Mode, requestedBy string) run.Options {
	return run.Options{
		RepoDir: dir, RepoName: name, Remote: remote, Event: e, Requested: requested, RequestedBy: requestedBy, Work: WorkOf(e),
		Operator: a.operator, Model: a.model, Secrets: a.secrets, PushToken: a.token,
		Records: a.records, State: a.state, Log: a.log,
	}
}

// Held returns a held change, to show a person before they approve it.
func (a *Agent) Held(ctx context.Context, id string) (state.Held, error) { return a.state.Get(ctx, id) }

// Approve applies a held change a person approved, through the same chain
// as a run, with the operator's configuration as it is now.
func (a *Agent) Approve(ctx context.Context, id string) (run.Report, error) {
	return run.Approve(ctx, a.runOptions("", "", "", nil, policy.Observe, ""), id)
}

// taskArgs is a queued webhook event.
type taskArgs struct {
	Event webhook.Event `json:"event"`
}

func (taskArgs) Kind() string { return "agent_zero_task" }

// taskWorker runs queued events.
type taskWorker struct {
	river.WorkerDefaults[taskArgs]
	a *Agent
}

func (w *taskWorker) Work(ctx context.Context, job *river.Job[taskArgs]) error {
	e := job.Args.Event
	repo, ok := w.a.operator.Repository(e.Repo)
	if !ok {
		w.a.log.Info("ignored an event for a repository that is not enabled", "forge", e.Forge, "kind", e.Kind)
		return nil
	}
	o := w.a.runOptions(repo.Path, repo.Name, repo.Remote, &e, w.a.operator.EventMode(string(e.Kind)), "eventModes."+string(e.Kind))
	o.TaskID = JobTaskID(job.ID, job.CreatedAt)
	rep, err := run.Run(ctx, o)
	if err != nil {
		return err
	}
	w.a.log.Info("task done", "task", rep.TaskID, "repository", rep.Repo, "outcome", rep.Outcome)
	return nil
}

// JobTaskID is the task id of the queued job id, made at created: every
// attempt of one job is the same task, so a retry (after its worker was
// killed mid-task, say) pushes to the same branch as the attempt before,
// and never to a second one: the push never forces, so a retry finds the
// branch there and records a failure (see run.Options.TaskID).
func JobTaskID(id int64, created time.Time) string {
	sum := sha256.Sum256([]byte("agent-zero job " + strconv.FormatInt(id, 10)))
	return created.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(sum[:4])
}

// migrateQueue migrates River's tables on driver's database; on
// PostgreSQL, openShared did it under setupLock, and this finds nothing to
// do.
func migrateQueue[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	return nil
}

// A queue is River's client, whichever database it is on.
type queue struct {
	insert func(context.Context, taskArgs) error
	stop   func(context.Context) error
}

// startQueue migrates River's tables on driver's database and starts its
// client with the task worker: two workers, three attempts, o's task
// timeout and rescue.
func startQueue[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], workers *river.Workers, o ServeOptions) (queue, error) {
	if err := migrateQueue(ctx, driver); err != nil {
		return queue{}, err
	}
	client, err := river.NewClient(driver, &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:              workers,
		MaxAttempts:          3,
		JobTimeout:           o.TaskTimeout,
		RescueStuckJobsAfter: o.RescueAfter,
		Logger:               slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return queue{}, err
	}
	if err := client.Start(ctx); err != nil {
		return queue{}, err
	}
	return queue{
		insert: func(ctx context.Context, args taskArgs) error { _, err := client.Insert(ctx, args, nil); return err },
		stop:   client.Stop,
	}, nil
}

// ServeOptions configure Serve.
type ServeOptions struct {
	Addr        string // where to listen; a non-loopback address needs AllowRemote
	AllowRemote bool
	// TaskTimeout bounds one task; 0 means TaskTimeout. A task cut by it is
	// recorded as interrupted.
	TaskTimeout time.Duration
	// RescueAfter is how long a task may have been running before River
	// takes it for stuck (its worker killed) and retries it, on whichever
	// worker is free; 0 means TaskTimeout + RescueMargin. It must exceed
	// the task timeout, so that a task still running is never taken twice.
	// The workers' leader rescues, with its own setting, every 30 seconds.
	RescueAfter time.Duration
	Ready       func(url string) // called with the base URL once it listens
}

// Check fills in o's defaults and refuses a rescue that could take a task
// still running; Serve calls it too.
func (o *ServeOptions) Check() error {
	if o.TaskTimeout == 0 {
		o.TaskTimeout = TaskTimeout
	}
	if o.TaskTimeout < MinTaskTimeout {
		return fmt.Errorf("the task timeout %v is shorter than %v", o.TaskTimeout, MinTaskTimeout)
	}
	if o.RescueAfter == 0 {
		o.RescueAfter = o.TaskTimeout + RescueMargin
	}
	if o.RescueAfter <= o.TaskTimeout {
		return fmt.Errorf("the rescue after %v does not exceed the task timeout %v: a task still running would be run twice", o.RescueAfter, o.TaskTimeout)
	}
	return nil
}

// Serve receives webhooks until ctx is done, and works the queued events
// with two workers.
func (a *Agent) Serve(ctx context.Context, o ServeOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	l, err := localhttp.CheckAddr(o.Addr, o.AllowRemote)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{a: a})
	var q queue
	if a.pool != nil {
		q, err = startQueue(ctx, riverpgxv5.New(a.pool), workers, o)
	} else {
		q, err = startQueue(ctx, riversqlite.New(a.state.DB), workers, o)
	}
	if err != nil {
		return err
	}
	defer q.stop(context.WithoutCancel(ctx))
	h := &webhook.Handler{
		Secrets: a.hooks, Ledger: a.state, Now: time.Now, Log: a.log,
		Accept: func(ctx context.Context, e webhook.Event) error {
			return q.insert(ctx, taskArgs{Event: e})
		},
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return err
	}
	if o.Ready != nil {
		o.Ready("http://" + ln.Addr().String())
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: time.Minute}
	return localhttp.Serve(ctx, hs, ln)
}
