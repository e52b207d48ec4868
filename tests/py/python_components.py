"""Python (and JavaScript) components from the form an AI writes first, over MCP with the
official Python SDK (issue 40): runs the calls of a JSON file against `toolsmith serve` (builds
with `build_tool` or `register_script` among them), then lists the tools; for each call it
prints whether it failed, its text and structured content, and whether that structured
content is valid against the tool's listed output schema (checked with `jsonschema`, as a
strict client does). The Rust test (tests/it/python_components.rs) decides what each must show.

Usage: python_components.py --toolsmith BIN --toolbox DIR --calls FILE
"""
import argparse
import asyncio
import json
import os

import jsonschema
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
    out = {"tools": {}, "calls": []}
    async with Client(server, cache=None, read_timeout_seconds=600) as client:
        results = []
        for c in calls:
            results.append((c, await client.call_tool(c["tool"], c["args"])))
        listed = await client.list_tools()
        for t in listed.tools:
            d = t.model_dump(by_alias=True, exclude_none=True)
            out["tools"][t.name] = {"input": d.get("inputSchema"), "output": d.get("outputSchema")}
        for c, r in results:
            entry = {"is_error": bool(r.is_error), "text": text_of(r), "structured": r.structured_content}
            schema = out["tools"].get(c["tool"], {}).get("output")
            if schema is not None and r.structured_content is not None:
                try:
                    jsonschema.validate(r.structured_content, schema)
                    entry["valid"] = True
                except jsonschema.ValidationError as e:
                    entry["valid"] = False
                    entry["invalid"] = e.message
            out["calls"].append(entry)
    print(json.dumps(out))


asyncio.run(main())
