#!/usr/bin/env bash
# shell.sh: what the shell server adds over a bare exec of the same program.
#
#   bench/shell.sh [RUNS]
#
# 1. Go benchmark of the execution boundary: a bare os/exec run of /bin/true,
#    spawn.Run of it, and spawn.Run under bubblewrap.
# 2. execute_command {"program":"/bin/true"} over MCP with mcpbench.mjs (the
#    TypeScript SDK client; MCPBENCH, default ../shared/tools/mcpbench.mjs),
#    and, for the client's own floor, a trivial call to the filesystem
#    server (list_allowed_directories), in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
MCPBENCH=${MCPBENCH:-../shared/tools/mcpbench.mjs}
WORK=${WORK:-$(mktemp -d)}
[ -d node/node_modules/@modelcontextprotocol/sdk ] || npm ci --prefix node --no-audit --no-fund --loglevel=error
go build -o "$WORK/zero" ./cmd/zero
cp "$MCPBENCH" node/.mcpbench.mjs   # it imports the SDK from node/node_modules
trap 'rm -f node/.mcpbench.mjs' EXIT
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); node $(node --version); $(date -u +%Y-%m-%d)"
echo
echo "## spawn (Go benchmark, /bin/true)"
ZERO_REQUIRE_BWRAP=1 go test -run='^$' -bench=BenchmarkSpawn -benchtime=300x -count=3 ./internal/guard/spawn | grep -E '^Benchmark'
echo
echo "## execute_command over MCP (mcpbench.mjs, $RUNS fresh servers, 300 sequential calls each)"
p50() { python3 -c 'import json,sys; m=json.load(sys.stdin)["median"]["phases"][0]; print(m["p50_ms"], m["calls_per_s"])'; }
read -r ep ec < <(node node/.mcpbench.mjs --json --runs "$RUNS" --tool execute_command --args '{"program":"/bin/true"}' --n 300 --warmup 10 --check -- "$WORK/zero" mcp shell "$WORK" | p50)
read -r lp lc < <(node node/.mcpbench.mjs --json --runs "$RUNS" --tool list_allowed_directories --args '{}' --n 300 --warmup 10 --check -- "$WORK/zero" mcp filesystem "$WORK" | p50)
echo "execute_command /bin/true: p50 ${ep} ms (${ec%.*}/s)"
echo "list_allowed_directories (a call that does nothing): p50 ${lp} ms (${lc%.*}/s)"
