"""No call waits for a helper to start (issue 41): a Python tool's first call after it is
registered, and after the server restarts, through `toolsmith serve` and the official MCP
client. The server is started by the caller's environment (the mechanism: `TOOLSMITH_BWRAP`);
the audit log (read by the caller) says how each call's process came.

1. A first server: `register_script` registers `used` and `unused`. Once each registration is
   answered, no process of its staged copy (where its examples ran) is left, and the tool's fork
   server is already up (the registration left it for the first call). `used` is called twice.
2. A second server on the same toolbox (a restart): `unused`, which the first server never
   called (so nothing is pre-started for it), is called at once — its process is started for the
   call while its fork server starts beside it; once that server is up, `unused` is called again.
   `used`, which the pre-start makes ready, is called once its fork server is up.

Usage: first_calls.py --toolsmith BIN --toolbox DIR
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import time

from mcp import Client, StdioServerParameters
from checks import expect, text_of

ECHO = "import json, sys\nprint(json.dumps({'echo': json.load(sys.stdin).get('text')}))\n"

# What a fork server's command line holds (its stub).
FORK_MARK = b"_toolsmith_fork_server"


def processes(prefix, exact=False):
    """The host's processes whose TOOLSMITH_TOOL_DIR is `prefix` (`exact`) or starts with it:
    pid -> (command line, executable's name, parent pid)."""
    key = b"TOOLSMITH_TOOL_DIR="
    want = os.fsencode(prefix)
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        dirs = [e[len(key):] for e in env if e.startswith(key)]
        if any(d == want if exact else d.startswith(want) for d in dirs):
            comm = stat[stat.index(b"(") + 1:stat.rindex(b")")]
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            out[int(pid)] = (cmd, comm, ppid)
    return out


def fork_server(tools, name):
    """Whether a process of the tool's fork server runs (up or starting)."""
    procs = processes(os.path.join(tools, name), exact=True)
    return any(FORK_MARK in cmd for cmd, _, _ in procs.values())


def fork_server_up(tools, name):
    """Whether the tool's fork server is up: it has forked a call's process ahead (a Python
    process of the fork server's stub whose parent is one too)."""
    procs = processes(os.path.join(tools, name), exact=True)
    stub = {pid for pid, (cmd, comm, _) in procs.items() if FORK_MARK in cmd and comm.startswith(b"python")}
    return any(procs[pid][2] in stub for pid in stub)


def wait_for_fork_server(tools, name):
    """Wait (at most 60 s) until the tool's fork server is up; whether it is."""
    for _ in range(600):
        if fork_server_up(tools, name):
            return True
        time.sleep(0.1)
    return False


async def echo(client, name, text):
    r = await client.call_tool(name, {"text": text})
    expect(not r.is_error, f"{name}: {text_of(r)}")
    expect(json.loads(text_of(r)) == {"echo": text}, f"{name}: {text_of(r)}")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    tools = os.path.join(os.path.realpath(a.toolbox), "tools")
    summary = {}
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        for name in ("used", "unused"):
            r = await client.call_tool("register_script", {
                "name": name, "description": "Echoes its text", "language": "python",
                "protocol": "plain", "source": ECHO,
                "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
                "examples": [{"input": {"text": "a"}, "output": {"echo": "a"}},
                             {"input": {"text": "b"}, "output": {"echo": "b"}}]})
            expect(not r.is_error, f"register_script {name}: {text_of(r)}")
            # Seen at once, before any call: what the registration left behind.
            summary[f"{name}_staged_left"] = len(processes(os.path.join(tools, ".staging-")))
            summary[f"{name}_fork_server_at_answer"] = fork_server_up(tools, name)
        await echo(client, "used", "first")
        await echo(client, "used", "second")
    # The first server stopped everything it kept (its client waits for it to exit).
    for _ in range(600):
        if not processes(tools + "/"):
            break
        time.sleep(0.1)
    summary["left_by_the_first_server"] = len(processes(tools + "/"))
    # The restart: `unused` was never called, so nothing waits for it; it is called at once.
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        summary["unused_fork_server_before_call"] = fork_server(tools, "unused")
        await echo(client, "unused", "first after the restart")
        summary["unused_fork_server_came"] = wait_for_fork_server(tools, "unused")
        await echo(client, "unused", "then")
        summary["used_fork_server_came"] = wait_for_fork_server(tools, "used")
        await echo(client, "used", "after the pre-start")
    print(json.dumps(summary))


asyncio.run(main())
