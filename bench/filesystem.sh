#!/usr/bin/env bash
# filesystem.sh: compares `zero mcp filesystem` with the reference server
# (@modelcontextprotocol/server-filesystem, installed by `npm ci --prefix node`)
# in one run, with rawbench (a Go client with almost no cost of its own).
#
#   bench/filesystem.sh [RUNS]
#
# Environment: RAWBENCH_DIR (default ../shared/tools/rawbench beside the
# checkout), WORK (default a new temporary directory).
# The tree is 5,000 files in 100 directories. Each figure is the median of
# RUNS fresh server processes (default 5); zero and the reference alternate.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
RAWBENCH_DIR=${RAWBENCH_DIR:-../shared/tools/rawbench}
WORK=${WORK:-$(mktemp -d)}
REF=node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
[ -f "$REF" ] || npm ci --prefix node --no-audit --no-fund >/dev/null

go build -o "$WORK/zero" ./cmd/zero
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
  printf 'hello from a small file\n' > "$TREE/small.txt"
fi
echo "tree: $(find "$TREE" -type f | wc -l) files in $(find "$TREE" -mindepth 1 -type d | wc -l) directories"
echo "machine: $(nproc) cores; $(go version); node $(node --version); runs: $RUNS"
echo

# median VALUE-NAME SERVER TOOL ARGS N: one rawbench call, prints "init cps p50".
bench() {
  local n=$1 tool=$2 args=$3; shift 3
  "$WORK/rawbench" -json -runs "$RUNS" -n "$n" -warmup 5 -check -tool "$tool" -args "$args" -- "$@" |
    python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["init_ms"], m["calls_per_s"], m["p50_ms"])'
}

row() { # name tool args n_zero n_ref
  local name=$1 tool=$2 args=$3 nz=$4 nr=$5
  read -r zi zc zp < <(bench "$nz" "$tool" "$args" "$WORK/zero" mcp filesystem "$TREE")
  read -r ri rc rp < <(bench "$nr" "$tool" "$args" node "$REF" "$TREE")
  python3 - "$name" "$zc" "$rc" "$zp" "$rp" "$zi" "$ri" <<'PY'
import sys
name, zc, rc, zp, rp, zi, ri = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {name} | {zc:,.0f}/s (p50 {zp:.3f} ms) | {rc:,.0f}/s (p50 {rp:.3f} ms) | {zc/rc:.1f}x | init {zi:.1f} ms vs {ri:.1f} ms ({zi/ri:.3f}) |")
PY
}

echo "| call | zero | reference | calls/s ratio | spawn to initialized (zero vs reference, ratio) |"
echo "|---|---|---|---|---|"
row "read_text_file (small file)" read_text_file "{\"path\":\"$TREE/small.txt\"}" 5000 2000
row "directory_tree (5,100 entries)" directory_tree "{\"path\":\"$TREE\"}" 200 20
row "search_files **/*7.txt" search_files "{\"path\":\"$TREE\",\"pattern\":\"**/*7.txt\"}" 200 3
row "list_allowed_directories" list_allowed_directories "{}" 5000 2000
