"""OCI artifacts over MCP, through the official Python SDK: export_tool with `oci` publishes a
tool, import_tool with an oci:// reference pinned by digest brings it back under a new name,
the imported tool runs, and a bad reference is an error with a hint (issue 15).

Usage: oci_mcp.py --toolsmith BIN --toolbox DIR --registry HOST:PORT
Prints one JSON summary line on stdout.
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
    ap.add_argument("--registry", required=True)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env={**os.environ})
    summary = {}
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        r = await client.call_tool("export_tool", {"names": ["word_count"], "oci": f"{a.registry}/mcp/word_count:v1"})
        summary["export_error"] = r.is_error
        summary["export"] = json.loads(text_of(r)) if not r.is_error else text_of(r)
        pinned = summary["export"]["pinned"] if not r.is_error else ""
        r = await client.call_tool("import_tool", {"source": pinned, "name": "wc_from_oci"})
        summary["import_error"] = r.is_error
        summary["import"] = json.loads(text_of(r)) if not r.is_error else text_of(r)
        tools = await client.list_tools()
        summary["listed"] = "wc_from_oci" in [t.name for t in tools.tools]
        r = await client.call_tool("wc_from_oci", {"text": "one two three"})
        summary["call"] = text_of(r)
        r = await client.call_tool("import_tool", {"source": "oci://word_count:v1"})
        summary["bad_ref_error"] = r.is_error
        summary["bad_ref"] = text_of(r)
    print(json.dumps(summary))


asyncio.run(main())
