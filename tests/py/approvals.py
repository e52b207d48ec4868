"""A person approves a tool's capabilities through MCP elicitation (issue 12), with the official
Python SDK's elicitation callback playing the person: decline, accept for this call only,
accept for this version; a client without elicitation gets an isError naming the command.

Scenario "page": a missing secret is set on the Secrets page of `toolsmith console`, which the
URL-mode elicitation points to, by the person logged in there in headless Chromium
(tests/py/browser.py); the link alone (another browser, no session) opens nothing.

Usage: approvals.py --toolsmith BIN --toolbox DIR --mode legacy|auto [--scenario form|page]
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys

from mcp import Client, StdioServerParameters, types
from checks import fail, expect, text_of


CODE = "import json, os, sys\njson.load(sys.stdin)\nprint(json.dumps({'seen': os.environ.get('TOOLSMITH_TEST_APPROVAL_ENV'), 'v': %d}))\n"


async def register(client, version):
    r = await client.call_tool("register_script", {
        "name": "peek_env", "description": "Shows one environment variable",
        "language": "python", "protocol": "plain", "source": CODE % version,
        "capabilities": {"env": ["TOOLSMITH_TEST_APPROVAL_ENV"]}})
    expect(not r.is_error, f"register: {text_of(r)}")


PAGE_VALUE = "page-secret-5c1d9e7a"
PAGE_CODE = "import json, os, sys\njson.load(sys.stdin)\nv = os.environ.get('PAGE_TOKEN')\nsys.stderr.write('using ' + str(v) + '\\n')\nprint(json.dumps({'token': v, 'len': len(v or '')}))\n"


def start_console(a, env):
    """The person runs `toolsmith console` in their terminal: its address and login link."""
    console = subprocess.Popen([a.toolsmith, "--toolbox", a.toolbox, "--json", "console", "--no-open"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    buf = ""
    while True:
        line = console.stdout.readline()
        expect(line, f"the console printed its link: {buf}")
        buf += line
        if line.startswith("}"):
            break
    started = json.loads(buf)
    return console, started["url"], started["login"]


def drive_page(url, base, person, stranger, summary):
    """The person at the browser, on the console's Secrets page; the link alone opens nothing."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    def post(headers):
        req = urllib.request.Request(base + "/secrets/set", data=b"name=PAGE_TOKEN&value=stolen-value-1234&csrf=x",
                                     method="POST", headers=headers)
        try:
            return urllib.request.urlopen(req).status
        except urllib.error.HTTPError as e:
            return e.code

    summary["url"] = url
    expect(urlsplit(url).hostname == "127.0.0.1", f"the page is on loopback: {url}")
    summary["stranger_text"] = stranger.open(url)
    summary["other_origin"] = post({"Origin": "http://evil.example"})
    summary["cross_site"] = post({"Sec-Fetch-Site": "cross-site"})
    summary["page_text"] = person.open(url)
    form = "form[action='/secrets/set']:has(input[name=name][value=PAGE_TOKEN])"
    person.eval(f"document.querySelector({json.dumps(form + ' input[name=value]')}).value = {json.dumps(PAGE_VALUE)}; true")
    summary["saved_text"] = person.click(form + " button")
    summary["value_shown"] = PAGE_VALUE in person.eval("document.documentElement.outerHTML")
    print("page:", json.dumps(summary), file=sys.stderr, flush=True)


