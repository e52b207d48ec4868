"""Network limited to listed domains over MCP (issue 12), with the official Python SDK: an AI
registers a tool asking for one domain, the person approves it through elicitation (the form
names the domain), and calls — the first and the next, which runs in a pre-started spare —
reach the listed host through the proxy and are refused another, with a warning for the AI.

Usage: network_mcp.py --toolsmith BIN --toolbox DIR --port PORT
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters, types
from checks import fail, expect, text_of


CODE = """import json, sys, urllib.request, urllib.error
a = json.load(sys.stdin)
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return "HTTP %d" % e.code
    except Exception as e:
        return "failed: %s" % e
print(json.dumps({"listed": get(a["listed"]), "other": get(a["other"])}))
"""


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--port", required=True, type=int)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    asked = []

    async def person(ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve_for": "this version"})

    summary = {}
    args = {"listed": f"http://127.0.0.1:{a.port}/listed", "other": f"http://localhost:{a.port}/other"}
    async with Client(server, cache=None, read_timeout_seconds=120, elicitation_callback=person) as client:
        r = await client.call_tool("register_script", {
            "name": "fetch_two", "description": "Fetches two URLs", "language": "python",
            "protocol": "plain", "source": CODE, "capabilities": {"network": ["127.0.0.1"]}})
        expect(not r.is_error, f"register: {text_of(r)}")
        summary["register_says"] = "network access to 127.0.0.1 only" in text_of(r)
        r = await client.call_tool("get_tool", {"name": "fetch_two"})
        summary["denied"] = r.structured_content["sandbox"]["denied"]
        results = []
        for _ in range(3):
            r = await client.call_tool("fetch_two", args)
            expect(not r.is_error, f"call: {text_of(r)}")
            results.append(r.structured_content)
            summary["warning"] = "the network proxy refused localhost" in text_of(r)
        summary["results"] = results
        summary["asked"] = asked
    print(json.dumps(summary))


asyncio.run(main())
