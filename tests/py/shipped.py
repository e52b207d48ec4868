"""What ships works on a first attempt (issue 40), through the built binary and the official
Python SDK, each case in this one fresh server process:

- an HTTP MCP entry (a streamable-HTTP server made with the SDK, on 127.0.0.1) imported with
  `import_mcp`, approved by a person in the terminal (`toolsmith approve`): its tools are listed
  once the approval is made (the server watches the person's decisions), then called: it
  answers (no TLS provider panic, no call left without an answer);
- `build_tool` with `language: "javascript"` (and the spelling "js") builds a component, one
  returning an object under its output schema, one the natural form (a plain number, no output
  schema); the schema lists the languages as an enum and the description names what it makes;
- JSON objects keep their key order from the client to a script tool and back, in the text and
  in `structuredContent`, and through the HTTP entry;
- the history family: `tool_history`, `rollback_tool` (the first version answers again),
  `delete_tool` and `restore_tool`, `undo_session` (the session's tools are gone).

Usage: shipped.py --toolsmith BIN --toolbox DIR --server PY
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters
from checks import expect, text_of

KEYS = """import json, sys
a = json.load(sys.stdin)
print(json.dumps({"order": list(a["d"].keys()), "d": a["d"]}))
"""

ORDERED = {"p": 1, "A": {"z": 1, "b": 2, "a": 3}, "B": 3, "_": 4, "a": 5}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listening(port, proc, deadline=60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        expect(proc.poll() is None, "the HTTP MCP server ended before it listened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    expect(False, f"the HTTP MCP server did not listen on {port}")


def keys_in_text(text):
    """The keys of every object in a JSON text, in the order they are written."""
    out = []

    def hook(pairs):
        out.append([k for k, _ in pairs])
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return out


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--server", required=True)
    a = ap.parse_args()
    summary = {}

    port = free_port()
    http = subprocess.Popen([sys.executable, a.server, str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(port, http)
        server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"],
                                       env=dict(os.environ))
        async with Client(server, mode="legacy", cache=None, read_timeout_seconds=300) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            build = tools["build_tool"]
            lang = build.input_schema["properties"]["language"]
            summary["build_language_schema"] = lang
            summary["build_description"] = build.description

            # An HTTP entry: imported, approved in the terminal, called.
            r = await client.call_tool("import_mcp", {"name": "remote", "url": f"http://127.0.0.1:{port}/mcp"})
            summary["import"] = {"is_error": r.is_error, "text": text_of(r)[:400]}
            approve = subprocess.run([a.toolsmith, "--toolbox", a.toolbox, "approve", "remote"],
                                     capture_output=True, text=True, env=dict(os.environ), timeout=120)
            expect(approve.returncode == 0, f"toolsmith approve remote: {approve.stdout}{approve.stderr}")
            # Its tools are listed once it could be reached (a person approved it).
            deadline = time.monotonic() + 60
            while True:
                names = [t.name for t in (await client.list_tools()).tools]
                summary["http_tools"] = sorted(n for n in names if n.startswith("remote__"))
                if summary["http_tools"] or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            summary["http_tools_waited"] = round(60 - (deadline - time.monotonic()), 1)
            r = await asyncio.wait_for(client.call_tool("call_tool", {"name": "remote__echo", "arguments": {"text": "over http"}}), 120)
            summary["http_call"] = {"is_error": r.is_error, "text": text_of(r)[:400]}
            r = await asyncio.wait_for(client.call_tool("remote__keys", {"d": ORDERED}), 120)
            expect(not r.is_error, f"remote__keys: {text_of(r)} {json.dumps(summary)}")
            summary["http_keys"] = {"text": keys_in_text(text_of(r)),
                                    "structured": list((r.structured_content or {}).get("order", [])),
                                    "structured_d": list(((r.structured_content or {}).get("d") or {}).keys())}

            # Key order through a script tool, both ways.
            r = await client.call_tool("register_script", {
                "name": "keys", "description": "The object's keys in the order they arrived",
                "language": "python", "protocol": "plain", "source": KEYS,
                "input_schema": {"type": "object", "properties": {"d": {"type": "object"}}, "required": ["d"]}})
            expect(not r.is_error, f"register_script keys: {text_of(r)}")
            r = await client.call_tool("keys", {"d": ORDERED})
            expect(not r.is_error, f"keys: {text_of(r)}")
            sc = r.structured_content or {}
            summary["script_keys"] = {"text": keys_in_text(text_of(r)), "order": sc.get("order"),
                                      "structured": list(sc.keys()), "structured_d": list((sc.get("d") or {}).keys()),
                                      "structured_inner": list(((sc.get("d") or {}).get("A") or {}).keys())}

            # A JavaScript component over MCP, by its name and by a spelling of it.
            for name, spelling in [("js_add", "javascript"), ("js_sub", "js")]:
                op = "+" if name == "js_add" else "-"
                args = {
                    "name": name, "language": spelling, "description": f"a {op} b",
                    "input_schema": {"type": "object", "required": ["a", "b"],
                                     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}
                if name == "js_add":
                    # An object result with its output schema.
                    args["source"] = f"export function call(a, b) {{\n  return {{ value: a {op} b }};\n}}\n"
                    args["output_schema"] = {"type": "object", "required": ["value"],
                                             "properties": {"value": {"type": "integer"}}}
                else:
                    # The natural form: a plain number, no output schema.
                    args["source"] = f"export function call(a, b) {{\n  return a {op} b;\n}}\n"
                r = await client.call_tool("build_tool", args)
                summary[f"build_{name}"] = {"is_error": r.is_error, "text": text_of(r)[:600]}
                if not r.is_error:
                    r = await client.call_tool(name, {"a": 7, "b": 2})
                    summary[f"call_{name}"] = {"is_error": r.is_error, "text": text_of(r)[:300]}
            r = await client.call_tool("build_tool", {"name": "cobol_x", "language": "cobol", "description": "x", "source": "x"})
            summary["build_cobol"] = {"is_error": r.is_error, "text": text_of(r)[:600]}

            # The history family, each meta-tool as an AI calls it: a change rolled back, a
            # deletion restored, the session's changes undone.
            def src(v):
                return f"import json\nprint(json.dumps({{'v': {v}}}))\n"
            for v in (1, 2):
                r = await client.call_tool("register_script", {
                    "name": "hist", "description": "Says its version", "language": "python",
                    "protocol": "plain", "source": src(v)})
                expect(not r.is_error, f"register_script hist v{v}: {text_of(r)}")
            r = await client.call_tool("tool_history", {"name": "hist"})
            versions = (r.structured_content or {}).get("versions") or []
            expect(len(versions) == 2, f"tool_history: {text_of(r)}")
            history = {"versions": len(versions)}
            r = await client.call_tool("rollback_tool", {"name": "hist", "revision": versions[-1]["commit"]})
            history["rollback"] = {"is_error": r.is_error, "text": text_of(r)[:300]}
            history["after_rollback"] = (await client.call_tool("hist", {})).structured_content
            r = await client.call_tool("delete_tool", {"name": "hist"})
            history["delete"] = {"is_error": r.is_error, "text": text_of(r)[:300]}
            history["listed_after_delete"] = "hist" in [t.name for t in (await client.list_tools()).tools]
            r = await client.call_tool("restore_tool", {"name": "hist"})
            history["restore"] = {"is_error": r.is_error, "text": text_of(r)[:300]}
            history["after_restore"] = (await client.call_tool("hist", {})).structured_content
            r = await client.call_tool("undo_session", {"session": versions[0]["session"]})
            history["undo"] = {"is_error": r.is_error, "text": text_of(r)[:300]}
            history["listed_after_undo"] = "hist" in [t.name for t in (await client.list_tools()).tools]
            summary["history"] = history
    finally:
        http.kill()
        http.wait()
    print(json.dumps(summary))


asyncio.run(main())
