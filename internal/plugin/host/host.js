// Zero's plugin host: the fixed program that runs one plugin's entry module
// in its sandbox and speaks a minimal MCP over stdio (one JSON-RPC message a
// line). Its SHA-256 is part of what a person approves when they enable a
// plugin. Run as: node [permission flags] host.js PLUGIN_DIR ENTRY CONFIG,
// CONFIG being JSON: {"secrets": [names], "socket": path or "", "workspace":
// path}.
//
// This file is no security boundary: the plugin's code runs in this same
// process and can change anything here. What a plugin may do is bounded
// outside it, by bubblewrap, Node's permission model, Zero's network broker
// and cgroups. The tools Zero offers come from the manifest, never from here:
// tools/list answers an empty list.
'use strict';

const path = require('node:path');
const readline = require('node:readline');
const util = require('node:util');
// Loaded at the first ctx.fetch: a plugin that never fetches starts sooner.
const lazy = (name) => { let m; return () => (m ??= require(name)); };
const http = lazy('node:http');
const net = lazy('node:net');
const tls = lazy('node:tls');
const { pathToFileURL } = require('node:url');

const PROTOCOL = '2025-11-25';
const PROTOCOLS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const MAX_BODY = 16 << 20; // bytes of one response to ctx.fetch
const FETCH_TIMEOUT = 30000; // milliseconds of one ctx.fetch

const [pluginDir, entry, configText] = process.argv.slice(2);
const config = JSON.parse(configText);

// The granted secrets: read once, then gone from the environment, so that a
// child process does not inherit them.
const secrets = {};
for (const name of config.secrets) {
  if (Object.hasOwn(process.env, name)) {
    secrets[name] = process.env[name];
  }
  delete process.env[name];
}
Object.freeze(secrets);

// stdout carries the protocol: what the plugin prints goes to stderr.
const stdout = process.stdout;
const printToStderr = (...args) => process.stderr.write(util.format(...args) + '\n');
console.log = printToStderr;
console.info = printToStderr;
console.debug = printToStderr;
Object.defineProperty(process, 'stdout', { value: process.stderr, configurable: true });

function send(message) {
  stdout.write(JSON.stringify(message) + '\n');
}

function reply(id, result) {
  try {
    send({ jsonrpc: '2.0', id, result });
  } catch (err) {
    send({ jsonrpc: '2.0', id, result: failure('the result cannot be sent: ' + describe(err)) });
  }
}

function replyError(id, code, message) {
  send({ jsonrpc: '2.0', id, error: { code, message } });
}

function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

function failure(text) {
  return { content: [{ type: 'text', text }], isError: true };
}

// The plugin's module, loaded once, as it starts; a failure is the result of
// every call.
const loaded = import(pathToFileURL(path.join(pluginDir, entry)).href);
loaded.catch(() => {});

process.on('unhandledRejection', (err) => printToStderr('unhandled rejection in the plugin:', err));

function exported(mod, name) {
  if (typeof name !== 'string') {
    return undefined;
  }
  if (name !== 'default' && Object.hasOwn(mod, name)) {
    return mod[name];
  }
  const d = mod.default;
  if (d !== null && (typeof d === 'object' || typeof d === 'function') && Object.hasOwn(d, name)) {
    return d[name];
  }
  return undefined;
}

function toResult(value) {
  if (typeof value === 'string') {
    return { content: [{ type: 'text', text: value }] };
  }
  if (value !== null && typeof value === 'object' && Array.isArray(value.content)) {
    return value.isError === true ? { content: value.content, isError: true } : { content: value.content };
  }
  if (value === undefined || value === null) {
    return { content: [] };
  }
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

const ctx = Object.freeze({ secrets, fetch: brokerFetch, workspace: config.workspace });

async function callTool(params) {
  const name = params?.name;
  let mod;
  try {
    mod = await loaded;
  } catch (err) {
    return failure(`loading ${entry}: ${describe(err)}`);
  }
  const fn = exported(mod, name);
  if (typeof fn !== 'function') {
    return failure(`${entry} exports no function ${JSON.stringify(name)}`);
  }
  try {
    return toResult(await fn(params?.arguments ?? {}, ctx));
  } catch (err) {
    return failure(describe(err));
  }
}

async function handle(message) {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    replyError(null, -32600, 'invalid request');
    return;
  }
  const { id, method, params } = message;
  if (id === undefined || id === null) {
    return; // a notification: initialized, cancelled
  }
  switch (method) {
    case 'initialize':
      reply(id, {
        protocolVersion: PROTOCOLS.includes(params?.protocolVersion) ? params.protocolVersion : PROTOCOL,
        capabilities: { tools: {} },
        serverInfo: { name: 'zero-plugin-host', version: '1' },
      });
      return;
    case 'ping':
      reply(id, {});
      return;
    case 'tools/list':
      reply(id, { tools: [] });
      return;
    case 'tools/call':
      reply(id, await callTool(params));
      return;
    default:
      if (typeof method === 'string') {
        replyError(id, -32601, `method not found: ${method}`);
      }
  }
}

