#!/usr/bin/env python3
"""json_format: pretty-print or minify a JSON document.

toolsmith script tool, protocol = "jsonrpc": one request line arrives on stdin
({"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{...},"context":{...}}})
and the response to id 0 is written on stdout. run() returns the result or raises.

Arguments: json (string, required), indent (integer 0..8, default 2; 0 = minify),
sort_keys (boolean, default false). Result: {"formatted": "..."}.
"""
import json


def run(args, ctx):
    source = args.get("json")
    if not isinstance(source, str):
        raise ValueError("missing string argument `json`")
    indent = args.get("indent", 2)
    if isinstance(indent, bool) or not isinstance(indent, int) or not 0 <= indent <= 8:
        raise ValueError("`indent` must be an integer between 0 and 8")
    sort_keys = args.get("sort_keys", False)
    if not isinstance(sort_keys, bool):
        raise ValueError("`sort_keys` must be a boolean")
    try:
        value = json.loads(source)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON: {e}") from None
    if indent == 0:
        formatted = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":"))
    else:
        formatted = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, indent=indent)
    return {"formatted": formatted}


# --- toolsmith jsonrpc helper (keep as is) ---------------------------------------------------
import json, sys, itertools
_ids = itertools.count(1)
def _send(msg):
    sys.stdout.write(json.dumps(msg, ensure_ascii=False) + "\n"); sys.stdout.flush()
def log(msg, level="info"):
    _send({"jsonrpc": "2.0", "method": "log", "params": {"level": level, "message": str(msg)}})
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
def _main():
    req = json.loads(sys.stdin.readline())
    params = req.get("params") or {}
    try:
        _send({"jsonrpc": "2.0", "id": req.get("id", 0), "result": run(params.get("arguments") or {}, params.get("context") or {})})
    except Exception as e:  # any failure becomes a JSON-RPC error response
        _send({"jsonrpc": "2.0", "id": req.get("id", 0), "error": {"code": -32000, "message": str(e)}})
if __name__ == "__main__":
    _main()
