"""End-to-end scenario with the official MCP Python SDK against `toolsmith serve`.

Usage: scenario.py --toolsmith BIN --toolbox DIR --mode legacy|auto [--url URL]
Without --url the server is spawned over stdio. Prints one JSON summary line on stdout;
exits non-zero with a message when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters, types
from checks import fail


async def wait_for(pred, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        await asyncio.sleep(0.02)
    fail(f"timed out waiting for {what}")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--mode", default="legacy")
    ap.add_argument("--url")
    a = ap.parse_args()

    changes = []  # timestamps of tools/list_changed notifications
    logs = []

    async def on_message(msg):
        if isinstance(msg, types.ServerNotification) or hasattr(msg, "method"):
            method = getattr(msg, "method", None) or getattr(getattr(msg, "root", None), "method", None)
            if method == "notifications/tools/list_changed" and a.mode == "legacy":
                changes.append(time.monotonic())

    async def on_log(params):
        logs.append(params)

    if a.url:
        server = a.url
    else:
        server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env={**os.environ})
    summary = {"mode": a.mode}
    async with Client(server, mode=a.mode, message_handler=on_message, logging_callback=on_log, cache=None, read_timeout_seconds=60) as client:
        summary["protocol"] = client.protocol_version
        listener = None
        if a.mode != "legacy":
            async def listen():
                async with client.listen(tools_list_changed=True) as sub:
                    async for _event in sub:
                        changes.append(time.monotonic())
            listener = asyncio.create_task(listen())
            await asyncio.sleep(0.3)

        tools = (await client.list_tools()).tools
        names = sorted(t.name for t in tools)
        summary["tools"] = names
        for need in ["list_tools", "get_tool", "search_tools", "call_tool", "delete_tool", "word_count", "json_format", "slugify"]:
            if need not in names:
                fail(f"{need} missing from tools/list: {names}")
        wc = next(t for t in tools if t.name == "word_count")
        if "text" not in json.dumps(wc.input_schema):
            fail(f"word_count input schema lacks text: {wc.input_schema}")

        # A WASM tool by its own name.
        r = await client.call_tool("word_count", {"text": "hello big world"})
        if r.is_error:
            fail(f"word_count failed: {r.content}")
        summary["word_count"] = r.structured_content
        # A Python script tool through call_tool.
        r = await client.call_tool("call_tool", {"name": "slugify", "arguments": {"text": "Héllo Wörld"}})
        if r.is_error:
            fail(f"call_tool slugify failed: {r.content}")
        summary["slugify"] = r.structured_content
        # A bad call is an isError result with a hint.
        r = await client.call_tool("call_tool", {"name": "no_such_tool", "arguments": {}})
        summary["missing_is_error"] = bool(r.is_error)
        summary["missing_text"] = r.content[0].text if r.content else ""

        # Search and the guide.
        r = await client.call_tool("search_tools", {"query": "count words"})
        summary["search_first"] = r.structured_content["results"][0]["name"]
        res = await client.read_resource("toolsmith://guide")
        guide = res.contents[0].text
        summary["guide_has_word_count"] = "word_count" in guide

        # A change through the CLI: exactly one list_changed.
        before = len(changes)
        t0 = time.monotonic()
        subprocess.run([a.toolsmith, "--toolbox", a.toolbox, "new", "fresh_tool", "--lang", "python", "-d", "A fresh tool"], check=True, stdout=subprocess.DEVNULL)
        await wait_for(lambda: len(changes) > before, what="list_changed after `toolsmith new`")
        summary["cli_change_ms"] = round((changes[before] - t0) * 1000, 1)
        await asyncio.sleep(0.6)
        summary["cli_change_notifications"] = len(changes) - before
        names = sorted(t.name for t in (await client.list_tools()).tools)
        if "fresh_tool" not in names:
            fail(f"fresh_tool not listed after the change: {names}")

        # A hand edit of a tool.toml.
        before = len(changes)
        path = os.path.join(a.toolbox, "tools", "fresh_tool", "tool.toml")
        text = open(path).read().replace('description = "A fresh tool"', 'description = "Edited by hand"')
        t0 = time.monotonic()
        with open(path, "w") as f:
            f.write(text)
        await wait_for(lambda: len(changes) > before, what="list_changed after a hand edit")
        summary["hand_edit_ms"] = round((changes[before] - t0) * 1000, 1)
        await asyncio.sleep(0.6)
        summary["hand_edit_notifications"] = len(changes) - before
        tools = (await client.list_tools()).tools
        desc = next(t.description for t in tools if t.name == "fresh_tool")
        summary["edited_description"] = desc

        # delete_tool through MCP.
        before = len(changes)
        r = await client.call_tool("delete_tool", {"name": "fresh_tool"})
        if r.is_error:
            fail(f"delete_tool failed: {r.content}")
        await wait_for(lambda: len(changes) > before, what="list_changed after delete_tool")
        names = sorted(t.name for t in (await client.list_tools()).tools)
        summary["deleted_gone"] = "fresh_tool" not in names

        if listener:
            listener.cancel()
    print(json.dumps(summary))


asyncio.run(main())
