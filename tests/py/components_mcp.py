"""Component tools over MCP with the official Python SDK (issue 29): lists the tools (their
input and output schemas, derived from the components' WIT types), then runs the calls of a
JSON file against `toolsmith serve` and prints, for each, whether it failed, its text and its
structured content. The Rust test (tests/it/components.rs) decides what each must show.

Usage: components_mcp.py --toolsmith BIN --toolbox DIR --calls FILE
"""
import argparse
import asyncio
import json
import os
import time

from mcp import Client, StdioServerParameters
from checks import text_of


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--calls", required=True)
    ap.add_argument("--repeat", type=int, default=0, help="then time this many calls of the first one")
    a = ap.parse_args()
    calls = json.load(open(a.calls))
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    out = {"tools": {}, "calls": []}
    async with Client(server, cache=None, read_timeout_seconds=600) as client:
        for c in calls:
            r = await client.call_tool(c["tool"], c["args"])
            out["calls"].append({"is_error": bool(r.is_error), "text": text_of(r), "structured": r.structured_content})
        listed = await client.list_tools()
        for t in listed.tools:
            d = t.model_dump(by_alias=True, exclude_none=True)
            out["tools"][t.name] = {"input": d.get("inputSchema"), "output": d.get("outputSchema")}
        if a.repeat:
            c = calls[0]
            times = []
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                await client.call_tool(c["tool"], c["args"])
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            out["p50_ms"] = times[len(times) // 2]
    print(json.dumps(out))


asyncio.run(main())
