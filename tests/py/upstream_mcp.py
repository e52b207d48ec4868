"""Other MCP servers as tools in the toolbox (issue 28), through the official Python SDK: real
servers nobody here wrote (@modelcontextprotocol/server-everything and server-filesystem from
npm, mcp-server-time from PyPI; their packages pre-fetched by scripts/setup.sh). The toolbox
already holds `time` and `files` (added with `toolsmith add-mcp` by the test); here the AI
adds `everything` with `import_mcp`, lists and searches their tools, calls them directly,
with `call_tool`, from `execute_code` and from a pipeline that mixes a stored script with an
upstream tool; the `everything` server is killed and the next call names the entry, the one
after works again; an HTTP entry to an unapproved host is refused before anything connects;
a hand edit of `files/tool.toml` is picked up by the watcher (one list_changed, the new tool
list); the imported skill is served through the skills extension.

Usage: upstream_mcp.py --toolsmith BIN --toolbox DIR
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

from mcp import Client, StdioServerParameters, types
from pydantic import TypeAdapter
from checks import fail, expect, text_of


RAW = TypeAdapter(dict)

SHOUT = """import json, sys
a = json.load(sys.stdin)
print(json.dumps({"shout": a["text"].upper()}))
"""


def listener():
    """A loopback port that counts the connections made to it (none may be)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    seen = []

    def accept():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            seen.append(1)
            c.close()

    threading.Thread(target=accept, daemon=True).start()
    return s.getsockname()[1], seen


