#!/usr/bin/env bash
# replicas.sh: approvals per second through the workspace on SQLite, and on
# one PostgreSQL (fsync on) through one and two replicas, in one run.
#
#   bench/replicas.sh [RUNS]
#
# BenchmarkApprovals (internal/workspace/replicas_bench_test.go): 8 browser
# sessions at once, each approval a preview and a create with the
# fingerprint and a secret; 300 approvals a run, -count RUNS. Medians, and
# each figure's ratio to SQLite's. Both replicas run on this machine, so two
# replicas show what sharing one database costs, not what a second machine
# adds.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
WORK=${WORK:-$(mktemp -d)}
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); $RUNS runs; $(date -u +%Y-%m-%d)"
go test -run '^$' -bench 'BenchmarkApprovals' -benchtime=300x -count "$RUNS" ./internal/workspace |
  grep -E '^Benchmark' | tee "$WORK/approvals.txt"
python3 - "$WORK/approvals.txt" <<'PY'
import re, statistics, sys
rates = {}
for line in open(sys.argv[1]):
    m = re.match(r'BenchmarkApprovals/(\S+?)-\d+\s+\d+\s+\d+ ns/op\s+([\d.]+) approvals/s', line)
    if m:
        rates.setdefault(m[1], []).append(float(m[2]))
base = statistics.median(rates["sqlite"])
print()
print("| Workspace | approvals/s (median) | vs SQLite |")
print("|---|---|---|")
for name, v in rates.items():
    med = statistics.median(v)
    print(f"| {name} | {med:.1f} | {med / base:.2f}x |")
PY
