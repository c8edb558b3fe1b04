#!/usr/bin/env bash
# threads.sh: issue 15's thread targets, in one run, as medians.
#
#   bench/threads.sh [RUNS]
#
# - BenchmarkLoopStep (internal/workspace/threads): the loop's own cost
#   per step, with a model and a tool that answer at once; "disk" on this
#   machine's disk (two commits a step, each waiting for the disk), "memory"
#   with the database on /dev/shm (the loop's code). Target: under 1 ms.
# - BenchmarkThreadRuns20 (internal/workspace): 20 runs at once through
#   the API, each calling the toolserver's echo once. Target: they hold.
# - BenchmarkThreadOpen10k: a thread of 10,000 events, as JSON and as its
#   page. Target: under 100 ms.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
WORK=${WORK:-$(mktemp -d)}
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); $RUNS runs per figure; $(date -u +%Y-%m-%d)"
go test -run '^$' -bench 'BenchmarkLoopStep' -count "$RUNS" ./internal/workspace/threads | grep -E '^Benchmark' | tee "$WORK/go.txt"
go test -run '^$' -bench 'BenchmarkThread' -count "$RUNS" ./internal/workspace | grep -E '^Benchmark' | tee -a "$WORK/go.txt"
python3 - "$WORK/go.txt" <<'PY'
import re, statistics, sys
ns, extra = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'(Benchmark[\w/]+)-\d+\s+\d+\s+(\d+) ns/op(.*)', line)
    if m:
        ns.setdefault(m[1], []).append(int(m[2]))
        for v, unit in re.findall(r'([\d.]+) (ms/step|runs/s)', m[3]):
            extra.setdefault((m[1], unit), []).append(float(v))
print()
for (name, unit), v in sorted(extra.items()):
    print(f"median {name}: {statistics.median(v):.3f} {unit}")
for name in ("BenchmarkThreadRuns20", "BenchmarkThreadOpen10k/api", "BenchmarkThreadOpen10k/page"):
    if name in ns:
        print(f"median {name}: {statistics.median(ns[name]) / 1e6:.1f} ms/op")
PY
