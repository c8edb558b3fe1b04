package workspace

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zero-dev/zero/internal/database/databasetest"
)

// BenchmarkApprovals measures approvals per second as people make them:
// preview a new server and create it approved with its fingerprint and a
// secret, from 8 browser sessions at once. On SQLite (one workspace), and on
// one PostgreSQL through one and through two replicas (workspaces in this
// process, sessions spread over them), with fsync on as SQLite's file has
// it: every approval is a transaction and an audit record, which on
// PostgreSQL are the shared table's.
func BenchmarkApprovals(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchApprovals(b, []*testServer{start(b, Options{})}) })
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("postgres-%d-replicas", n), func(b *testing.B) {
			dsn := databasetest.PostgresDurable(b)
			key := filepath.Join(b.TempDir(), "secrets.key")
			k := make([]byte, 32)
			rand.Read(k)
			os.WriteFile(key, k, 0o600)
			var rs []*testServer
			for range n {
				rs = append(rs, start(b, Options{DatabaseURL: dsn, SecretsKeyFile: key}))
			}
			benchApprovals(b, rs)
		})
	}
}

func benchApprovals(b *testing.B, replicas []*testServer) {
	const sessions = 8
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	begin := time.Now()
	for s := range sessions {
		ts := replicas[s%len(replicas)]
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				ts.approveNew(i)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "approvals/s")
}
