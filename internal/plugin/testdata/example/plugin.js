// notes-helper: an example Zero plugin. Zero's host loads this file and
// calls one export per tool of plugin.json with (args, ctx). The arguments
// have been checked against the tool's parameters; ctx.secrets holds the
// secrets the plugin was granted, and ctx.fetch reaches the hosts it was
// granted, nothing else.
const fs = require("node:fs/promises");
const path = require("node:path");

// check_status fetches a page of status.example.com through ctx.fetch and
// reports its status. A string result is the tool's text.
exports.check_status = async function (args, ctx) {
  const headers = {};
  if (ctx.secrets.STATUS_TOKEN) {
    headers.Authorization = "Bearer " + ctx.secrets.STATUS_TOKEN;
  }
  const res = await ctx.fetch("https://status.example.com" + args.path, { headers });
  return `${args.path}: HTTP ${res.status}`;
};

// read_note reads notes/NAME.md from the thread workspace, whose path is
// ctx.workspace (the working directory is an empty scratch folder). The
// sandbox lets it read nothing outside notes/; the name is checked here as
// well, so that a bad one gets a clear error.
exports.read_note = async function (args, ctx) {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(args.name)) {
    throw new Error(`not a note name: ${args.name}`);
  }
  const text = await fs.readFile(path.join(ctx.workspace, "notes", args.name + ".md"), "utf8");
  return { content: [{ type: "text", text }] };
};
