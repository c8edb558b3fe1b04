// tsagents.mjs: the official TypeScript SDK client drives `zero mcp agents --workspace DIR` over stdio
// (StdioClientTransport, which spawns ZERO with this process's environment and pipes its stderr). Used by
// cmd/zero's agents end-to-end tests, which send it one JSON request a line on stdin and read one JSON line
// back for each:
//
//   {"op": "pid"}                              -> {"ok": true, "pid": N}  (zero's process id)
//   {"op": "call", "name": T, "arguments": A}  -> {"ok": true, "result": {structuredContent, content, isError},
//                                                  "progress": [params of each progress notification]}
//                                                 (with a progress token: the SDK sends one when onprogress is set;
//                                                 every notification zero wrote during the call, as read)
//   {"op": "close"}                            -> {"ok": true, "exit": {code, signal}, "stderr": "..."}
//                                                 (closes the client: stdin ends; zero's exit as the SDK saw it)
//
// On an error it prints {"ok": false, "error": "..."} and exits 1.
//
//   node node/tsagents.mjs /path/to/zero DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import readline from "node:readline";

const [zero, dir] = process.argv.slice(2);

function say(v) {
  console.log(JSON.stringify(v));
}

async function main() {
  const transport = new StdioClientTransport({
    command: zero,
    args: ["mcp", "agents", "--workspace", dir],
    env: process.env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr.on("data", (b) => { stderr += b.toString(); });
  const client = new Client({ name: "zero-tsagents", version: "0" });
  await client.connect(transport);
  // Progress notifications as they arrive, in order. The SDK hands a notification to its handler a microtask
  // later but a response at once, so onprogress misses those written just before the answer.
  let progress = [];
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.method === "notifications/progress") progress.push(m.params);
    onmessage(m, extra);
  };
  // The SDK keeps the child process private; its exit is what close reports.
  const proc = transport._process;
  const exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));

  for await (const line of readline.createInterface({ input: process.stdin })) {
    const req = JSON.parse(line);
    switch (req.op) {
      case "pid":
        say({ ok: true, pid: transport.pid });
        break;
      case "call": {
        progress = [];
        const result = await client.callTool({ name: req.name, arguments: req.arguments }, CallToolResultSchema, {
          onprogress: () => {},
          timeout: 120000,
        });
        say({
          ok: true,
          result: { structuredContent: result.structuredContent, content: result.content, isError: result.isError === true },
          progress,
        });
        break;
      }
      case "close": {
        await client.close();
        say({ ok: true, exit: await exited, stderr });
        return;
      }
      default:
        throw new Error(`unknown op ${req.op}`);
    }
  }
  await client.close(); // stdin ended without a close
}

main().catch((e) => {
  say({ ok: false, error: String(e && e.stack || e) });
  process.exit(1);
});
