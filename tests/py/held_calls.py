"""A held tool called through every entry point an MCP client has, with the official Python
SDK against `toolsmith serve`: tools/call, the `call_tool` meta-tool, a stored pipeline's step,
a stored script's nested call, `execute_code` (Python and JavaScript), and the examples gate
of a new pipeline and of a new script. Each must be refused as held; the test that runs this
checks the answers.

Usage: held_calls.py --toolsmith BIN --toolbox DIR --held NAME
Prints one JSON line on stdout: {entry point: {"is_error": bool, "text": str}}.
"""
import argparse
import asyncio
import json
import os

from mcp import Client, StdioServerParameters
from checks import text_of

NESTED = """import json, sys
req = json.loads(sys.stdin.readline())
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
send({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "%s", "arguments": req["params"]["arguments"]}})
resp = json.loads(sys.stdin.readline())
if "error" in resp:
    send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": resp["error"]["message"]}})
else:
    send({"jsonrpc": "2.0", "id": req["id"], "result": resp["result"]})
"""


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--held", required=True)
    a = ap.parse_args()
    held = a.held
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    out = {}

    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        async def call(key, name, args):
            try:
                r = await client.call_tool(name, args)
                out[key] = {"is_error": bool(r.is_error), "text": text_of(r)}
            except Exception as e:  # noqa: BLE001 - a refusal as a protocol error is an answer too
                out[key] = {"is_error": True, "text": str(e)}

        arguments = {"text": "hi"}
        await call("tools/call", held, arguments)
        await call("call_tool", "call_tool", {"name": held, "arguments": arguments})
        await call("pipeline step", "via_pipe", arguments)
        await call("nested call", "via_nest", arguments)
        await call("execute_code python", "execute_code",
                   {"language": "python", "code": f"return tools.call({held!r}, {{'text': 'hi'}})"})
        await call("execute_code javascript", "execute_code",
                   {"language": "javascript", "code": f"return await tools.call({held!r}, {{text: 'hi'}});"})
        await call("examples gate (pipeline)", "pipeline", {
            "action": "create", "name": "new_pipe", "description": "Calls the held tool as its step",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "steps": [{"tool": held, "args": {"text": "$input.text"}}],
            "examples": [{"input": arguments, "output": {"echo": arguments}}],
        })
        await call("examples gate (script)", "register_script", {
            "name": "new_nest", "description": "Calls the held tool from its code",
            "language": "python", "protocol": "jsonrpc", "source": NESTED % held,
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "examples": [{"input": arguments, "output": {"echo": arguments}}],
        })
        names = sorted(t.name for t in (await client.list_tools()).tools)
    print(json.dumps({"calls": out, "tools": names}, ensure_ascii=False))


asyncio.run(main())
