#!/usr/bin/env node
// slugify: turn a text into a URL slug (lowercase ASCII letters and digits separated by dashes).
//
// toolsmith script tool, protocol = "jsonrpc": one request line arrives on stdin
// ({"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{...},"context":{...}}})
// and the response to id 0 is written on stdout. run() returns the result or throws.
//
// Accents are stripped through Unicode NFKD decomposition ("é" -> "e" + combining accent,
// the accent is dropped); any run of other characters becomes a single dash.
'use strict';

function slugify(text) {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // combining diacritical marks
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

async function run(args, ctx) {
  if (typeof args.text !== 'string') throw new Error('missing string argument `text`');
  return { slug: slugify(args.text) };
}

// --- toolsmith jsonrpc helper (keep as is) ---------------------------------------------------
const lines = require('readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let nextId = 1;
const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
function log(message, level = 'info') {
  send({ jsonrpc: '2.0', method: 'log', params: { level, message: String(message) } });
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
  const req = JSON.parse((await lines.next()).value);
  const { arguments: args = {}, context: ctx = {} } = req.params || {};
  let resp;
  try {
    resp = { jsonrpc: '2.0', id: req.id ?? 0, result: (await run(args, ctx)) ?? null };
  } catch (e) {
    resp = { jsonrpc: '2.0', id: req.id ?? 0, error: { code: -32000, message: e && e.message ? e.message : String(e) } };
  }
  process.stdout.write(JSON.stringify(resp) + '\n', () => process.exit(0));
})();
