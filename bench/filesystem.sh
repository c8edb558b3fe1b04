#!/usr/bin/env bash
# filesystem.sh: compares `zero mcp filesystem` with the reference server
# (@modelcontextprotocol/server-filesystem, pinned in node/package-lock.json)
# in one run, with rawbench, a Go client that writes requests and reads
# replies itself.
#
#   bench/filesystem.sh [RUNS]
#
# Environment: RAWBENCH_DIR and FLOOR_DIR (default ../shared/tools/rawbench
# and ../shared/tools/floor beside the checkout), WORK (default a new
# temporary directory).
# The tree is 5,000 files in 100 directories, plus small.txt, which holds the
# 12 bytes the floor answers with. Each figure is the median of RUNS fresh
# server processes (default 5); for each call, zero and the reference run one
# after the other. The last table times read_text_file against the floor (a
# bare JSON-RPC loop that answers at once) and against bench/sdkfloor (the
# official SDK on Zero's transport, with a tool that does nothing): no tool
# served through the SDK can pass the second.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
RAWBENCH_DIR=${RAWBENCH_DIR:-../shared/tools/rawbench}
FLOOR_DIR=${FLOOR_DIR:-../shared/tools/floor}
WORK=${WORK:-$(mktemp -d)}
REF=node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
[ -f "$REF" ] || npm ci --prefix node --no-audit --no-fund --loglevel=error

go build -o "$WORK/zero" ./cmd/zero
go build -o "$WORK/cannedreply" ./bench/cannedreply
go build -o "$WORK/sdkfloor" ./bench/sdkfloor
(cd "$FLOOR_DIR" && go build -o "$WORK/floor" .)
(cd "$RAWBENCH_DIR" && go build -o "$WORK/rawbench" .)

TREE="$WORK/tree"
if [ ! -d "$TREE" ]; then
  mkdir -p "$TREE"
  for d in $(seq -w 0 99); do
    mkdir -p "$TREE/dir$d"
    for f in $(seq -w 0 49); do
      printf 'file %s in dir %s\n' "$f" "$d" > "$TREE/dir$d/file$f.txt"
    done
  done
  printf 'hello world\n' > "$TREE/small.txt"
fi
echo "tree: $(find "$TREE" -type f | wc -l) files in $(find "$TREE" -mindepth 1 -type d | wc -l) directories"
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); node $(node --version); $RUNS runs per figure; $(date -u +%Y-%m-%d)"
echo

# bench N TOOL ARGS SERVER...: prints "init_ms calls_per_s p50_ms".
bench() {
  local n=$1 tool=$2 args=$3; shift 3
  "$WORK/rawbench" -json -runs "$RUNS" -n "$n" -warmup 5 -check -tool "$tool" -args "$args" -- "$@" |
    python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["init_ms"], m["calls_per_s"], m["p50_ms"])'
}

row() { # NAME TOOL ARGS N_ZERO N_REF
  local name=$1 tool=$2 args=$3 nz=$4 nr=$5
  read -r zi zc zp < <(bench "$nz" "$tool" "$args" "$WORK/zero" mcp filesystem "$TREE")
  read -r ri rc rp < <(bench "$nr" "$tool" "$args" node "$REF" "$TREE")
  python3 - "$name" "$zc" "$rc" "$zp" "$rp" "$zi" "$ri" <<'PY'
import sys
name, zc, rc, zp, rp, zi, ri = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {name} | {zc:,.0f}/s, p50 {zp:.3f} ms | {rc:,.0f}/s, p50 {rp:.3f} ms | **{zc/rc:.1f}x** | {zi:.1f} ms vs {ri:.1f} ms (**{zi/ri:.3f}**) |")
PY
}

echo "| call | zero | reference | calls/s, zero / reference | spawn to initialized, zero vs reference (ratio) |"
echo "|---|---|---|---|---|"
row "read_text_file, small file" read_text_file "{\"path\":\"$TREE/small.txt\"}" 5000 2000
row "directory_tree, 5,100 entries" directory_tree "{\"path\":\"$TREE\"}" 200 30
row "search_files **/*7.txt" search_files "{\"path\":\"$TREE\",\"pattern\":\"**/*7.txt\"}" 300 5
echo

# The client's own cost for a reply as large as directory_tree's: a server
# that answers at once with zero's reply, read once from zero itself.
printf '%s\n' \
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"directory_tree\",\"arguments\":{\"path\":\"$TREE\"}}}" |
  (cat; sleep 2) | "$WORK/zero" mcp filesystem "$TREE" | tail -n 1 |
  python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["result"], separators=(",",":")))' > "$WORK/tree-result.json"
read -r _ cc cp < <(bench 200 directory_tree '{}' "$WORK/cannedreply" "$WORK/tree-result.json")
echo "rawbench alone, with a canned directory_tree reply of $(wc -c < "$WORK/tree-result.json") bytes: ${cc%.*}/s, p50 ${cp} ms"
echo

# read_text_file against the floor and the SDK's own cost, in turns.
read -r _ zc zp < <(bench 5000 read_text_file "{\"path\":\"$TREE/small.txt\"}" "$WORK/zero" mcp filesystem "$TREE")
read -r _ sc sp < <(bench 5000 read_text_file '{}' "$WORK/sdkfloor")
read -r _ fc fp < <(bench 5000 read_text_file '{}' "$WORK/floor")
python3 - "$zc" "$zp" "$sc" "$sp" "$fc" "$fp" <<'PY'
import sys
zc, zp, sc, sp, fc, fp = map(float, sys.argv[1:])
print("| read_text_file, 12 bytes | calls/s | p50 | of the floor |")
print("|---|---|---|---|")
print(f"| zero | {zc:,.0f}/s | {zp:.3f} ms | **{zc/fc:.2f}** |")
print(f"| the SDK, a tool that does nothing | {sc:,.0f}/s | {sp:.3f} ms | **{sc/fc:.2f}** |")
print(f"| the floor | {fc:,.0f}/s | {fp:.3f} ms | 1 |")
PY
