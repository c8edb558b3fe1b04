package workspace

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/zero-dev/zero/internal/database"
	"github.com/zero-dev/zero/internal/workspace/threads"
)

// On PostgreSQL a thread's run is a River job: the replica a person
// starts it on saves it and its prompt and queues it, any replica's
// worker runs its loop, and when that replica dies another takes the run
// over from its stored events (threads.Runner.Resume). A replica that is
// gone is seen by its advisory lock (threads.Sweep), not by River's
// rescue.

// threadRunArgs is a queued run.
type threadRunArgs struct {
	threads.Job
}

func (threadRunArgs) Kind() string { return "zero_thread_run" }

// threadRunWorker runs queued runs.
type threadRunWorker struct {
	river.WorkerDefaults[threadRunArgs]
	w *Workspace
}

// Timeout is none: the run's wall time bounds it.
func (*threadRunWorker) Timeout(*river.Job[threadRunArgs]) time.Duration { return -1 }

func (x *threadRunWorker) Work(ctx context.Context, job *river.Job[threadRunArgs]) error {
	return x.w.runner.Resume(ctx, job.Args.Job, func(r threads.Run) (threads.Start, error) {
		return x.w.threadStart(ctx, r.Thread)
	})
}

// Bounds of the threads' queue on one replica.
const (
	threadWorkers = 64 // runs at once: a run holds its worker while it waits for an approval
	// threadRescue is River's rescue of a job whose worker died: past any
	// run's wall time (a job it rescues finds its run taken over already,
	// or ended, and does nothing; see threads.Job).
	threadRescue = threads.DefaultWall + 10*time.Minute
)

// queueLock keeps River's migrations one at a time when replicas start
// together (PostgreSQL refuses the second CREATE of a table being made).
const queueLock = 0x7a65727172697672 // "zerqrivr"

// startQueue migrates River's tables, starts its client with the run
// worker, and makes the runner's runs its jobs.
func (w *Workspace) startQueue(ctx context.Context, pool *database.Pool) error {
	driver := riverpgxv5.New(pool)
	if err := migrateQueue(ctx, pool); err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &threadRunWorker{w: w})
	client, err := river.NewClient(driver, &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: threadWorkers}},
		Workers:              workers,
		MaxAttempts:          3,
		RescueStuckJobsAfter: threadRescue,
		Logger:               slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	w.queue = client
	w.runner.SetQueue(func(ctx context.Context, j threads.Job) error {
		_, err := client.Insert(ctx, threadRunArgs{j}, nil)
		return err
	})
	return nil
}

// migrateQueue migrates River's tables under queueLock.
func migrateQueue(ctx context.Context, pool *database.Pool) error {
	return database.WithSessionLock(ctx, pool, queueLock, func() error {
		migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
		if err != nil {
			return err
		}
		if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("the threads' queue migrations: %w", err)
		}
		return nil
	})
}
