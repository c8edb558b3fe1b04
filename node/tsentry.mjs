// tsentry.mjs: the official TypeScript SDK client starts a stdio MCP server exactly as an mcpServers entry
// says (its command, args and env, over the SDK's default environment, as Claude Desktop does), or connects to
// a streamable HTTP one as an entry with a url says (its url and headers), lists its tools and calls one. Used
// by cmd/zero's README and plugin tests; prints one JSON line:
// {"ok": true, "tools": [...], "text": "...", "meta": {...}} or {"ok": false, "error": "..."}.
//
//   node node/tsentry.mjs '{"command": "/path/to/zero", "args": ["mcp", "workspace"]}' TOOL '{"arg": "value"}'
//   node node/tsentry.mjs '{"url": "http://127.0.0.1:PORT/mcp", "headers": {"Authorization": "Bearer zt_..."}}' TOOL '{}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [entryJSON, tool, argsJSON] = process.argv.slice(2);

async function main() {
  const entry = JSON.parse(entryJSON);
  const client = new Client({ name: "zero-tsentry", version: "0" });
  let stderr = "";
  let transport;
  if (entry.url) {
    transport = new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers ?? {} } });
  } else {
    transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args ?? [],
      env: { ...getDefaultEnvironment(), ...(entry.env ?? {}) },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (b) => { stderr += b; });
  }
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${e}; the server's stderr: ${stderr}`);
  }
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  if (!names.includes(tool)) throw new Error(`tools/list lacks ${tool}: ${names}`);
  const res = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  if (res.isError) throw new Error(`${tool}: tool error: ${text}`);
  await client.close();
  console.log(JSON.stringify({ ok: true, tools: names, text, meta: res._meta ?? {} }));
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exit(1);
});
