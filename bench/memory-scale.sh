#!/usr/bin/env bash
# memory-scale.sh: `zero mcp memory` on one large graph file: the time to
# open it, the first search after opening, later searches, and peak RSS.
#
#   bench/memory-scale.sh [ENTITIES] [RUNS]
#
# The file (ENTITIES entities, default 1,000,000, each with two
# observations, and ENTITIES/5 relations, in the reference's format; about
# 135 MiB at a million) is made once in WORK. Each figure is the median of
# RUNS fresh server processes (default 3), timed by rawbench (RAWBENCH,
# default ../shared/tools/rawbench beside the checkout):
#   - open: spawn to the answer to initialize (the store is opened, and its
#     search index built, before the server answers);
#   - first search: the first search_nodes call, for one entity's name;
#   - later searches: the p50 of 200 more of the same call;
#   - peak RSS: the server's VmHWM over the later searches, and its ratio
#     to the file's size.
# No reference figure: the reference reads the whole file on every call.
#
# Environment: ZERO (a zero binary to run instead of building ./cmd/zero),
# WORK (default a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
RUNS=${2:-3}
RAWBENCH_SRC=${RAWBENCH:-../shared/tools/rawbench}
WORK=${WORK:-$(mktemp -d)}
if [ -z "${ZERO:-}" ]; then
  go build -o "$WORK/zero" ./cmd/zero
  ZERO=$WORK/zero
fi
(cd "$RAWBENCH_SRC" && go build -o "$WORK/rawbench" .)
FILE=$WORK/memory-$N.jsonl
if [ ! -f "$FILE" ]; then
  python3 bench/memory-graph.py "$N" "$FILE"
fi
SIZE=$(stat -c %s "$FILE")
QUERY="{\"query\":\"entity-$(printf %07d $((N / 2)))\"}"
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); $N entities, $((N / 5)) relations, $((SIZE >> 20)) MiB; $RUNS runs; $(date -u +%Y-%m-%d)"
SERVER=("$ZERO" mcp memory --memory-file "$FILE")
"$WORK/rawbench" -json -check -warmup 0 -n 1 -runs "$RUNS" -tool search_nodes -args "$QUERY" -- "${SERVER[@]}" > "$WORK/first.json"
# Peak RSS: the server's VmHWM, read every 20 ms while it answers the later
# searches (rawbench kills it at the end, so nothing can ask it afterwards).
: > "$WORK/rss"
(while :; do
  for pid in $(pgrep -f -- "--memory-file $FILE"); do
    awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null >> "$WORK/rss" || true
  done
  sleep 0.02
done) &
POLL=$!
"$WORK/rawbench" -json -check -warmup 1 -n 200 -runs 1 -tool search_nodes -args "$QUERY" -- "${SERVER[@]}" > "$WORK/later.json"
kill $POLL
python3 - "$WORK/first.json" "$WORK/later.json" "$WORK/rss" "$SIZE" <<'PY'
import json, statistics, sys
first, later = (json.load(open(p)) for p in sys.argv[1:3])
rss = max(int(l) for l in open(sys.argv[3]) if l.strip().isdigit()) * 1024
size = int(sys.argv[4])
print("| open, to initialize | first search | later searches, p50 | peak RSS |")
print("|---|---|---|---|")
print(f"| {first['init_ms']:.0f} ms | {first['p50_ms']:.1f} ms | {later['p50_ms']:.2f} ms | "
      f"{rss / 1e6:,.0f} MB, {rss / size:.2f}x the file |")
PY
