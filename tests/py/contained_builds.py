"""Making tools as hostile text would steer an AI (issue 24), with the official Python SDK:
runs the meta-tool calls listed in a JSON file against `toolsmith serve` and prints, for each,
whether it failed, its text and its structured content. The Rust test (tests/it/contained_builds.rs)
decides what each must show.

Usage: contained_builds.py --toolsmith BIN --toolbox DIR --calls FILE
"""
import argparse
import asyncio
import json
import os

from mcp import Client, StdioServerParameters
from checks import text_of


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--calls", required=True)
    a = ap.parse_args()
    calls = json.load(open(a.calls))
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    out = []
    async with Client(server, cache=None, read_timeout_seconds=600) as client:
        for c in calls:
            r = await client.call_tool(c["tool"], c["args"])
            out.append({"is_error": bool(r.is_error), "text": text_of(r), "structured": r.structured_content})
    print(json.dumps(out))


asyncio.run(main())
