// tsclient.mjs: drives `zero mcp filesystem DIR` with the official TypeScript SDK client, which validates every
// tool's inputSchema and every structuredContent against the tool's outputSchema. Used by cmd/zero's end-to-end
// test; prints one JSON line: {"ok": true, "calls": N} or {"ok": false, "error": "..."}.
//
//   node node/tsclient.mjs /path/to/zero DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import fs from "node:fs";
import path from "node:path";

const [zero, dir] = process.argv.slice(2);
const p = (name) => path.join(dir, name);
fs.writeFileSync(p("a.txt"), "alpha\nbeta\n");
fs.writeFileSync(p("pic.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
fs.writeFileSync(p("data.bin"), Buffer.from([0, 1, 2]));
fs.mkdirSync(p("sub"), { recursive: true });
fs.writeFileSync(p("sub/b.go"), "package b\n");

const calls = [
  ["read_text_file", { path: p("a.txt") }, (t) => t === "alpha\nbeta\n"],
  ["read_text_file", { path: p("a.txt"), tail: 1 }, (t) => t === "beta\n"],
  ["read_file", { path: p("a.txt"), head: 1 }, (t) => t === "alpha\n"],
  ["read_media_file", { path: p("pic.png") }, null],
  ["read_media_file", { path: p("data.bin") }, null],
  ["read_multiple_files", { paths: [p("a.txt"), p("missing")] }, (t) => t.includes("Error -")],
  ["write_file", { path: p("w.txt"), content: "w" }, (t) => t.startsWith("Successfully wrote")],
  ["edit_file", { path: p("w.txt"), edits: [{ oldText: "w", newText: "v" }], dryRun: true }, (t) => t.includes("+v")],
  ["edit_file", { path: p("w.txt"), edits: [{ oldText: "w", newText: "v" }] }, (t) => t.includes("-w")],
  ["create_directory", { path: p("made/deeper") }, (t) => t.startsWith("Successfully created")],
  ["list_directory", { path: dir }, (t) => t.includes("[DIR] sub")],
  ["list_directory_with_sizes", { path: dir, sortBy: "size" }, (t) => t.includes("Total:")],
  ["directory_tree", { path: dir, excludePatterns: ["made"] }, (t) => JSON.parse(t).some((e) => e.name === "sub")],
  ["move_file", { source: p("w.txt"), destination: p("sub/w.txt") }, (t) => t.startsWith("Successfully moved")],
  ["search_files", { path: dir, pattern: "**/*.go" }, (t) => t === p("sub/b.go")],
  ["get_file_info", { path: p("a.txt") }, (t) => t.includes("isFile: true")],
  ["list_allowed_directories", {}, (t) => t.includes(dir)],
];

async function main() {
  const client = new Client({ name: "zero-tsclient", version: "0" });
  const transport = new StdioClientTransport({ command: zero, args: ["mcp", "filesystem", dir], stderr: "pipe" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  if (tools.length !== 14) throw new Error(`listTools returned ${tools.length} tools`);
  for (const [name, args, check] of calls) {
    const res = await client.callTool({ name, arguments: args });
    const text = res.content.find((c) => c.type === "text")?.text;
    if (res.isError) throw new Error(`${name}: tool error: ${text}`);
    if (!res.structuredContent) throw new Error(`${name}: no structuredContent`);
    if (check && !check(text)) throw new Error(`${name}: unexpected text ${JSON.stringify(text)}`);
  }
  const escape = await client.callTool({ name: "read_text_file", arguments: { path: "/etc/passwd" } });
  if (!escape.isError) throw new Error("read of /etc/passwd was not refused");
  await client.close();
  console.log(JSON.stringify({ ok: true, calls: calls.length + 1 }));
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exit(1);
});
