#!/usr/bin/env bash
# agent-webhooks.sh: webhook deliveries per second that one and two
# `zero agent serve --database` workers on one PostgreSQL accept, as medians.
#
#   bench/agent-webhooks.sh [RUNS]
#
# BenchmarkAgentWebhooks (cmd/zero/agent_pg_test.go), -count RUNS (default
# 5), 2000 deliveries a figure, 16 in flight from a Go client on the same
# machine, spread over the workers. Each delivery is verified (HMAC), taken
# once in the shared ledger and queued in River; its job is for a
# repository no worker enables, so it is worked and ignored: the figure is
# the receiving, not the tasks. Each figure has its own throwaway cluster
# (databasetest.Postgres: a Unix socket, no fsync), so it needs Debian's
# postgresql package.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
WORK=${WORK:-$(mktemp -d)}
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); $RUNS runs per figure; $(date -u +%Y-%m-%d)"
ZERO_REQUIRE_POSTGRES=1 go test -run '^$' -bench 'BenchmarkAgentWebhooks' -benchtime=2000x -count "$RUNS" ./cmd/zero |
  grep -E '^Benchmark' | tee "$WORK/go.txt"
python3 - "$WORK/go.txt" <<'PY'
import re, statistics, sys
rate = {}
for line in open(sys.argv[1]):
    m = re.match(r'BenchmarkAgentWebhooks/(workers=\d+)-\d+\s+\d+\s+\d+ ns/op\s+([\d.]+) deliveries/s', line)
    if m:
        rate.setdefault(m[1], []).append(float(m[2]))
print()
for k in sorted(rate):
    v = rate[k]
    print(f"{k}: median {statistics.median(v):.0f} deliveries/s ({min(v):.0f}-{max(v):.0f}, {len(v)} runs)")
if 'workers=1' in rate and 'workers=2' in rate:
    print(f"two workers / one: {statistics.median(rate['workers=2']) / statistics.median(rate['workers=1']):.2f}x")
PY
