// tsplugin.mjs: the official TypeScript SDK client uses an enabled plugin's tools through a running zero serve's
// /mcp endpoint (StreamableHTTPClientTransport, bearer token from $ZERO_TOKEN): it lists the tools and calls
// TOOL with the JSON arguments ARGS. Used by cmd/zero's plugin end-to-end test, which checks what it prints: one
// JSON line, {"ok": true, "tools": [{name, description, inputSchema}, ...], "result": {content, isError}} or
// {"ok": false, "error": "..."}.
//
//   ZERO_TOKEN=zt_... node node/tsplugin.mjs http://127.0.0.1:PORT TOOL ARGS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, tool, args] = process.argv.slice(2);

async function main() {
  const client = new Client({ name: "zero-tsplugin", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.ZERO_TOKEN}` } },
  }));
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
  await client.close();
  console.log(JSON.stringify({
    ok: true,
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    result: { content: result.content, isError: result.isError === true },
  }));
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exit(1);
});
