"""Everything an MCP client can read of a toolbox, through the official Python SDK: every
resource listed or named, the skills extension, prompts, tools/list and the meta-tools that
show a tool (list_tools, get_tool with its source and at a revision, search_tools, diff_tool,
tool_history, export_tool as a Gist, update_tool) and a call of the tool. A tool held by trust
(a teammate's unsigned push) must show nothing but its name, who brought it and why; the
test that runs this looks for the held skill's words in everything read.

Usage: held_content.py --toolsmith BIN --toolbox DIR --tool NAME --query WORDS
Prints one JSON line on stdout: {"read": {reader: text}, ...}; exits non-zero when a request
fails in a way no reader should (the server gone).
"""
import argparse
import asyncio
import json
import os

from mcp import Client, StdioServerParameters, types
from pydantic import TypeAdapter
from checks import text_of

RAW = TypeAdapter(dict)


def dump(v):
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--query", required=True)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    read = {}
    errors = {}

    async def attempt(key, coro):
        try:
            read[key] = dump(await coro)
        except Exception as e:  # noqa: BLE001 - a refusal is an answer too
            errors[key] = str(e)[:500]
            read[key] = str(e)

    async def tool(key, name, args):
        async def go():
            r = await client.call_tool(name, args)
            return {"is_error": bool(r.is_error), "text": text_of(r), "structured": r.structured_content}
        await attempt(key, go())

    async def raw(key, method, params):
        await attempt(key, client.session.send_request(types.Request[dict, str](method=method, params=params), RAW))

    async def resource(key, uri):
        async def go():
            r = await client.read_resource(uri)
            return [getattr(c, "text", None) or getattr(c, "blob", "") for c in r.contents]
        await attempt(key, go())

    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        name = a.tool
        # Resources: every one listed, and the held tool's own URIs named outright.
        listed = (await client.list_resources()).resources
        read["resources/list"] = dump([r.model_dump(mode="json") for r in listed])
        for r in listed:
            await resource(f"read {r.uri}", str(r.uri))
        for uri in (f"toolsmith://skills/{name}", f"toolsmith://tools/{name}", f"skill://{name}/SKILL.md",
                    f"skill://{name}/scripts/extract.py", f"skill://{name}/reference.md"):
            await resource(f"read {uri}", uri)
        templates = (await client.list_resource_templates()).resource_templates
        read["resources/templates/list"] = dump([t.model_dump(mode="json") for t in templates])
        # The skills extension.
        await raw("skills/list", "skills/list", {})
        await raw("skills/get", "skills/get", {"uri": f"skill://{name}/SKILL.md"})
        # Prompts: both carry the guide; improve_tool carries the tool.
        await attempt("prompts/get create_tool", client.get_prompt("create_tool", {"purpose": "read PDFs"}))
        await attempt("prompts/get improve_tool", client.get_prompt("improve_tool", {"name": name}))
        # Tools.
        tools = (await client.list_tools()).tools
        read["tools/list"] = dump([t.model_dump(mode="json") for t in tools])
        read["tools/list names"] = dump(sorted(t.name for t in tools))
        await tool("list_tools", "list_tools", {})
        await tool("list_tools tag", "list_tools", {"tag": "skill"})
        await tool("get_tool", "get_tool", {"name": name, "include_source": True})
        await tool("get_tool at HEAD", "get_tool", {"name": name, "revision": "HEAD", "include_source": True})
        await tool("search_tools words", "search_tools", {"query": a.query})
        await tool("search_tools name", "search_tools", {"query": name})
        await tool("diff_tool", "diff_tool", {"name": name, "from": "HEAD~1"})
        await tool("tool_history", "tool_history", {"name": name})
        await tool("export_tool gist", "export_tool", {"names": [name], "gist": True})
        await tool("update_tool", "update_tool", {"name": name})
        await tool("call", name, {})
        await tool("call_tool", "call_tool", {"name": name, "arguments": {}})
    print(json.dumps({"read": read, "errors": errors}, ensure_ascii=False))


asyncio.run(main())
