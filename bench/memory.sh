#!/usr/bin/env bash
# memory.sh: compares `zero mcp memory` with the reference server
# (@modelcontextprotocol/server-memory, pinned in node/package-lock.json) in
# one run, then runs the graph store's Go benchmarks.
#
#   bench/memory.sh [RUNS]
#
# 1. mcpbench.mjs (the TypeScript SDK client; MCPBENCH, default
#    ../shared/tools/mcpbench.mjs beside the checkout) runs the plan in
#    bench/memory-plan.json against each server, on a fresh file every run:
#    10,000 entities created in 100 calls of 100, then search_nodes,
#    open_nodes and add_observations on that graph, sequential calls. Each
#    figure is the median of RUNS fresh server processes (default 3).
# 2. Go benchmarks of internal/graphstore: opening a graph of 1,000,000
#    entities (and 500,000 relations), and the latency of one synced write
#    in a graph of 10,000 and of 1,000,000 entities.
#
# Environment: ZERO (a zero binary to run instead of building ./cmd/zero),
# WORK (default a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
. bench/memory-setup.sh
FILE=$WORK/memory.jsonl
PRE="rm -f '$FILE' '$FILE.zero-log' '$FILE.lock'"
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); node $(node --version); $RUNS runs per figure; $(date -u +%Y-%m-%d)"
echo

node "$CLIENT" --json --runs "$RUNS" --plan bench/memory-plan.json --pre "$PRE" --check \
  -- "$ZERO" mcp memory --memory-file "$FILE" > "$WORK/zero.json"
node "$CLIENT" --json --runs "$RUNS" --plan bench/memory-plan.json --pre "$PRE" --check \
  --env "MEMORY_FILE_PATH=$FILE" -- node "$REF" > "$WORK/reference.json"
python3 bench/memory-compare.py "$WORK/zero.json" "$WORK/reference.json"
echo

# The client's own cost for create_entities' reply: a stand-in server that
# answers at once with zero's replies (to initialize, tools/list and the
# first create_entities call), timed by the same client.
node -e '
const plan = require(process.argv[1]);
const entities = eval(plan[0].argsJs)(0).entities;
for (const m of [
  {jsonrpc: "2.0", id: 0, method: "initialize", params: {protocolVersion: "2025-06-18", capabilities: {}, clientInfo: {name: "bench", version: "0"}}},
  {jsonrpc: "2.0", method: "notifications/initialized"},
  {jsonrpc: "2.0", id: 1, method: "tools/list"},
  {jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "create_entities", arguments: {entities}}},
]) console.log(JSON.stringify(m));' "$PWD/bench/memory-plan.json" |
  (cat; sleep 2) | (eval "$PRE"; "$ZERO" mcp memory --memory-file "$FILE") > "$WORK/replies.jsonl"
cat > "$WORK/canned.mjs" <<'JS'
import fs from "node:fs";
import readline from "node:readline";
const replies = Object.fromEntries(fs.readFileSync(process.argv[2], "utf8").trim().split("\n").map((l) => { const m = JSON.parse(l); return [m.id, m.result]; }));
const kind = { initialize: 0, "tools/list": 1 };
for await (const line of readline.createInterface({ input: process.stdin })) {
  const m = JSON.parse(line);
  if (m.id === undefined) continue;
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: replies[kind[m.method] ?? 2] }) + "\n");
}
JS
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))[:1], open(sys.argv[2], "w"))' bench/memory-plan.json "$WORK/plan-create.json"
node "$CLIENT" --json --runs "$RUNS" --plan "$WORK/plan-create.json" --check \
  -- node "$WORK/canned.mjs" "$WORK/replies.jsonl" > "$WORK/canned.json"
python3 - "$WORK/canned.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["median"]["phases"][0]
print(f"client alone, against a stand-in that answers at once with zero's create_entities reply "
      f"({p['avg_resp_bytes']:,.0f} bytes): {p['calls_per_s']:,.0f}/s, p50 {p['p50_ms']:.2f} ms")
PY
echo

echo "## graph store (Go benchmarks)"
go test -run '^$' -bench 'BenchmarkOpen/1M' -benchtime 3x -benchmem ./internal/graphstore | grep -E '^Benchmark'
go test -run '^$' -bench 'BenchmarkWrite|BenchmarkAddObservation|BenchmarkSearch' -benchtime 2000x -benchmem ./internal/graphstore | grep -E '^Benchmark'
