#!/usr/bin/env python3
"""{{name}}: {{description}}

Calling convention (toolsmith, kind = "script", protocol = "jsonrpc"):
- the host writes ONE JSON-RPC request line on stdin:
  {"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{...},"context":{...}}}
  `arguments` match input_schema; `context` holds {"tool", "roots", "capabilities"}.
- write newline-delimited JSON-RPC messages on stdout; the last one is the response to id 0:
  {"jsonrpc":"2.0","id":0,"result":...} or {"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"..."}}
  The helper below does this: return a value from run() or raise an exception.
- log(msg) sends a "log" notification, progress(done, total, message) a "progress" one; call_host(method, params) sends a request to the host
  (memory/get, memory/set, memory/list, memory/delete, tools/call, resources/read,
  elicitation/create, sampling/createMessage) and returns its result. stderr is logged too.
- with `worker = true` in tool.toml the same process serves many calls (ids 1, 2, ...): the
  helper loops; keep expensive setup at module level, and no per-call state in globals.
Never print anything else on stdout. Full protocol: the toolsmith://guide resource (docs/script-protocol.md in the toolsmith repository).
"""


def run(args, ctx):
    text = args.get("text")
    if not isinstance(text, str):
        raise ValueError("missing string argument `text`")
    return {"message": f"Hello, {text}!"}


# --- toolsmith jsonrpc helper (keep as is) ---------------------------------------------------
import json, sys, itertools
_ids = itertools.count(1)
def _send(msg):
    sys.stdout.write(json.dumps(msg, ensure_ascii=False) + "\n"); sys.stdout.flush()
def log(msg, level="info"):
    _send({"jsonrpc": "2.0", "method": "log", "params": {"level": level, "message": str(msg)}})
def progress(done, total=None, message=None):
    _send({"jsonrpc": "2.0", "method": "progress", "params": {"progress": done, "total": total, "message": message}})
def call_host(method, params=None):
    cid = f"c{next(_ids)}"
    _send({"jsonrpc": "2.0", "id": cid, "method": method, "params": params or {}})
    while True:
        line = sys.stdin.readline()
        if not line:
            raise RuntimeError(f"host closed stdin while waiting for {method}")
        resp = json.loads(line)
        if resp.get("id") == cid:
            if "error" in resp:
                raise RuntimeError(resp["error"].get("message", "host error"))
            return resp.get("result")
def _answer(req):
    params = req.get("params") or {}
    try:
        _send({"jsonrpc": "2.0", "id": req.get("id", 0), "result": run(params.get("arguments") or {}, params.get("context") or {})})
    except Exception as e:  # any failure becomes a JSON-RPC error response
        _send({"jsonrpc": "2.0", "id": req.get("id", 0), "error": {"code": -32000, "message": str(e)}})
def _main():
    import os
    while True:  # one request; a warm worker (TOOLSMITH_WORKER=1) serves one after another
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            _answer(json.loads(line))
            if os.environ.get("TOOLSMITH_WORKER") != "1":
                return
if __name__ == "__main__":
    _main()
