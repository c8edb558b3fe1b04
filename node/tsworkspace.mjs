// tsworkspace.mjs: the official TypeScript SDK client uses a running zero serve's approved tools twice: over its
// /mcp endpoint (StreamableHTTPClientTransport, bearer token from $ZERO_TOKEN) and over the stdio bridge
// `zero mcp workspace` (StdioClientTransport, which reads $ZERO_HOME/client-token). The workspace must offer
// files (zero mcp filesystem DIR, holding note.txt) and remote (a greet tool). Used by cmd/zero's end-to-end
// test; prints one JSON line: {"ok": true, "calls": N} or {"ok": false, "error": "..."}.
//
//   ZERO_HOME=... ZERO_TOKEN=zt_... node node/tsworkspace.mjs http://127.0.0.1:PORT /path/to/zero DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import path from "node:path";

const [base, zero, dir] = process.argv.slice(2);
let calls = 0;

function text(res) {
  return res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function use(how, transport) {
  const client = new Client({ name: "zero-tsworkspace", version: "0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["files__read_text_file", "remote__greet"]) {
    if (!names.includes(want)) throw new Error(`${how}: tools/list lacks ${want}: ${names}`);
  }
  const read = await client.callTool({ name: "files__read_text_file", arguments: { path: path.join(dir, "note.txt") } });
  if (read.isError || text(read) !== "approved, then used\n") throw new Error(`${how}: read: ${JSON.stringify(read)}`);
  const greet = await client.callTool({ name: "remote__greet", arguments: { who: "Ada" } });
  if (greet.isError || text(greet) !== "hello, Ada, over https") throw new Error(`${how}: greet: ${JSON.stringify(greet)}`);
  const escape = await client.callTool({ name: "files__read_text_file", arguments: { path: "/etc/passwd" } });
  if (!escape.isError) throw new Error(`${how}: a read of /etc/passwd was not refused`);
  calls += 3;
  await client.close();
}

async function main() {
  await use("/mcp", new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.ZERO_TOKEN}` } },
  }));
  await use("zero mcp workspace", new StdioClientTransport({
    command: zero,
    args: ["mcp", "workspace", "--addr", new URL(base).host],
    env: { ZERO_HOME: process.env.ZERO_HOME, PATH: process.env.PATH },
    stderr: "pipe",
  }));
  console.log(JSON.stringify({ ok: true, calls }));
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exit(1);
});
