"""A sync while a server is running, seen by the official MCP Python SDK: one list_changed per
sync (CLI in another process, or the `sync` meta-tool), held tools listed and readable but
their calls refused with what a person does, then trusted.

Usage: team_sync.py --toolsmith BIN --toolbox DIR --other DIR
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters, types
from checks import fail, text_of


async def wait_for(pred, timeout=15.0, what="condition"):
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
    ap.add_argument("--other", required=True)
    a = ap.parse_args()
    ts = a.toolsmith

    def cli(box, *args):
        subprocess.run([ts, "--toolbox", box, *args], check=True, stdout=subprocess.DEVNULL)

    changes = []

    async def on_message(msg):
        method = getattr(msg, "method", None) or getattr(getattr(msg, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            changes.append(time.monotonic())

    server = StdioServerParameters(command=ts, args=["--toolbox", a.toolbox, "serve"], env={**os.environ})
    summary = {}
    async with Client(server, mode="legacy", message_handler=on_message, cache=None, read_timeout_seconds=60) as client:
        await client.list_tools()

        # Another machine adds a tool and pushes; this one syncs from the command line.
        cli(a.other, "new", "from_afar", "--lang", "python", "-d", "Made on another machine")
        cli(a.other, "sync")
        before = len(changes)
        cli(a.toolbox, "sync")
        await wait_for(lambda: len(changes) > before, what="list_changed after `toolsmith sync`")
        await asyncio.sleep(0.8)
        summary["cli_sync_notifications"] = len(changes) - before
        names = [t.name for t in (await client.list_tools()).tools]
        summary["listed"] = "from_afar" in names

        # Held: readable, calls refused with what a person does.
        r = await client.call_tool("from_afar", {"text": "x"})
        summary["held_call"] = {"is_error": bool(r.is_error), "text": text_of(r)}
        r = await client.call_tool("get_tool", {"name": "from_afar"})
        summary["get_tool_ok"] = not r.is_error
        summary["get_tool_held"] = (r.structured_content or {}).get("held")
        guide = (await client.read_resource("toolsmith://guide")).contents[0].text
        summary["guide_held"] = "## Held tools" in guide and "`from_afar`" in guide

        # The sync meta-tool: one list_changed, and the result says what is held.
        cli(a.other, "new", "second_afar", "--lang", "python", "-d", "Another one")
        cli(a.other, "sync")
        before = len(changes)
        r = await client.call_tool("sync", {})
        if r.is_error:
            fail(f"sync failed: {text_of(r)}")
        summary["sync_result"] = r.structured_content
        await wait_for(lambda: len(changes) > before, what="list_changed after the sync meta-tool")
        await asyncio.sleep(0.8)
        summary["meta_sync_notifications"] = len(changes) - before

        # A person trusts it; the same server runs it.
        cli(a.toolbox, "trust", "from_afar")
        r = await client.call_tool("from_afar", {"text": "x"})
        summary["trusted_call"] = {"is_error": bool(r.is_error), "text": text_of(r)}
    print(json.dumps(summary))


asyncio.run(main())