def server_pids(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    changes = []

    async def on_message(msg):
        method = getattr(msg, "method", None) or getattr(getattr(msg, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            changes.append(time.monotonic())

    summary = {}
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=180,
                      message_handler=on_message) as client:
        # Add: the AI adds a server from npm with import_mcp.
        r = await client.call_tool("import_mcp", {
            "name": "everything", "package": "npm:@modelcontextprotocol/server-everything@2026.8.31"})
        expect(not r.is_error, f"import_mcp: {text_of(r)}")
        summary["import_mcp"] = r.structured_content

        # List: tools/list, list_tools and search_tools show the servers' tools.
        names = [t.name for t in (await client.list_tools()).tools]
        summary["tools_list"] = sorted(n for n in names if "__" in n)
        for n in ("everything__echo", "everything__get-sum", "time__get_current_time", "files__list_allowed_directories"):
            expect(n in names, f"{n} not in tools/list: {names}")
        echo = next(t for t in (await client.list_tools()).tools if t.name == "everything__echo")
        summary["echo_schema"] = echo.input_schema
        structured = next(t for t in (await client.list_tools()).tools if t.name == "everything__get-structured-content")
        summary["structured_output_schema"] = structured.output_schema is not None
        r = await client.call_tool("list_tools", {})
        listed = json.dumps(r.structured_content)
        summary["list_tools_has_upstream"] = "time__convert_time" in listed
        r = await client.call_tool("search_tools", {"query": "current time in a timezone"})
        summary["search"] = [t["name"] for t in r.structured_content.get("tools", r.structured_content.get("results", []))][:5]
        r = await client.call_tool("get_tool", {"name": "everything__echo"})
        expect(not r.is_error, f"get_tool: {text_of(r)}")
        summary["get_tool_upstream"] = r.structured_content.get("upstream")
        r = await client.call_tool("get_tool", {"name": "everything"})
        summary["get_tool_entry_server"] = (r.structured_content or {}).get("server")

        # Call directly and through call_tool.
        r = await client.call_tool("everything__echo", {"message": "hello upstream"})
        expect(not r.is_error, f"echo: {text_of(r)}")
        summary["echo"] = text_of(r)
        r = await client.call_tool("time__get_current_time", {"timezone": "Europe/Paris"})
        expect(not r.is_error, f"time: {text_of(r)}")
        summary["time"] = json.loads(text_of(r)).get("timezone")
        r = await client.call_tool("call_tool", {"name": "everything__get-sum", "arguments": {"a": 2, "b": 40}})
        expect(not r.is_error, f"call_tool get-sum: {text_of(r)}")
        summary["call_tool_sum"] = text_of(r)
        r = await client.call_tool("everything__get-structured-content", {"location": "New York"})
        expect(not r.is_error, f"structured: {text_of(r)}")
        summary["structured"] = r.structured_content
        r = await client.call_tool("files__list_allowed_directories", {})
        expect(not r.is_error, f"files: {text_of(r)}")
        summary["files_allowed"] = text_of(r)

        # execute_code calls an upstream tool like a stored one.
        r = await client.call_tool("execute_code", {"language": "node", "code":
            "const s = await tools['everything__get-sum']({a: 20, b: 22}); const e = await tools.everything__echo({message: 'from code'}); return {s, e};"})
        expect(not r.is_error, f"execute_code: {text_of(r)}")
        summary["execute_code"] = r.structured_content if r.structured_content is not None else text_of(r)

        # A pipeline: an upstream tool, then a stored script.
        r = await client.call_tool("register_script", {
            "name": "shout", "description": "Upper-cases a text", "language": "python",
            "protocol": "plain", "source": SHOUT,
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}})
        expect(not r.is_error, f"register shout: {text_of(r)}")
        r = await client.call_tool("pipeline", {
            "action": "create", "name": "echo_shout", "description": "Echoes upstream, then shouts",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "steps": [{"tool": "everything__echo", "args": {"message": "$input.text"}},
                      {"tool": "shout", "args": {"text": "$prev"}}]})
        expect(not r.is_error, f"pipeline create: {text_of(r)}")
        r = await client.call_tool("echo_shout", {"text": "mixed"})
        expect(not r.is_error, f"pipeline run: {text_of(r)}")
        summary["pipeline"] = r.structured_content if r.structured_content is not None else text_of(r)

        # A crash: the everything server is killed in the middle of a call; that call is an
        # error naming the entry (with the end of its stderr); the next call starts it again.
        call = asyncio.ensure_future(client.call_tool(
            "everything__trigger-long-running-operation", {"duration": 30, "steps": 5}))
        pids = []
        for _ in range(100):
            await asyncio.sleep(0.1)
            pids = server_pids("server-everything")
            if pids:
                break
        expect(pids, "no server-everything process runs during its call")
        await asyncio.sleep(1.0)
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        r = await asyncio.wait_for(call, 60)
        summary["crash"] = {"is_error": r.is_error, "text": text_of(r)[:600]}
        r = await client.call_tool("everything__echo", {"message": "restarted"})
        expect(not r.is_error, f"the call after a crash: {text_of(r)}")
        summary["after_crash"] = text_of(r)

        # An HTTP entry to a host nobody approved: refused, nothing connects.
        port, seen = listener()
        r = await client.call_tool("import_mcp", {"name": "remote", "url": f"http://127.0.0.1:{port}/mcp"})
        summary["remote_import"] = {"is_error": r.is_error, "text": text_of(r)[:600]}
        r = await client.call_tool("call_tool", {"name": "remote", "arguments": {}})
        summary["remote_call"] = {"is_error": r.is_error, "text": text_of(r)[:600]}
        summary["remote_connections"] = len(seen)

        # A hand edit of an entry: the watcher re-lists it, one list_changed.
        path = os.path.join(a.toolbox, "tools", "files", "tool.toml")
        text = open(path).read()
        text = text.replace('[mcp]\n', '[mcp]\ntools = ["list_allowed_directories", "read_text_file"]\n', 1)
        before = len(changes)
        open(path, "w").write(text)
        deadline = time.monotonic() + 60
        files_tools = []
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            files_tools = sorted(t.name for t in (await client.list_tools()).tools if t.name.startswith("files__"))
            if files_tools == ["files__list_allowed_directories", "files__read_text_file"]:
                break
        summary["hand_edit_tools"] = files_tools
        # The change is announced once its server listed its tools for the new version.
        while time.monotonic() < deadline and len(changes) == before:
            await asyncio.sleep(0.2)
        await asyncio.sleep(2)
        summary["hand_edit_list_changed"] = len(changes) - before
        r = await client.call_tool("files__read_text_file", {"path": "nope.txt"})
        summary["hand_edit_call"] = {"is_error": r.is_error, "text": text_of(r)[:300]}

        # Skills: the extension is declared; skills/list serves the imported skill.
        caps = client.server_capabilities
        ext = (caps.model_dump(by_alias=True).get("extensions") or {})
        summary["skills_extension"] = "io.modelcontextprotocol/skills" in ext
        res = await client.session.send_request(types.Request[dict, str](method="skills/list", params={}), RAW)
        summary["skills_list"] = res
        skills = res.get("skills", [])
        if skills:
            uri = skills[0]["uri"]
            got = await client.session.send_request(types.Request[dict, str](method="skills/get", params={"uri": uri}), RAW)
            summary["skills_get"] = got.get("skill", {}).get("uri")
            rr = await client.read_resource(uri)
            summary["skill_md"] = rr.contents[0].text[:80]
        try:
            await client.session.send_request(types.Request[dict, str](method="skills/get", params={"uri": "skill://nope/SKILL.md"}), RAW)
            summary["skills_get_unknown"] = "no error"
        except Exception as e:  # noqa: BLE001 - the error is what is checked
            summary["skills_get_unknown"] = str(e)[:200]
    print(json.dumps(summary))


asyncio.run(main())
