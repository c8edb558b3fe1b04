// Zero workspace: the live view of an agent thread. The page is rendered
// by the server; this adds what came after it, from the thread's event
// stream, and the controls that call the JSON API.
//
// Model and tool output is untrusted: every node is made with
// createElement and filled with textContent, never parsed as HTML.
"use strict";
(function () {
  var root = document.getElementById("thread");
  if (!root) return;
  var threadID = root.dataset.thread;
  if (!/^[0-9]+$/.test(threadID)) return;
  var base = "/api/threads/" + threadID;
  var canWrite = root.dataset.writer === "true";
  var canApprove = root.dataset.approver === "true";
  var lastSeq = Number(root.dataset.lastSeq) || 0; // the server rendered the events up to it
  // Messages (but the system prompt) and runs are numbered within the
  // thread, going on from the server's counts (threadNumbers).
  var messages = Number(root.dataset.messages) || 0;
  var runs = Number(root.dataset.runs) || 0;
  var runNumbers = Object.create(null);
  if (root.dataset.run && root.dataset.run !== "0") runNumbers[root.dataset.run] = runs;
  function runNumber(id) {
    id = String(id);
    if (!(id in runNumbers)) runNumbers[id] = ++runs;
    return runNumbers[id];
  }
  var list = document.getElementById("events");
  var runStatus = document.getElementById("run-status");
  var runError = document.getElementById("run-error");
  var usage = document.getElementById("usage");
  var live = document.getElementById("live");
  var threadError = document.getElementById("thread-error");
  var form = document.getElementById("prompt-form");
  var prompt = document.getElementById("prompt");
  var send = document.getElementById("send");
  var cancel = document.getElementById("cancel-run");
  var retry = document.getElementById("retry");
  var promptError = document.getElementById("prompt-error");

  var answers = [
    ["once", "o", "Allow once", "primary"],
    ["thread", "t", "Allow in this thread", ""],
    ["always", "a", "Always allow this tool", ""],
    ["declined", "d", "Decline", ""],
    ["cancelled", "c", "Cancel run", "danger"]
  ];
  // Lookups by untrusted keys have no prototype to find "constructor" in.
  function table(o) { return Object.assign(Object.create(null), o); }
  var keys = table({});
  answers.forEach(function (a) { keys[a[1]] = a[0]; });
  // The words threads_pages.go uses for an approval's end.
  var ends = table({
    once: "Allowed once",
    thread: "Allowed in this thread",
    always: "Always allowed",
    declined: "Declined",
    cancelled: "Cancelled: the run ended",
    expired: "Expired: nobody answered in time, so it was declined"
  });
  var endedRun = table({ completed: true, interrupted: true, failed: true });
  var roles = table({ system: true, user: true, assistant: true, tool: true });

  // --- Text as the server shows it ---------------------------------------

  var unprintable = /[\p{C}\p{Z}]/u; // what Go's unicode.IsPrint is not (but for ' ')

  function hex(n, width) {
    var s = n.toString(16);
    while (s.length < width) s = "0" + s;
    return s;
  }

  // visible is web.Visible: a value holding a hidden character has it,
  // and backslashes and quotes, escaped; any other is as it is.
  function visible(s) {
    var hidden = false;
    for (var ch of s) {
      if (ch !== " " && unprintable.test(ch)) { hidden = true; break; }
    }
    if (!hidden) return s;
    var out = "";
    for (var c of s) {
      var n = c.codePointAt(0);
      if (c === "\\" || c === "'") out += "\\" + c;
      else if (c === "\n") out += "\\n";
      else if (c === "\t") out += "\\t";
      else if (c === " " || !unprintable.test(c)) out += c;
      else if (n < 0x80) out += "\\x" + hex(n, 2);
      else if (n <= 0xffff) out += "\\u" + hex(n, 4);
      else out += "\\U" + hex(n, 8);
    }
    return out;
  }

  // visibleText is visibleText in threads_pages.go: visible line by
  // line, keeping tabs.
  function visibleText(s) {
    return String(s).split("\n").map(function (line) {
      return line.replace(/\r$/, "").split("\t").map(visible).join("\t");
    }).join("\n");
  }

  // indentJSON is Go's json.Indent(text, "", "  ") for valid JSON, and the
  // text itself otherwise: only spacing outside strings changes, so what
  // is shown is what runs.
  function indentJSON(text) {
    text = String(text).replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, "");
    try { JSON.parse(text); } catch (e) { return text; }
    var out = "", depth = 0, inString = false, escaped = false, needIndent = false;
    function newline(d) { out += "\n" + "  ".repeat(d); }
    for (var c of text) {
      if (inString) {
        out += c;
        if (escaped) escaped = false;
        else if (c === "\\") escaped = true;
        else if (c === "\"") inString = false;
        continue;
      }
      if (c === " " || c === "\t" || c === "\n" || c === "\r") continue;
      if (needIndent && c !== "}" && c !== "]") {
        needIndent = false;
        depth++;
        newline(depth);
      }
      switch (c) {
      case "\"": inString = true; out += c; break;
      case "{": case "[": needIndent = true; out += c; break;
      case ",": out += c; newline(depth); break;
      case ":": out += ": "; break;
      case "}": case "]":
        if (needIndent) needIndent = false;
        else { depth--; newline(depth); }
        out += c;
        break;
      default: out += c;
      }
    }
    return out;
  }

  function argsText(v) {
    if (typeof v === "string") return visibleText(indentJSON(v));
    if (v === undefined || v === null) return "";
    return visibleText(indentJSON(JSON.stringify(v)));
  }

  function when(stamp) {
    // Go writes nanoseconds; Date reads milliseconds.
    var d = new Date(String(stamp).replace(/(\.[0-9]{3})[0-9]+/, "$1"));
    if (isNaN(d)) return "";
    return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function show(node, text) {
    node.textContent = text || "";
    node.hidden = !text;
  }

  // --- The JSON API ------------------------------------------------------

  // api sends a JSON request; one the workspace answers needs your
  // passkey is confirmed by it and sent again (static/passkey.js).
  function api(method, path, body) {
    return window.zeroPasskey.request(method, path, body);
  }

  function failure(res, what) {
    return res.message ? what + ": " + res.message : what + " (HTTP " + res.status + ").";
  }

  // --- Building the conversation -----------------------------------------

  var callNames = table({}); // call id -> tool name, for the results
  list.querySelectorAll(".call[data-call-id]").forEach(function (c) {
    var name = c.querySelector(".tool-name");
    if (name) callNames[c.dataset.callId] = name.textContent;
  });

  function nearBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
  }

  function append(node) {
    var follow = nearBottom();
    var empty = document.getElementById("no-events");
    if (empty) empty.hidden = true;
    var streaming = document.getElementById("streaming");
    if (streaming && node !== streaming) list.insertBefore(node, streaming);
    else list.appendChild(node);
    if (follow) node.scrollIntoView({ block: "end" });
  }

  function forkButton(seq) {
    var b = el("button", "link fork", "Fork from here");
    b.type = "button";
    b.dataset.fork = String(seq);
    return b;
  }

  // againButton is a message's Regenerate (the model's answer) or Edit
  // and resend (a user's message) button; none for other roles.
  function againButton(seq, role) {
    var b;
    if (role === "assistant") {
      b = el("button", "link again", "Regenerate");
      b.dataset.regenerate = String(seq);
    } else if (role === "user") {
      b = el("button", "link again", "Edit and resend");
      b.dataset.edit = String(seq);
    } else {
      return null;
    }
    b.type = "button";
    return b;
  }

  function head(ev, who) {
    var h = el("div", "msg-head");
    h.appendChild(who);
    h.appendChild(document.createTextNode(" "));
    h.appendChild(el("span", "when", "#" + (++messages) + " · " + when(ev.created)));
    if (canWrite) {
      h.appendChild(document.createTextNode(" "));
      h.appendChild(forkButton(ev.seq));
      var again = againButton(ev.seq, (ev.body || {}).role);
      if (again) {
        h.appendChild(document.createTextNode(" "));
        h.appendChild(again);
      }
    }
    return h;
  }

  function message(ev) {
    var m = ev.body || {};
    var role = roles[m.role] ? m.role : "other";
    var content = typeof m.content === "string" ? m.content : (m.content == null ? "" : JSON.stringify(m.content));
    var li = el("li", "msg");
    li.dataset.role = role;
    li.dataset.seq = String(ev.seq);
    li.id = "event-" + ev.seq;
    if (role === "system") {
      var d = el("details");
      d.appendChild(el("summary", "", "System prompt"));
      d.appendChild(el("div", "text", visibleText(content)));
      li.appendChild(d);
      return li;
    }
    var who = el("span", "who");
    if (role === "tool") {
      var name = callNames[m.tool_call_id] || m.name || "";
      who.appendChild(document.createTextNode("Result of "));
      who.appendChild(el("code", "tool-name", visible(String(name))));
      if (m.tool_call_id) li.dataset.callId = String(m.tool_call_id);
    } else {
      who.textContent = { user: "User", assistant: "Assistant", other: "Message" }[role];
    }
    li.appendChild(head(ev, who));
    if (role === "tool") li.appendChild(shown(ev.seq, el("div", "text")));
    else if (content) li.appendChild(role === "assistant" ? shown(ev.seq, el("div", "text", visibleText(content))) : el("div", "text", visibleText(content)));
    (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach(function (tc) {
      var fn = (tc && tc.function) || {};
      var fname = String(fn.name || "");
      if (tc && tc.id) callNames[tc.id] = visible(fname);
      var call = el("div", "call");
      call.dataset.callId = String((tc && tc.id) || "");
      var ch = el("div", "call-head", "Calls ");
      ch.appendChild(el("code", "tool-name", visible(fname)));
      call.appendChild(ch);
      call.appendChild(el("pre", "args", argsText(String(fn.arguments || ""))));
      li.appendChild(call);
    });
    return li;
  }

  // shown fills box, a message's text, as the page shows it once the
  // server says how: a tool's result without the wrapper the model reads,
  // an assistant's Markdown rendered. The server renders and sanitizes the
  // Markdown (internal/guard/markdown); this builds its elements as they
  // are, its texts as text, and parses no HTML.
  function shown(seq, box) {
    api("GET", base + "/events/" + seq + "/rendered").then(function (res) {
      var d = res.data || {};
      if (!res.ok) {
        if (!box.textContent) box.textContent = "The result could not be loaded: reload the page.";
        box.dataset.shown = "failed";
        return;
      }
      if (Array.isArray(d.markdown) && d.markdown.length) {
        var frag = document.createDocumentFragment();
        build(frag, d.markdown);
        box.replaceChildren(frag);
        box.classList.add("markdown");
        box.dataset.shown = "markdown";
      } else {
        box.textContent = String(d.text || ""); // hidden characters escaped by the server
        if (d.as_text) box.after(el("p", "help as-text", String(d.as_text)));
        box.dataset.shown = "text";
      }
    });
    return box;
  }

  function build(parent, nodes) {
    nodes.forEach(function (n) {
      if (!n || typeof n.tag !== "string" || !n.tag) {
        parent.appendChild(document.createTextNode(String((n && n.text) || "")));
        return;
      }
      var e = document.createElement(n.tag);
      var attrs = n.attrs || {};
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
      if (Array.isArray(n.children)) build(e, n.children);
      parent.appendChild(e);
    });
  }

  // The streamed answer: its finished lines, shown once each, and the
  // line being written, shown again with each piece.
  var stream = null;

  function delta(text) {
    var s = document.getElementById("streaming");
    if (!s || !stream) {
      if (s) s.remove();
      s = el("li", "msg streaming");
      s.id = "streaming";
      s.dataset.role = "streaming";
      var h = el("div", "msg-head");
      h.appendChild(el("span", "who", "Assistant"));
      h.appendChild(document.createTextNode(" "));
      h.appendChild(el("span", "when", "writing…"));
      s.appendChild(h);
      var body = el("div", "text");
      stream = { done: document.createTextNode(""), line: document.createTextNode(""), tail: "" };
      body.appendChild(stream.done);
      body.appendChild(stream.line);
      s.appendChild(body);
      append(s);
    }
    var follow = nearBottom();
    var lines = (stream.tail + String(text)).split("\n");
    stream.tail = lines.pop();
    if (lines.length) stream.done.appendData(visibleText(lines.join("\n")) + "\n");
    stream.line.data = visibleText(stream.tail);
    if (follow) s.scrollIntoView({ block: "end" });
  }

  function dropStreaming() {
    var s = document.getElementById("streaming");
    if (s) s.remove();
    stream = null;
  }

  function badge(cls, text) {
    return el("span", "badge " + cls, text);
  }

  function approval(ev) {
    var a = ev.body || {};
    var id = Number(a.approval);
    if (!Number.isSafeInteger(id) || id < 1) return;
    var status = String(a.status || "");
    var pending = status === "pending";
    var li = el("li", "approval");
    li.dataset.approval = String(id);
    li.dataset.status = status;
    li.tabIndex = 0;
    li.setAttribute("role", "group");
    li.setAttribute("aria-label", "Approval of a tool call");
    var h = el("p", "approval-head");
    var by = a.answered_by ? ", by " + visible(String(a.answered_by)) : "";
    h.appendChild(el("strong", "", pending ? "Allow this tool call?" : (ends[status] || status) + by));
    li.appendChild(h);
    var tool = visible(String(a.tool || "")), name = visible(String(a.name || ""));
    var t = el("p", "approval-tool");
    if (a.plugin) t.appendChild(el("span", "tool-kind", "plugin "));
    t.appendChild(el("code", "tool-server", visible(String(a.server || ""))));
    t.appendChild(document.createTextNode(" / "));
    t.appendChild(el("code", "tool-name", tool));
    if (name && name !== tool) {
      t.appendChild(document.createTextNode(" "));
      t.appendChild(el("span", "muted", "(the model calls it " + name + ")"));
    }
    li.appendChild(t);
    // A missing hint is the unsafe value.
    var hints = a.hints || { read_only: false, destructive: true, open_world: true };
    var hp = el("p", "hints");
    if (hints.read_only) { hp.appendChild(badge("passed", "read-only")); hp.appendChild(document.createTextNode(" ")); }
    if (hints.destructive) { hp.appendChild(badge("failed", "destructive")); hp.appendChild(document.createTextNode(" ")); }
    if (hints.open_world) hp.appendChild(badge("untested", "open world"));
    li.appendChild(hp);
    if (a.reason) li.appendChild(el("p", "reason", visibleText(String(a.reason))));
    li.appendChild(el("pre", "args", argsText(a.arguments)));
    if (pending) {
      li.appendChild(el("p", "expires", "Unanswered, it is declined at " + when(a.expires) + "."));
      if (canApprove) {
        var box = el("div", "answers");
        answers.forEach(function (x) {
          var b = el("button", x[3], x[2] + " ");
          b.type = "button";
          b.dataset.answer = x[0];
          b.setAttribute("aria-keyshortcuts", x[1]);
          b.appendChild(el("kbd", "", x[1]));
          box.appendChild(b);
          box.appendChild(document.createTextNode(" "));
        });
        li.appendChild(box);
        li.appendChild(el("p", "help", "Decline tells the model no and the run goes on; Cancel run ends the run."));
        li.appendChild(el("p", "help keys", "From the keyboard: o, t, a, d or c. Typing in the message box? Press Esc first."));
      } else {
        li.appendChild(el("p", "answer-note", "Waiting for the workspace owner to answer."));
      }
    }
    var err = el("p", "approval-error error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    li.appendChild(err);

    var old = list.querySelector(".approval[data-approval=\"" + id + "\"]");
    if (old) {
      li.id = old.id;
      li.dataset.seq = old.dataset.seq || "";
      var hadFocus = old.contains(document.activeElement);
      old.replaceWith(li);
      if (hadFocus) li.focus();
    } else {
      li.id = "event-" + ev.seq;
      li.dataset.seq = String(ev.seq);
      append(li);
      if (pending && canApprove) focusPrompt(li);
    }
  }

  function editable(node) {
    return node && node.nodeType === 1 && (node.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(node.tagName));
  }

  // focusPrompt moves the focus to a new approval, unless the person is
  // typing somewhere (a key meant for the text must not answer it).
  function focusPrompt(li) {
    if (editable(document.activeElement)) return;
    li.focus({ preventScroll: true });
    li.scrollIntoView({ block: "nearest" });
  }

  // allowance is the item of a call that ran without asking: the
  // allowance that let it, as threads_pages.go shows it.
  function allowance(ev) {
    var a = ev.body || {};
    var always = a.scope === "always", byDefault = a.scope === "sandbox_default";
    var li = el("li", "allowance");
    li.dataset.callId = String(a.call_id || "");
    li.dataset.scope = always ? "always" : byDefault ? "sandbox_default" : "thread";
    li.dataset.seq = String(ev.seq);
    li.id = "event-" + ev.seq;
    li.appendChild(badge("passed", "Ran without asking"));
    li.appendChild(document.createTextNode(" "));
    if (a.plugin) li.appendChild(el("span", "tool-kind", "plugin "));
    li.appendChild(el("code", "tool-server", visible(String(a.server || ""))));
    li.appendChild(document.createTextNode(" / "));
    li.appendChild(el("code", "tool-name", visible(String(a.tool || ""))));
    li.appendChild(document.createTextNode(": "));
    var by = a.set_by ? visible(String(a.set_by)) : "someone not recorded";
    var at = a.set_at ? when(a.set_at) : "";
    var given = at ? ", " + at : "";
    li.appendChild(el("span", "allowed-by", (always ? "always allowed, in every thread" : byDefault ? "allowed by the owner's default for sandboxed threads" : "allowed in this thread") + ", by " + by + given));
    li.appendChild(document.createTextNode(", for the tool "));
    li.appendChild(el("code", "hash", visible(String(a.tool_hash || ""))));
    li.appendChild(document.createTextNode(a.plugin ? " of the plugin " : a.sandbox ? " of the backend " : " of the server "));
    li.appendChild(el("code", "hash", visible(String(a.fingerprint || ""))));
    li.appendChild(document.createTextNode(". "));
    var link = el("a", "", byDefault ? "Sandbox settings" : "Allowances");
    link.href = byDefault ? "/sandbox" : "/allowances";
    li.appendChild(link);
    return li;
  }

  // ran is the item of a call a sandbox backend ran, as threads_pages.go
  // shows it.
  function ran(ev) {
    var b = ev.body || {};
    var li = el("li", "ran");
    li.dataset.callId = String(b.call_id || "");
    li.dataset.backend = visible(String(b.backend || ""));
    li.dataset.outcome = visible(String(b.outcome || ""));
    li.dataset.seq = String(ev.seq);
    li.id = "event-" + ev.seq;
    li.appendChild(el("code", "tool-name", visible(String(b.name || ""))));
    li.appendChild(document.createTextNode(" ran in a guest on "));
    li.appendChild(el("code", "backend", visible(String(b.backend || ""))));
    li.appendChild(document.createTextNode(": "));
    li.appendChild(el("span", "outcome", visible(String(b.outcome || ""))));
    return li;
  }

  function runEnd(b) {
    var li = el("li", "run-end", "Run " + (Number(b.run) ? runNumber(b.run) : "?") + " " + String(b.status) + (b.error ? ": " + visibleText(String(b.error)) : ""));
    li.dataset.status = String(b.status);
    return li;
  }

  function setRun(status, error) {
    status = String(status || "none");
    runStatus.textContent = status;
    runStatus.dataset.status = status;
    runError.textContent = error ? visibleText(String(error)) : "";
    if (cancel) cancel.hidden = !(status === "running" || status === "waiting_approval");
    if (retry) retry.hidden = !(status === "failed" || status === "interrupted");
  }

  // lastRun is the latest run the stream told of: a run's answer to the
  // request that started it may come after the stream told its end.
  var lastRun = 0;

  // started shows the run a request started, unless the stream told of it.
  function started(res) {
    var run = res.data || {};
    if (run.status && !(Number(run.id) <= lastRun)) setRun(run.status, run.error);
  }

  function setUsage(b) {
    var p = Number(b.total_prompt_tokens) || 0, c = Number(b.total_completion_tokens) || 0;
    usage.dataset.prompt = String(p);
    usage.dataset.completion = String(c);
    usage.textContent = "Tokens: " + p + " prompt, " + c + " completion";
  }

  function handle(ev) {
    if (!ev || typeof ev.seq !== "number" || ev.seq <= lastSeq) return;
    lastSeq = ev.seq;
    var b = ev.body || {};
    switch (ev.kind) {
    case "message":
      if (b.role === "assistant") dropStreaming();
      append(message(ev));
      break;
    case "run":
      lastRun = Math.max(lastRun, Number(b.run) || 0);
      if (Number(b.run)) runNumber(b.run);
      setRun(b.status, b.error);
      if (endedRun[b.status]) {
        dropStreaming();
        var li = runEnd(b);
        li.id = "event-" + ev.seq;
        li.dataset.seq = String(ev.seq);
        append(li);
      }
      break;
    case "approval":
      if (Number(b.run)) runNumber(b.run);
      approval(ev);
      break;
    case "allowance":
      append(allowance(ev));
      break;
    case "call":
      append(ran(ev));
      break;
    case "usage":
      setUsage(b);
      break;
    }
  }

  // --- The stream --------------------------------------------------------

  function setLive(state, text) {
    live.dataset.state = state;
    live.textContent = text;
  }

  function parse(e) {
    try { return JSON.parse(e.data); } catch (err) { return null; }
  }

  if (window.EventSource) {
    // The stream starts after the last event the page shows; a reconnect
    // sends Last-Event-ID itself.
    var es = new EventSource(base + "/events?after=" + lastSeq);
    setLive("connecting", "Connecting…");
    es.onopen = function () { setLive("live", "Live"); };
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) setLive("closed", "Not live: reload the page to see what changed.");
      else setLive("reconnecting", "Reconnecting…");
    };
    ["message", "run", "approval", "allowance", "call", "usage"].forEach(function (kind) {
      es.addEventListener(kind, function (e) { handle(parse(e)); });
    });
    es.addEventListener("delta", function (e) {
      var d = parse(e);
      if (d && typeof d.text === "string") delta(d.text);
    });
  }

  // --- Controls ----------------------------------------------------------

  document.querySelectorAll("#thread [data-js]").forEach(function (n) { n.hidden = false; });
  setRun(runStatus.dataset.status, runError.textContent);
  // A thread with no run that ends with a question (a fork) can be run.
  if (retry && retry.dataset.canRetry === "true") retry.hidden = false;

  function answer(li, value) {
    var id = li.dataset.approval;
    if (!/^[0-9]+$/.test(id) || li.dataset.answering) return;
    li.dataset.answering = value;
    var buttons = li.querySelectorAll("button[data-answer]");
    buttons.forEach(function (b) { b.disabled = true; });
    var err = li.querySelector(".approval-error");
    api("POST", "/api/approvals/" + id, { answer: value }).then(function (res) {
      if (res.ok) return; // the approval's next event shows the answer
      delete li.dataset.answering;
      buttons.forEach(function (b) { b.disabled = false; });
      if (err) show(err, failure(res, "The answer was not taken"));
    });
  }

  function newestPending() {
    var all = list.querySelectorAll(".approval[data-status=pending]");
    return all.length ? all[all.length - 1] : null;
  }

  list.addEventListener("click", function (e) {
    var b = e.target.closest("button");
    if (!b || !list.contains(b)) return;
    if (b.dataset.answer) {
      var li = b.closest(".approval[data-status=pending]");
      if (li) answer(li, b.dataset.answer);
    } else if (b.dataset.fork) {
      fork(b);
    } else if (b.dataset.regenerate) {
      regenerate(b);
    } else if (b.dataset.edit) {
      edit(b);
    }
  });

  // Esc leaves a text box of the thread (the message box, an edit), so
  // that the keys answer the pending approval, which gets the focus.
  root.addEventListener("keydown", function (e) {
    if (e.key !== "Escape" || !editable(e.target) || e.isComposing) return;
    e.target.blur();
    var li = newestPending();
    if (li && canApprove) focusPrompt(li);
  });

  document.addEventListener("keydown", function (e) {
    if (!canApprove || e.ctrlKey || e.metaKey || e.altKey || e.repeat || e.isComposing) return;
    var value = keys[e.key];
    if (!value) return;
    var li = e.target.closest ? e.target.closest(".approval[data-status=pending]") : null;
    if (!li) {
      if (editable(e.target)) return;
      li = newestPending();
    }
    if (!li) return;
    e.preventDefault();
    answer(li, value);
  });

  function fork(b) {
    var seq = Number(b.dataset.fork);
    if (!Number.isSafeInteger(seq)) return;
    b.disabled = true;
    api("POST", base + "/fork", { seq: seq }).then(function (res) {
      var id = res.data && res.data.id;
      if (res.ok && Number.isSafeInteger(id)) {
        window.location.assign("/threads/" + id);
        return;
      }
      b.disabled = false;
      show(threadError, failure(res, "The thread was not forked"));
    });
  }

  // toFork goes to the fork a regenerate or an edit made, or shows why
  // none was made.
  function toFork(res, shown, what) {
    var id = res.data && res.data.thread && res.data.thread.id;
    if (res.ok && Number.isSafeInteger(id)) {
      window.location.assign("/threads/" + id);
      return true;
    }
    show(shown, failure(res, what));
    return false;
  }

  // regenerate has the model answer again, in a fork made before the
  // answer.
  function regenerate(b) {
    var seq = Number(b.dataset.regenerate);
    if (!Number.isSafeInteger(seq)) return;
    b.disabled = true;
    api("POST", base + "/regenerate", { seq: seq }).then(function (res) {
      if (!toFork(res, threadError, "The answer was not regenerated")) b.disabled = false;
    });
  }

  // edit opens a box under a user's message with its text, to send it
  // changed in a fork made before it.
  function edit(b) {
    var seq = Number(b.dataset.edit);
    var li = b.closest(".msg");
    if (!Number.isSafeInteger(seq) || !li) return;
    var open = li.querySelector(".edit-form");
    if (open) {
      open.querySelector("textarea").focus();
      return;
    }
    var f = el("form", "edit-form");
    var id = "edit-" + seq;
    var label = el("label", "", "Edit the message: it is sent in a new thread, a fork of this one before it");
    label.htmlFor = id;
    var text = el("textarea", "edit-text");
    text.id = id;
    text.rows = 4;
    text.required = true;
    var shown = li.querySelector(".text");
    text.value = shown ? shown.textContent : "";
    var actions = el("div", "actions");
    var sendEdit = el("button", "primary", "Send in a fork");
    sendEdit.type = "submit";
    var close = el("button", "", "Cancel");
    close.type = "button";
    actions.appendChild(sendEdit);
    actions.appendChild(document.createTextNode(" "));
    actions.appendChild(close);
    var err = el("p", "error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    f.appendChild(label);
    f.appendChild(text);
    f.appendChild(actions);
    f.appendChild(err);
    li.appendChild(f);
    text.focus();
    close.addEventListener("click", function () { f.remove(); });
    text.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        f.requestSubmit();
      }
    });
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      if (!text.value.trim()) return;
      sendEdit.disabled = true;
      show(err, "");
      api("POST", base + "/edit", { seq: seq, prompt: text.value }).then(function (res) {
        if (!toFork(res, err, "The message was not sent")) sendEdit.disabled = false;
      });
    });
  }

  if (retry) {
    retry.addEventListener("click", function () {
      retry.disabled = true;
      show(promptError, "");
      api("POST", base + "/retry", {}).then(function (res) {
        retry.disabled = false;
        if (res.ok) started(res);
        else show(promptError, failure(res, "The run was not started again"));
      });
    });
  }

  if (form) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var text = prompt.value;
      if (!text.trim()) return;
      send.disabled = true;
      show(promptError, "");
      api("POST", base + "/runs", { prompt: text }).then(function (res) {
        send.disabled = false;
        if (res.ok) {
          prompt.value = "";
          started(res);
        } else if (res.status === 409 && res.code === "busy") {
          show(promptError, "A run is still going: wait for it to end, or cancel it.");
        } else {
          show(promptError, failure(res, "The message was not sent"));
        }
      });
    });
    prompt.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
  }

  if (cancel) {
    cancel.addEventListener("click", function () {
      cancel.disabled = true;
      api("POST", base + "/cancel", {}).then(function (res) {
        cancel.disabled = false;
        if (!res.ok) show(promptError, failure(res, "The run was not cancelled"));
      });
    });
  }

  var pendingNow = newestPending();
  if (pendingNow && canApprove) focusPrompt(pendingNow);
})();
