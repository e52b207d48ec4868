#!/usr/bin/env node
// {{name}}: {{description}}
//
// Calling convention (toolsmith, kind = "script", protocol = "jsonrpc"):
// - the host writes ONE JSON-RPC request line on stdin:
//   {"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{...},"context":{...}}}
//   `arguments` match input_schema; `context` holds {tool, roots, capabilities}.
// - write newline-delimited JSON-RPC messages on stdout; the last one is the response to id 0:
//   {"jsonrpc":"2.0","id":0,"result":...} or {"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"..."}}
//   The helper below does this: return (or resolve) a value from run() or throw.
// - log(msg) sends a "log" notification, progress(done, total, message) a "progress" one;
//   await callHost(method, params) sends a request to the
//   host (memory/get, memory/set, memory/list, memory/delete, tools/call, resources/read,
//   elicitation/create, sampling/createMessage) and resolves to its result. stderr is logged too.
// - with `worker = true` in tool.toml the same process serves many calls (ids 1, 2, ...).
// Never print anything else on stdout (use console.error for debugging).
// Full protocol: the toolsmith://guide resource (docs/script-protocol.md in the toolsmith repository).
'use strict';

async function run(args, ctx) {
  if (typeof args.text !== 'string') throw new Error('missing string argument `text`');
  return { message: `Hello, ${args.text}!` };
}

// --- toolsmith jsonrpc helper (keep as is) ---------------------------------------------------
const lines = require('readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let nextId = 1;
const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
function log(message, level = 'info') {
  send({ jsonrpc: '2.0', method: 'log', params: { level, message: String(message) } });
}
function progress(done, total, message) {
  send({ jsonrpc: '2.0', method: 'progress', params: { progress: done, total, message } });
}
async function callHost(method, params = {}) {
  const id = `c${nextId++}`;
  send({ jsonrpc: '2.0', id, method, params });
  for (;;) {
    const { value, done } = await lines.next();
    if (done) throw new Error(`host closed stdin while waiting for ${method}`);
    const resp = JSON.parse(value);
    if (resp.id !== id) continue;
    if (resp.error) throw new Error(resp.error.message || 'host error');
    return resp.result;
  }
}
(async () => {
  // One request; a warm worker (TOOLSMITH_WORKER=1) serves one after another.
  for (;;) {
    const { value, done } = await lines.next();
    if (done) break;
    if (!value.trim()) continue;
    const req = JSON.parse(value);
    const { arguments: args = {}, context: ctx = {} } = req.params || {};
    let resp;
    try {
      resp = { jsonrpc: '2.0', id: req.id ?? 0, result: (await run(args, ctx)) ?? null };
    } catch (e) {
      resp = { jsonrpc: '2.0', id: req.id ?? 0, error: { code: -32000, message: e && e.message ? e.message : String(e) } };
    }
    if (process.env.TOOLSMITH_WORKER === '1') { send(resp); continue; }
    process.stdout.write(JSON.stringify(resp) + '\n', () => process.exit(0));
    return;
  }
  process.exit(0);
})();
