#!/usr/bin/env bash
# memory-large.sh: compares `zero mcp memory` with the reference server
# (@modelcontextprotocol/server-memory, pinned in node/package-lock.json) on
# a graph that is already large, in one run.
#
#   bench/memory-large.sh [ENTITIES] [RUNS]
#
# Before every server starts, the graph file is put back to ENTITIES
# entities (default 50,000, each with two observations, and ENTITIES/5
# relations, in the reference's format). mcpbench.mjs (the TypeScript SDK
# client; MCPBENCH, default ../shared/tools/mcpbench.mjs beside the checkout)
# then makes sequential calls on it: create_entities of 10 new entities,
# add_observations, search_nodes for one name, open_nodes of three. Each
# figure is the median of RUNS fresh server processes (default 3). The
# client's own cost is in zero's figures, so the ratios are a floor.
#
# Environment: ZERO (a zero binary to run instead of building ./cmd/zero),
# WORK (default a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50000}
RUNS=${2:-3}
. bench/memory-setup.sh
BASE=$WORK/base-$N.jsonl
FILE=$WORK/memory.jsonl
python3 bench/memory-graph.py "$N" "$BASE"
python3 - "$N" "$WORK/plan.json" <<'PY'
import json, sys
n, plan = int(sys.argv[1]), sys.argv[2]
name = f"'entity-' + String((i * 7919 + d) % {n}).padStart(7, '0')"
json.dump([
    {"name": "create_entities, 10 new", "tool": "create_entities", "n": 50,
     "argsJs": "i => ({entities: Array.from({length: 10}, (_, j) => ({name: 'new-' + (i * 10 + j), entityType: 'new', observations: ['made in call ' + i]}))})"},
    {"name": "add_observations, 1", "tool": "add_observations", "n": 100,
     "argsJs": "i => { const d = 0; return {observations: [{entityName: " + name + ", contents: ['note ' + i]}]}; }"},
    {"name": "search_nodes, one hit", "tool": "search_nodes", "n": 100,
     "argsJs": "i => { const d = 1; return {query: (" + name + ").toUpperCase()}; }"},
    {"name": "open_nodes, 3 names", "tool": "open_nodes", "n": 100,
     "argsJs": "i => ({names: [2, 3, 4].map(d => " + name + ")})"},
], open(plan, "w"))
PY
PRE="cp '$BASE' '$FILE'; rm -f '$FILE.zero-log' '$FILE.lock'"
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); node $(node --version); $N entities, $((N / 5)) relations, $(($(stat -c %s "$BASE") >> 20)) MiB; $RUNS runs per figure; $(date -u +%Y-%m-%d)"
echo
node "$CLIENT" --json --runs "$RUNS" --plan "$WORK/plan.json" --pre "$PRE" --check \
  -- "$ZERO" mcp memory --memory-file "$FILE" > "$WORK/zero.json"
node "$CLIENT" --json --runs "$RUNS" --plan "$WORK/plan.json" --pre "$PRE" --check \
  --env "MEMORY_FILE_PATH=$FILE" -- node "$REF" > "$WORK/reference.json"
python3 bench/memory-compare.py "$WORK/zero.json" "$WORK/reference.json"
