"""What passes between an MCP client, toolsmith and an upstream server during a call (issue 28),
through the official Python SDK on both sides (the upstream is tests/fixtures/mcp-waiter, an
SDK MCPServer, held by the toolbox as the entry `waiter`):

- progress: the upstream's reports of `waiter__count` reach the client's progress callback;
- cancellation: the client abandons `waiter__wait` (the SDK sends `notifications/cancelled`),
  toolsmith cancels its own call of the upstream tool, and the upstream sees it cancelled;
- list_changed: `waiter__grow` adds a tool upstream and says so; the client hears one
  `notifications/tools/list_changed` and can call the new tool.

Usage: upstream_flow.py --toolsmith BIN --toolbox DIR
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import time

import anyio
from mcp import Client, StdioServerParameters
from checks import expect, text_of


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
        names = {t.name for t in (await client.list_tools()).tools}
        # A list made before the index is ready holds the meta-tools only; the server then
        # says list_changed (a loaded machine can be that slow): list again, as a client does.
        deadline = time.monotonic() + 60
        while "waiter__count" not in names and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if changes:
                names = {t.name for t in (await client.list_tools()).tools}
        expect("waiter__count" in names, f"the entry's tools are listed: {sorted(names)}")

        reports = []

        async def progress(p, total, message):
            reports.append([p, total, message])

        r = await client.call_tool("waiter__count", {"steps": 4}, progress_callback=progress)
        summary["count"] = text_of(r)
        summary["progress"] = reports

        # Cancelled by the client after half a second of a 30 s wait.
        started = time.monotonic()
        with anyio.move_on_after(0.5):
            await client.call_tool("waiter__wait", {"seconds": 30})
        summary["abandoned_after_s"] = round(time.monotonic() - started, 2)
        tally = {}
        for _ in range(100):
            r = await client.call_tool("waiter__tally", {})
            tally = r.structured_content or json.loads(text_of(r))
            tally = tally.get("result", tally)
            if tally.get("cancelled"):
                break
            await asyncio.sleep(0.1)
        summary["tally"] = tally
        r = await client.call_tool("waiter__wait", {"seconds": 0.01})
        summary["after_cancel"] = text_of(r)

        # The upstream's own list_changed, heard once downstream.
        before = len(changes)
        r = await client.call_tool("waiter__grow", {})
        summary["grow"] = text_of(r)
        for _ in range(100):
            if len(changes) > before:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.5)
        summary["list_changed"] = len(changes) - before
        names = {t.name for t in (await client.list_tools()).tools}
        summary["has_extra"] = "waiter__extra" in names
        if summary["has_extra"]:
            summary["extra"] = text_of(await client.call_tool("waiter__extra", {}))
    print(json.dumps(summary))


asyncio.run(main())
