# memory-setup.sh, sourced by memory.sh and memory-large.sh from the
# checkout's root: installs the reference memory server if it is absent
# (REF), builds zero unless ZERO names a binary, and copies mcpbench.mjs
# (MCPBENCH, default ../shared/tools/mcpbench.mjs beside the checkout) into
# node/, where it finds the TypeScript SDK, as CLIENT, removed at exit.
MCPBENCH=${MCPBENCH:-../shared/tools/mcpbench.mjs}
WORK=${WORK:-$(mktemp -d)}
REF=node/node_modules/@modelcontextprotocol/server-memory/dist/index.js
[ -f "$REF" ] || npm ci --prefix node --no-audit --no-fund --loglevel=error
if [ -z "${ZERO:-}" ]; then
  go build -o "$WORK/zero" ./cmd/zero
  ZERO=$WORK/zero
fi
CLIENT=node/.mcpbench-$(basename "$0" .sh).mjs
cp "$MCPBENCH" "$CLIENT"
trap 'rm -f "$CLIENT"' EXIT