// The requests being answered: when stdin closes, the host exits once they
// are, so that a client may send its last request and close (Zero's
// sandboxed threads send a whole session at once).
const answering = new Set();
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (line.trim() === '') {
    return;
  }
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    replyError(null, -32700, 'parse error');
    return;
  }
  const answer = handle(message).catch((err) => printToStderr('zero-plugin-host:', err));
  answering.add(answer);
  answer.finally(() => answering.delete(answer));
});
lines.on('close', () => Promise.allSettled(answering).then(() => process.exit(0)));

// ctx.fetch(url, {method, headers, body}): an HTTP request to a granted host,
// through a CONNECT tunnel of Zero's broker (then TLS, for https). Redirects
// are not followed. It resolves to {url, status, statusText, ok, headers,
// text(), json(), arrayBuffer()}.
async function brokerFetch(input, init = {}) {
  const url = new URL(input instanceof URL ? input.href : String(input));
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`ctx.fetch: ${url.protocol} URLs are not supported, only https and http`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('ctx.fetch: a URL with credentials is refused');
  }
  if (!config.socket) {
    throw new Error('ctx.fetch: this plugin has no network (network.hosts is not granted)');
  }
  const secure = url.protocol === 'https:';
  const authority = `${url.hostname}:${url.port || (secure ? '443' : '80')}`;
  const method = String(init.method ?? 'GET').toUpperCase();
  const headers = {};
  for (const [name, value] of new Headers(init.headers ?? {})) {
    headers[name] = value;
  }
  let body = init.body;
  if (body === undefined || body === null) {
    body = undefined;
  } else if (typeof body === 'string') {
    body = Buffer.from(body);
  } else if (ArrayBuffer.isView(body)) {
    body = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  } else if (body instanceof ArrayBuffer) {
    body = Buffer.from(body);
  } else {
    throw new TypeError('ctx.fetch: the body must be a string or bytes');
  }
  headers.host = url.host;
  headers.connection = 'close';
  if (body !== undefined) {
    headers['content-length'] = String(body.length);
  }
  const raw = await tunnel(authority);
  const conn = secure ? await startTLS(raw, url.hostname, authority) : raw;
  return exchange(conn, url, method, headers, body);
}

// tunnel asks the broker for a tunnel to authority and resolves to the
// socket, ready for the request; a refusal rejects with the broker's reason.
function tunnel(authority) {
  return new Promise((resolve, reject) => {
    const socket = net().connect({ path: config.socket });
    let head = Buffer.alloc(0);
    const fail = (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`ctx.fetch ${authority}: Zero's broker did not answer in time`)), FETCH_TIMEOUT);
    socket.on('error', (err) => fail(new Error(`ctx.fetch ${authority}: ${describe(err)}`)));
    socket.on('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    const onHead = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16384) {
          fail(new Error(`ctx.fetch ${authority}: the broker's answer is too long`));
        }
        return;
      }
      socket.removeListener('data', onHead);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1]);
      let rest = head.subarray(end + 4);
      if (status === 200) {
        clearTimeout(timer);
        socket.pause();
        if (rest.length > 0) {
          socket.unshift(rest);
        }
        resolve(socket);
        return;
      }
      // The broker explains a refusal in the body, then closes.
      socket.on('data', (more) => {
        if (rest.length < 4096) {
          rest = Buffer.concat([rest, more]);
        }
      });
      socket.on('end', () => {
        const why = rest.toString('utf8').replace(/^zero: /, '').trim();
        fail(new Error(`ctx.fetch ${authority}: refused by Zero (${status || 'no status'}): ${why}`));
      });
    };
    socket.on('data', onHead);
  });
}

function startTLS(socket, hostname, authority) {
  return new Promise((resolve, reject) => {
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    const options = { socket, host, ALPNProtocols: ['http/1.1'] };
    if (net().isIP(host) === 0) {
      options.servername = host;
    }
    const conn = tls().connect(options, () => resolve(conn));
    conn.once('error', (err) => {
      conn.destroy();
      reject(new Error(`ctx.fetch ${authority}: TLS: ${describe(err)}`));
    });
  });
}

function exchange(conn, url, method, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http().request({ method, path: url.pathname + url.search, headers, setHost: false, createConnection: () => conn });
    // The tunnel was paused once the broker answered; http listens now.
    req.once('socket', (socket) => socket.resume());
    req.setTimeout(FETCH_TIMEOUT, () => req.destroy(new Error(`ctx.fetch ${url.origin}: no answer in time`)));
    req.on('error', (err) => reject(new Error(`ctx.fetch ${url.origin}: ${describe(err)}`)));
    req.on('response', (res) => {
      const chunks = [];
      let size = 0;
      res.on('data', (chunk) => {
        size += chunk.length;
        if (size > MAX_BODY) {
          res.destroy(new Error(`the response is over ${MAX_BODY} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) => reject(new Error(`ctx.fetch ${url.origin}: ${describe(err)}`)));
      res.on('end', () => resolve(response(url, res, Buffer.concat(chunks))));
    });
    req.end(body);
  });
}

function response(url, res, data) {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
    } catch {
      // a header the Headers class refuses is left out
    }
  }
  return Object.freeze({
    url: url.href,
    status: res.statusCode,
    statusText: res.statusMessage ?? '',
    ok: res.statusCode >= 200 && res.statusCode < 300,
    headers,
    text: async () => data.toString('utf8'),
    json: async () => JSON.parse(data.toString('utf8')),
    arrayBuffer: async () => data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength),
  });
}