async def page(a, env, summary):
    from browser import Browser
    modes = []
    driving = []
    progress = []

    async def on_progress(value, total, message):
        progress.append(message or "")

    console, base, login = start_console(a, env)
    person, stranger = Browser(), Browser()
    person.open(login)

    async def answer(ctx, params):
        mode = getattr(params, "mode", None) or "form"
        modes.append(mode)
        if mode == "url":
            expect("PAGE_TOKEN" in params.message, f"the page names the secret: {params.message}")
            if a.mode == "legacy":
                # The person gets to it a few seconds later: the call waits, and says so.
                import threading
                helper = threading.Timer(3.0, drive_page, (params.url, base, person, stranger, summary))
                helper.start()
                driving.append(helper)
            else:
                await asyncio.to_thread(drive_page, params.url, base, person, stranger, summary)
            return types.ElicitResult(action="accept")
        props = params.requested_schema["properties"]
        expect(list(props) == ["approve_for"], f"a form never asks for a secret: {props}")
        return types.ElicitResult(action="accept", content={"approve_for": "this version"})

    logs = []
    loggers = []

    async def on_log(params):
        logs.append(json.dumps(params.data) if not isinstance(params.data, str) else params.data)
        loggers.append(params.logger)

    offered = []
    completed = []

    async def person_url(ctx, params):
        if (getattr(params, "mode", None) or "form") == "url":
            offered.append(params.elicitation_id)
        return await answer(ctx, params)

    async def on_message(message):
        # notifications/elicitation/complete: the secret was set (URL-mode elicitation).
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/elicitation/complete":
            params = root.params
            completed.append(getattr(params, "elicitation_id", None) or (params or {}).get("elicitationId"))

    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=env)
    try:
        async with Client(server, mode=a.mode, cache=None, read_timeout_seconds=120,
                          elicitation_callback=person_url, logging_callback=on_log,
                          message_handler=on_message) as client:
            r = await client.call_tool("register_script", {
                "name": "page_tok", "description": "Reports its token", "language": "python",
                "protocol": "plain", "source": PAGE_CODE, "secrets": {"PAGE_TOKEN": "a token for the test"}})
            expect(not r.is_error, f"register: {text_of(r)}")
            r = await client.call_tool("page_tok", {}, progress_callback=on_progress)
            for helper in driving:
                helper.join()
            expect(not r.is_error, f"the call runs once the secret was set in the console: {text_of(r)}")
            summary["progress"] = progress
            summary["result"] = r.structured_content
            summary["modes"] = modes
            summary["offered"] = offered
            summary["completed"] = completed
            summary["value_in_result"] = PAGE_VALUE in text_of(r)
            r = await client.call_tool("page_tok", {})
            summary["asked_again"] = len(modes) > 2
            summary["log_redacted"] = any("using [secret PAGE_TOKEN]" in l for l in logs)
            summary["value_in_logs"] = any(PAGE_VALUE in l for l in logs)
            summary["waited_note"] = any("waiting up to" in l and "set the secret PAGE_TOKEN" in l for l in logs)
            # The tool's own lines come as the tool's, toolsmith's as toolsmith's.
            summary["loggers"] = sorted({(g, "using" in l) for g, l in zip(loggers, logs)})
    finally:
        person.close()
        stranger.close()
        console.terminate()
        console.wait(timeout=10)
    listing = json.loads(subprocess.run([a.toolsmith, "--toolbox", a.toolbox, "--json", "secret", "list"],
                                        check=True, capture_output=True, env=env, text=True).stdout)
    summary["set_by"] = [s["name"] for s in listing if s["set"]]
    print(json.dumps(summary))


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--mode", default="legacy")
    ap.add_argument("--scenario", default="form")
    a = ap.parse_args()
    env = {**os.environ, "TOOLSMITH_TEST_APPROVAL_ENV": "visible"}
    if a.scenario == "page":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        return await page(a, env, {"mode": a.mode})
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=env)
    answers, asked = [], []
    summary = {"mode": a.mode}

    async def person(ctx, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        answer = answers.pop(0)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        scope = "this call only" if answer == "once" else "this version"
        return types.ElicitResult(action="accept", content={"approve_for": scope})

    async with Client(server, mode=a.mode, cache=None, read_timeout_seconds=120,
                      elicitation_callback=person) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        expect(not any(w in n for n in names for w in ("approve", "grant", "secret")),
               f"a meta-tool could approve or set secrets: {names}")
        await register(client, 1)
        r = await client.call_tool("get_tool", {"name": "peek_env"})
        expect(r.structured_content["approval"]["state"] == "pending", f"get_tool: {r.structured_content.get('approval')}")

        # Decline: recorded as a denial of this version; the call runs with the defaults.
        answers.append("decline")
        r = await client.call_tool("peek_env", {})
        expect(len(asked) == 1, f"the person was asked once: {asked}")
        msg = asked[0]["message"]
        for part in ("peek_env", "the environment variable TOOLSMITH_TEST_APPROVAL_ENV", "python script (main.py, 3 lines"):
            expect(part in msg, f"the form names {part!r}: {msg}")
        props = asked[0]["schema"]["properties"]
        expect(list(props) == ["approve_for"], f"the form asks for nothing else: {props}")
        expect(not r.is_error and r.structured_content["seen"] is None, f"declined: {text_of(r)}")
        expect("declined" in text_of(r), f"the result says it was declined: {text_of(r)}")
        r = await client.call_tool("peek_env", {})
        expect(len(asked) == 1 and r.structured_content["seen"] is None, "a denial is remembered")

        # A changed tool asks again. Accept for this call only: granted now, asked next time.
        await register(client, 2)
        answers.append("once")
        r = await client.call_tool("peek_env", {})
        expect(len(asked) == 2, f"a changed tool asks again: {len(asked)}")
        expect(not r.is_error and r.structured_content["seen"] == "visible", f"once: {text_of(r)}")
        answers.append("version")
        r = await client.call_tool("peek_env", {})
        expect(len(asked) == 3, "accept-once is not remembered")
        expect(r.structured_content["seen"] == "visible", f"version: {text_of(r)}")
        r = await client.call_tool("peek_env", {})
        expect(len(asked) == 3 and r.structured_content["seen"] == "visible",
               "an approval of this version is remembered")
        r = await client.call_tool("get_tool", {"name": "peek_env"})
        expect(r.structured_content["approval"]["state"] == "approved", f"get_tool: {r.structured_content.get('approval')}")
        await register(client, 3)
        summary["asked"] = len(asked)

    # A client that cannot ask the person: isError, saying what waits and how to approve it.
    async with Client(server, mode=a.mode, cache=None, read_timeout_seconds=120) as client:
        r = await client.call_tool("peek_env", {})
        t = text_of(r)
        expect(r.is_error, f"pending without elicitation is an error: {t}")
        for part in ("the environment variable TOOLSMITH_TEST_APPROVAL_ENV", "toolsmith approve peek_env",
                     "changed since the version approved"):
            expect(part in t, f"{part!r} in {t}")

    out = subprocess.run([a.toolsmith, "--toolbox", a.toolbox, "--json", "audit", "--tool", "peek_env"],
                         check=True, capture_output=True, env=env)
    log = json.loads(out.stdout)
    summary["decisions"] = [(e["event"], e.get("via")) for e in log if e["event"] != "call"]
    summary["calls"] = [e["outcome"] for e in log if e["event"] == "call"]
    summary["actor_session"] = all(e.get("session") for e in log if e["event"] == "call")
    print(json.dumps(summary))


asyncio.run(main())
