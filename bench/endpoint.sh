#!/usr/bin/env bash
# endpoint.sh: what the workspace's /mcp endpoint adds to a tool call that
# does nothing (the runtime's test server's echo), against calling the same
# server directly, in one run.
#
#   bench/endpoint.sh [RUNS]
#
# 1. Go benchmarks (internal/workspace/endpoint_bench_test.go), -count RUNS:
#    BenchmarkEchoDirect (the Go SDK client on the server's stdio),
#    BenchmarkEchoEndpoint (the same client through /mcp), BenchmarkSDKProxy
#    (the same call through a bare SDK proxy: HTTP handler, SDK server, SDK
#    client on the server's stdio), BenchmarkSDKFloor (the SDK's own HTTP
#    round trip to a tool that does nothing) and BenchmarkEchoEndpoint8 (8
#    calls in flight through /mcp). Medians, and the added latencies.
# 2. Real processes, with clients of almost no cost of their own: rawbench
#    (RAWBENCH_DIR, default ../shared/tools/rawbench) on the server run
#    directly; bench/rawhttp, the same over HTTP, on a running zero serve's
#    /mcp; and rawbench on the stdio bridge, zero mcp workspace, as Claude
#    Desktop calls it, which adds the bridge's own hop to the endpoint's.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
RAWBENCH_DIR=${RAWBENCH_DIR:-../shared/tools/rawbench}
WORK=${WORK:-$(mktemp -d)}
echo "machine: $(nproc) cores; $(go version | cut -d' ' -f3); $RUNS runs per figure; $(date -u +%Y-%m-%d)"
echo

echo "## Go benchmarks (2000 calls each, -count $RUNS)"
go test -run '^$' -bench 'BenchmarkEcho|BenchmarkSDK' -benchtime=2000x -count "$RUNS" ./internal/workspace |
  grep -E '^Benchmark' | tee "$WORK/go.txt"
python3 - "$WORK/go.txt" <<'EOF'
import re, statistics, sys
ns, cps = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'(Benchmark\w+)-\d+\s+\d+\s+(\d+) ns/op(?:\s+(\d+) calls/s)?', line)
    if m:
        ns.setdefault(m[1], []).append(int(m[2]))
        if m[3]:
            cps.setdefault(m[1], []).append(int(m[3]))
med = {k: statistics.median(v) / 1e6 for k, v in ns.items()}
print()
for k in ("BenchmarkEchoDirect", "BenchmarkEchoEndpoint", "BenchmarkSDKProxy", "BenchmarkSDKFloor"):
    print(f"median {k}: {med[k]:.3f} ms")
print(f"added by /mcp (endpoint - direct): {med['BenchmarkEchoEndpoint'] - med['BenchmarkEchoDirect']:.3f} ms (target <= 0.3)")
print(f"added by a bare SDK proxy (proxy - direct): {med['BenchmarkSDKProxy'] - med['BenchmarkEchoDirect']:.3f} ms")
print(f"Zero's own share (endpoint - proxy): {med['BenchmarkEchoEndpoint'] - med['BenchmarkSDKProxy']:.3f} ms")
print(f"the SDK's HTTP round trip to a no-op tool (floor): {med['BenchmarkSDKFloor']:.3f} ms")
print(f"8 in flight: {statistics.median(cps['BenchmarkEchoEndpoint8']):.0f} calls/s (target >= 1000)")
EOF
echo

echo "## Real processes (2000 calls per run)"
go build -o "$WORK/zero" ./cmd/zero
go build -o "$WORK/toolserver" ./internal/workspace/runtime/testdata/toolserver
go build -o "$WORK/rawhttp" ./bench/rawhttp
(cd "$RAWBENCH_DIR" && go build -o "$WORK/rawbench" .)
# zero serve, and the owner's browser session, as the API's tests drive it:
# sign in, then add, approve, enable and test the server, and make a token.
. bench/serve-setup.sh
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null || true' EXIT
add_server "{\"name\":\"bench\",\"kind\":\"stdio\",\"command\":\"$WORK/toolserver\",\"args\":[]}" >/dev/null
api POST /api/tokens '{"name":"bench"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])' >"$HOME_DIR/cli-token"
chmod 600 "$HOME_DIR/cli-token"

echo "direct (toolserver on stdio):"
CANARY= "$WORK/rawbench" -n 2000 -runs "$RUNS" -tool echo -check -- "$WORK/toolserver" | tail -1
echo "through /mcp (rawhttp, the same kind of client over HTTP):"
"$WORK/rawhttp" -token-file "$HOME_DIR/cli-token" -n 2000 -runs "$RUNS" -tool bench__echo "$BASE/mcp" | tail -1
echo "through zero mcp workspace and /mcp:"
ZERO_HOME="$HOME_DIR" "$WORK/rawbench" -n 2000 -runs "$RUNS" -tool bench__echo -check -- "$WORK/zero" mcp workspace --addr "${BASE#http://}" | tail -1
