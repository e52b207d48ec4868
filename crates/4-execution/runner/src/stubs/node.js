// toolsmith spare (Node): started inside the tool's sandbox before any call, it has loaded
// nothing of the tool's. While it waits it runs Node's own line reading, JSON and stdout
// writing once on data of its own (what the jsonrpc helper does: their lazily loaded internals
// are then ready), writes "r" on its channel (descriptor 9), reads one line on stdin (the
// call's entry path), writes "g" and runs the entry as the main module, as `node ENTRY` would;
// its exit code goes on the channel too ("x<code>"). The call's input may follow the line at
// once: only the line is read.
'use strict';
{
  const fs = require('fs');
  void process.stdout; void process.stderr; // created as the tool would; stdin stays untouched
  const warm = async () => {
    const { Readable } = require('stream');
    const lines = require('readline').createInterface({ input: Readable.from(['{"a":[1,"b",null]}\n']) });
    for await (const line of lines) JSON.stringify(JSON.parse(line));
    // Nothing is written: an empty write only takes the path a write and its callback take.
    await new Promise((done) => process.stdout.write('', done));
  };
  const start = () => {
    fs.writeSync(9, 'r');
    const buf = Buffer.alloc(4096);
    let got = Buffer.alloc(0);
    while (got.indexOf(10) < 0) {
      let n = 0;
      // Byte by byte: the call's input may follow the line at once.
      try { n = fs.readSync(0, buf, 0, 1, null); } catch (e) { if (e.code === 'EAGAIN') continue; throw e; }
      if (n === 0) process.exit(0); // the server went away
      got = Buffer.concat([got, buf.subarray(0, n)]);
    }
    fs.writeSync(9, 'g');
    // The exit code once every 'exit' listener has run (one may still set process.exitCode).
    const emit = process.emit;
    process.emit = function (event, ...args) {
      const r = emit.call(this, event, ...args);
      if (event === 'exit') {
        // No code of the tool's runs after this: its stdout ends here (not after Node's own
        // teardown, some milliseconds), then its status.
        try { fs.closeSync(1); } catch (e) {}
        try { fs.writeSync(9, 'x' + (process.exitCode ?? args[0] ?? 0) + '\n'); } catch (e) {}
      }
      return r;
    };
    const entry = got.subarray(0, got.indexOf(10)).toString();
    process.argv = [process.argv[0], entry];
    const Module = require('module');
    if (/\.mjs$/.test(entry)) Module.runMain(entry); else Module._load(entry, null, true);
  };
  // In a task of its own, as the main script's code runs: what the entry throws at once is an
  // uncaught exception, not a rejected promise.
  warm().then(() => setImmediate(start), () => setImmediate(start));
}
