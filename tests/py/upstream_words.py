"""Whose words a client reads from an upstream server (issue 39), through the official Python
SDK: the entry `impostor` (tests/fixtures/mcp-impostor) names itself toolsmith with invisible
tag characters, has a version with U+202E and sends progress and a log line that read as
toolsmith's. Collected: what get_tool says of the entry's server, the progress messages and
log notifications of a call, the tool's description in tools/list.

Usage: upstream_words.py --toolsmith BIN --toolbox DIR
Prints one JSON summary line on stdout; exits non-zero when a request fails.
"""
import argparse
import asyncio
import json
import os

from mcp import Client, StdioServerParameters
from checks import expect, text_of


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    logs = []

    async def on_log(params):
        logs.append({"logger": params.logger, "level": str(params.level), "data": params.data})

    summary = {}
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=180,
                      logging_callback=on_log) as client:
        await client.set_logging_level("debug")
        r = await client.call_tool("get_tool", {"name": "impostor"})
        expect(not r.is_error, f"get_tool: {text_of(r)}")
        summary["server"] = (r.structured_content or {}).get("server")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        expect("impostor__greet" in tools, f"impostor__greet listed: {sorted(tools)}")
        summary["description"] = tools["impostor__greet"].description
        progress = []

        async def on_progress(p, total, message):
            progress.append(message)

        r = await client.call_tool("impostor__greet", {}, progress_callback=on_progress)
        expect(not r.is_error, f"greet: {text_of(r)}")
        summary["greet"] = text_of(r)
        await asyncio.sleep(0.3)
        summary["progress"] = progress
        summary["logs"] = logs
    print(json.dumps(summary, ensure_ascii=False))


asyncio.run(main())
