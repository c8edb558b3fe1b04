// replies.mjs: runs a plan of tool calls against MCP servers with the official TypeScript SDK client, which ends
// a stdio session when one message passes 10 MiB, and measures each reply on the wire. Used by cmd/zero's
// TestRepliesFitTypeScriptClient; reads the plan (JSON) on stdin:
//
//   {"servers": [{"name": "...", "command": "...", "args": [...], "calls": [{"label": "...", "tool": "...", "arguments": {...}}]}]}
//
// and prints one JSON line per call: {"server", "label", "bytes" (the reply's line on the wire), "isError", "text" and
// "textEnd" (the first and last 2000 characters of the text blocks joined), "textLength", "structured" (the
// structured content, each string over 2000 characters replaced by its length), "ping" (whether the session answered
// a ping right after), "error" (a failure of the call itself)}, then one line per server: {"server", "tools" (how
// many tools/list gives after all calls, -1 if it fails)}. A call with "follow": "start_index" (fetch) or "offset"
// (read_skill_resource) is made again from where its answer says the rest begins, until it says no more; each
// answer is a line, labelled "label#n".
//
//   node node/replies.mjs < plan.json
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(await new Promise((resolve) => {
  let data = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (c) => (data += c));
  process.stdin.on("end", () => resolve(data));
}));

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

for (const server of plan.servers) {
  const client = new Client({ name: "zero-replies", version: "0" });
  const transport = new StdioClientTransport({ command: server.command, args: server.args, stderr: "ignore" });
  try {
    await client.connect(transport);
  } catch (e) {
    out({ server: server.name, tools: -1, error: `connect: ${e && e.message || e}` });
    continue;
  }
  // The sizes of the lines the server writes, each one message.
  const lines = [];
  let partial = 0;
  transport._process.stdout.on("data", (chunk) => {
    let from = 0;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, from)) {
      lines.push(partial + i - from);
      partial = 0;
      from = i + 1;
    }
    partial += chunk.length - from;
  });
  for (const call of server.calls) {
    let args = call.arguments;
    for (let n = 0; n < 50 && args; n++) {
      const seen = lines.length;
      const row = { server: server.name, label: n ? `${call.label}#${n}` : call.label };
      let next = null;
      try {
        const res = await client.callTool({ name: call.tool, arguments: args }, undefined, { timeout: 120000 });
        const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
        row.isError = !!res.isError;
        row.text = text.slice(0, 2000);
        row.textEnd = text.slice(-2000);
        row.textLength = text.length;
        row.structured = shorten(res.structuredContent ?? null);
        if (call.follow === "start_index") {
          const m = /start_index of (\d+) to get more content\.<\/error>$/.exec(text);
          next = m && { ...args, start_index: Number(m[1]) };
        } else if (call.follow === "offset" && res.structuredContent?.nextOffset !== undefined) {
          next = { ...args, offset: res.structuredContent.nextOffset };
        }
      } catch (e) {
        row.error = String(e && e.message || e);
      }
      row.bytes = Math.max(0, ...lines.slice(seen));
      try {
        await client.ping();
        row.ping = true;
      } catch (e) {
        row.ping = false;
      }
      out(row);
      args = next;
    }
  }
  let tools = -1;
  try {
    tools = (await client.listTools()).tools.length;
  } catch (e) {}
  out({ server: server.name, tools });
  await client.close().catch(() => {});
}

function shorten(v) {
  if (typeof v === "string") return v.length > 2000 ? { length: v.length } : v;
  if (Array.isArray(v)) return v.map(shorten);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shorten(x)]));
  return v;
}
