#!/usr/bin/env bash
# gateways.sh: zero serve's /mcp against the gateways people put in front of
# a stdio MCP server, in one run, with the same upstream and the same client.
#
#   bench/gateways.sh [ROUNDS] [CALLS]
#
# The upstream is the Node reference filesystem server (node/, npm ci
# --prefix node), one process per gateway; the call is read_text_file of a
# small file. The peers are installed from the npm registry into a
# temporary folder, at the versions issue 28 named: mcp-proxy 6.7.19
# (streamable HTTP), supergateway 4.0.0 (stdio to streamable HTTP,
# --stateful) and mcp-hub 4.2.1 (its /mcp endpoint speaks HTTP+SSE). Zero
# serves the same upstream twice: "fs" with the default bound of calls at
# once, and "fs4" bounded at 4, the fixed cap before it was a setting.
#
# The client is bench/rawhttp: CALLS calls (default 2000) with 8 in flight,
# then with 1 (sequential), on a fresh session each round; the gateways take
# turns within each round, each round starting with the next one, ROUNDS
# rounds (default 5). It prints each
# round's calls/s, then the medians and Zero's ratio to each peer, and each
# gateway's resident memory at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
CALLS=${2:-2000}
WORK=${WORK:-$(mktemp -d)}
FS_JS="$PWD/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -f "$FS_JS" ] || { echo "gateways.sh: run npm ci --prefix node first" >&2; exit 1; }
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); node $(node --version); $ROUNDS rounds of $CALLS calls; $(date -u +%Y-%m-%d)"

mkdir -p "$WORK/data" "$WORK/npm"
echo hello > "$WORK/data/hello.txt"
(cd "$WORK/npm" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error \
  mcp-proxy@6.7.19 supergateway@4.0.0 mcp-hub@4.2.1 >/dev/null)
go build -o "$WORK/zero" ./cmd/zero
go build -o "$WORK/rawhttp" ./bench/rawhttp

PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null || true' EXIT

# zero serve, with the upstream added, approved, enabled and tested twice.
. bench/serve-setup.sh
PIDS+=("$SERVE")
add() { add_server "{\"name\":\"$1\",\"kind\":\"stdio\",\"command\":\"$(command -v node)\",\"args\":[\"$FS_JS\",\"$WORK/data\"]}"; }
add fs >/dev/null
FS4=$(add fs4)
api POST "/api/servers/$FS4/max-calls" '{"max_calls":4}' >/dev/null
api POST /api/tokens '{"name":"bench"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])' >"$WORK/token"

# The peers, each on its own port with its own upstream.
BIN="$WORK/npm/node_modules/.bin"
"$BIN/mcp-proxy" --host 127.0.0.1 --port 18711 -- node "$FS_JS" "$WORK/data" >"$WORK/mcp-proxy.log" 2>&1 &
PIDS+=($!)
"$BIN/supergateway" --stdio "node $FS_JS $WORK/data" --outputTransport streamableHttp --stateful --port 18712 \
  --logLevel none >"$WORK/supergateway.log" 2>&1 &
PIDS+=($!)
printf '{"mcpServers":{"fs":{"command":"node","args":["%s","%s"]}}}' "$FS_JS" "$WORK/data" >"$WORK/hub.json"
XDG_STATE_HOME="$WORK/state" "$BIN/mcp-hub" --port 18713 --config "$WORK/hub.json" >"$WORK/mcp-hub.log" 2>&1 &
PIDS+=($!)

ARGS="{\"path\":\"$WORK/data/hello.txt\"}"
# gateway NAME: rawhttp's arguments for it
gateway() {
  case $1 in
  zero) echo "-token-file $WORK/token -tool fs__read_text_file $BASE/mcp" ;;
  zero-cap4) echo "-token-file $WORK/token -tool fs4__read_text_file $BASE/mcp" ;;
  mcp-proxy) echo "-tool read_text_file http://127.0.0.1:18711/mcp" ;;
  supergateway) echo "-tool read_text_file http://127.0.0.1:18712/mcp" ;;
  mcp-hub) echo "-sse -tool fs__read_text_file http://127.0.0.1:18713/mcp" ;;
  esac
}
GATEWAYS="zero zero-cap4 mcp-proxy supergateway mcp-hub"
for g in $GATEWAYS; do # each answers before the rounds begin
  # shellcheck disable=SC2046
  for _ in $(seq 100); do "$WORK/rawhttp" -n 5 -warmup 0 -runs 1 -args "$ARGS" $(gateway "$g") >/dev/null 2>&1 && break; sleep 0.3; done
done

: >"$WORK/results"
ORDER=($GATEWAYS)
for r in $(seq "$ROUNDS"); do
  # Each round starts with the next gateway: none always goes first.
  ORDER=("${ORDER[@]:1}" "${ORDER[0]}")
  for c in 8 1; do
    for g in "${ORDER[@]}"; do
      # shellcheck disable=SC2046
      cps=$("$WORK/rawhttp" -n "$CALLS" -warmup 50 -runs 1 -c "$c" -args "$ARGS" $(gateway "$g") | tail -1 | awk '{print $4}')
      echo "round $r, $c in flight, $g: $cps calls/s"
      echo "$c $g $cps" >>"$WORK/results"
    done
  done
done

echo
echo "resident memory at the end (KiB, the gateway's own process):"
for pid in "${PIDS[@]}"; do
  echo "  $(ps -o rss= -p "$pid") $(ps -o args= -p "$pid" | cut -c1-60)"
done
echo
python3 - "$WORK/results" <<'EOF'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    c, g, cps = line.split()
    by.setdefault((int(c), g), []).append(float(cps))
for c in (8, 1):
    print(f"## {c} in flight: median calls/s")
    zero = statistics.median(by[(c, "zero")])
    for (cc, g), v in sorted(by.items(), key=lambda kv: -statistics.median(kv[1])):
        if cc == c:
            m = statistics.median(v)
            print(f"  {g:13} {m:7.0f}   zero / {g}: {zero / m:.2f}")
    peers = [v for (cc, g), v in by.items() if cc == c and not g.startswith("zero")]
    ahead = sum(z > max(p[i] for p in peers) for i, z in enumerate(by[(c, "zero")]))
    print(f"  rounds in which zero was ahead of every peer: {ahead} of {len(by[(c, 'zero')])}")
EOF
