// Package repoagent is Agent Zero, `zero agent`: repository automation that
// observes by default. It wires the pieces: the operator's configuration,
// credentials from fixed environment variables only, Agent Zero's state
// and task records under $ZERO_HOME/agent, one run on a checkout (package
// run), approvals of held changes, and the webhook receiver with its
// durable queue (River on SQLite) and workers.
package repoagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

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

// TaskTimeout bounds one queued task: a model review, then up to 20 checks
// (run twice when the change touches its tests) of at most the operator's
// checkTimeout each would not fit in River's default minute. A task cut
// by it is recorded as interrupted.
const TaskTimeout = time.Hour

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
	// (held changes, the delivery ledger) and the work queue instead of
	// Home/agent/agent.db, which several workers on several machines may
	// share. The task records stay in each worker's Home.
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
		if a.state, err = state.OpenPostgres(ctx, o.DatabaseURL); err != nil {
			return nil, err
		}
		if a.pool, err = database.OpenPool(ctx, o.DatabaseURL); err != nil {
			a.state.Close()
			return nil, err
		}
	} else if a.state, err = state.Open(ctx, a.dir); err != nil {
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

// Close closes the state, the queue's connections and the record log.
func (a *Agent) Close() error {
	var errs []error
	if a.records != nil {
		errs = append(errs, a.records.Close())
	}
	if a.pool != nil {
		a.pool.Close()
	}
	return errors.Join(append(errs, a.state.Close())...)
}

// RecordsFile is the task record log's path.
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
	rep, err := run.Run(ctx, w.a.runOptions(repo.Path, repo.Name, repo.Remote, &e, w.a.operator.EventMode(string(e.Kind)), "eventModes."+string(e.Kind)))
	if err != nil {
		return err
	}
	w.a.log.Info("task done", "task", rep.TaskID, "repository", rep.Repo, "outcome", rep.Outcome)
	return nil
}

// A queue is River's client, whichever database it is on.
type queue struct {
	insert func(context.Context, taskArgs) error
	stop   func(context.Context) error
}

// startQueue migrates River's tables on driver's database and starts its
// client with the task worker: two workers, three attempts, TaskTimeout.
func startQueue[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], workers *river.Workers) (queue, error) {
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return queue{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return queue{}, fmt.Errorf("queue migrations: %w", err)
	}
	client, err := river.NewClient(driver, &river.Config{
		Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:     workers,
		MaxAttempts: 3,
		JobTimeout:  TaskTimeout,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
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

// Serve receives webhooks on addr until ctx is done, and works the queued
// events with two workers. A non-loopback addr needs allowRemote.
func (a *Agent) Serve(ctx context.Context, addr string, allowRemote bool, ready func(url string)) error {
	l, err := localhttp.CheckAddr(addr, allowRemote)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{a: a})
	var q queue
	if a.pool != nil {
		q, err = startQueue(ctx, riverpgxv5.New(a.pool), workers)
	} else {
		q, err = startQueue(ctx, riversqlite.New(a.state.DB), workers)
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
	if ready != nil {
		ready("http://" + ln.Addr().String())
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: time.Minute}
	return localhttp.Serve(ctx, hs, ln)
}
