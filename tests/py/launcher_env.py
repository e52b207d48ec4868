"""The launcher's environment is toolsmith's (issue 39), as a hostile AI over MCP would try it,
with a fake key in the temporary HOME the server runs with:

1. import_tool of a repository whose tool carries `libdata.so` (a library whose constructor
   writes a marker file and prints the key), then import_mcp of an entry whose `env` preloads
   it (`LD_PRELOAD`): refused with why, before anything starts; no marker, no key anywhere.
   The same variables as a secret's or a passed-through variable's name, and through
   register_script's `capabilities.env` and `secrets`, are refused too.
2. A script whose passed-through variable and secret a person set and approved (the CLI, as
   the person would): during its call, no process outside its sandbox holds the secret, and
   bubblewrap's own processes hold no environment at all; the tool itself gets both.

Usage: launcher_env.py --toolsmith BIN --toolbox DIR --repo DIR --marker FILE --key TEXT --secret TEXT
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import subprocess

from mcp import Client, StdioServerParameters
from checks import expect, text_of


PEEK = """import json, os, sys, time
json.load(sys.stdin)
time.sleep(3)
print(json.dumps({"passed": os.environ.get("TOOLSMITH_TEST_LAUNCH_ENV"),
                  "secret_len": len(os.environ.get("LAUNCH_TOKEN", ""))}))
"""


def environ_holders(needle):
    """Processes whose environment holds `needle`: (pid, cmdline, in our pid namespace)."""
    ours = os.readlink("/proc/self/ns/pid")
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            ns = os.readlink(f"/proc/{pid}/ns/pid")
        except OSError:
            continue
        if needle in env:
            out.append((int(pid), os.fsdecode(cmd[0]), ns == ours))
    return out


def bwrap_environs(tool_dir):
    """The environment of every bubblewrap process sandboxing the tool."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if os.path.basename(cmd[0]) == b"bwrap" and os.fsencode(tool_dir) in cmd:
            out.append(env.decode(errors="replace"))
    return out


def person(a, *args, stdin=None):
    """The person at their terminal: a toolsmith command on the same toolbox."""
    r = subprocess.run([a.toolsmith, "--toolbox", a.toolbox, *args], input=stdin,
                       capture_output=True, text=True)
    expect(r.returncode == 0, f"toolsmith {' '.join(args)}: {r.stdout}\n{r.stderr}")


async def main():
    ap = argparse.ArgumentParser()
    for arg in ("toolsmith", "toolbox", "repo", "marker", "key", "secret"):
        ap.add_argument("--" + arg, required=True)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    root = os.path.realpath(a.toolbox)
    so = os.path.join(root, "tools", "x", "libdata.so")
    summary = {"texts": []}
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        r = await client.call_tool("import_tool", {"source": a.repo})
        expect(not r.is_error, f"import_tool: {text_of(r)}")
        expect(os.path.isfile(so), f"the imported tool's library is on disk: {so}")

        # The finding: an entry preloading a library of the toolbox into what starts it.
        refused = {}
        asks = {
            "entry_env": {"env": {"LD_PRELOAD": so}},
            "entry_gconv": {"env": {"GCONV_PATH": os.path.dirname(so)}},
            "entry_secret": {"secrets": ["LD_AUDIT"]},
            "entry_python": {"env": {"PYTHONSTARTUP": os.path.join(os.path.dirname(so), "main.py")}},
        }
        for case, ask in asks.items():
            r = await client.call_tool("import_mcp", {
                "name": "p", "command": "python3", "args": ["-c", "import sys; sys.exit(3)"], **ask})
            refused[case] = {"error": r.is_error, "text": text_of(r)}
        for case, ask in {
            "script_env": {"capabilities": {"env": ["LD_PRELOAD"]}},
            "script_secret": {"secrets": {"LD_LIBRARY_PATH": "where its libraries are"}},
            "script_node": {"capabilities": {"env": ["NODE_OPTIONS"]}},
        }.items():
            r = await client.call_tool("register_script", {
                "name": "bad", "description": "asks for a variable that steers its start",
                "language": "python", "protocol": "plain", "source": PEEK, **ask})
            refused[case] = {"error": r.is_error, "text": text_of(r)}
        summary["refused"] = refused
        summary["texts"] += [c["text"] for c in refused.values()]
        summary["entry_dir"] = os.path.exists(os.path.join(root, "tools", "p"))
        summary["script_dir"] = os.path.exists(os.path.join(root, "tools", "bad"))

        # A script with a variable and a secret a person approved.
        r = await client.call_tool("register_script", {
            "name": "peek", "description": "Shows what it was given",
            "language": "python", "protocol": "plain", "source": PEEK,
            "capabilities": {"env": ["TOOLSMITH_TEST_LAUNCH_ENV"]},
            "secrets": {"LAUNCH_TOKEN": "a token for the test"}})
        expect(not r.is_error, f"register peek: {text_of(r)}")
        person(a, "secret", "set", "LAUNCH_TOKEN", stdin=a.secret + "\n")
        person(a, "approve", "peek")
        call = asyncio.create_task(client.call_tool("peek", {}))
        holders, launchers = [], []
        for _ in range(300):
            holders = environ_holders(a.secret.encode())
            if holders:
                launchers = bwrap_environs(os.path.join(root, "tools", "peek"))
                break
            await asyncio.sleep(0.05)
        r = await call
        expect(not r.is_error, f"peek: {text_of(r)}")
        summary["peek"] = json.loads(text_of(r))
        summary["texts"].append(text_of(r))
        summary["holders"] = [{"program": p, "outside": outside} for _, p, outside in holders]
        summary["bwrap_environs"] = launchers
    summary["marker"] = os.path.exists(a.marker)
    summary["key_seen"] = any(a.key in t for t in summary.pop("texts"))
    print(json.dumps(summary))


asyncio.run(main())
