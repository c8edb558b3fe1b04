package database

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listen LISTENs on channel, on a connection of its own to the database
// pool connects to, and calls got with each notification's payload, until
// ctx ends. Each time it starts listening (the first time, and again after
// the connection dropped and was made again, when what was sent meanwhile
// is lost) it calls listening: the caller reads again from the database
// what it may have missed. A connection that fails, or drops, is made
// again after retry. got and listening run on Listen's goroutine, one at a
// time; they must not block.
//
// LISTEN holds a session: behind a pooler that hands each transaction a
// server connection of its own (PgBouncer's transaction pooling) it never
// hears a NOTIFY, and the caller's own polling is all that is left.
func Listen(ctx context.Context, pool *Pool, channel string, retry time.Duration, listening func(), got func(payload string)) {
	cfg := pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = ListenerName
	for ctx.Err() == nil {
		listen(ctx, cfg, channel, listening, got)
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}

// ListenerName is the application_name of Listen's connections, as
// pg_stat_activity shows them.
const ListenerName = "zero-listen"

// listen holds one connection until it fails or ctx ends.
func listen(ctx context.Context, cfg *pgx.ConnConfig, channel string, listening func(), got func(payload string)) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		got(n.Payload)
	}
}
