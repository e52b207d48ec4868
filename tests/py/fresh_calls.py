"""Every call starts fresh, by every path (issue 39): a Python tool's calls through a fork
server, a spare or a process started for the call each look for what the call before left in
/tmp, /dev/shm, its working directory, HOME, / and /dev, SysV IPC (shared memory, message queue,
semaphores) and POSIX IPC (shared memory, a named semaphore, a message queue), then leave a
marker in each, and fill /dev/shm past its cap (a 320 MiB file). The server is started by the
caller with the path it tests (`TOOLSMITH_SPARES`, `TOOLSMITH_FORK_SERVERS`) and the
mechanism (`TOOLSMITH_BWRAP`); this client checks that the path is the one taken (the fork
server's and the spares' processes, seen from the host).

Usage: fresh_calls.py --toolsmith BIN --toolbox DIR --path fork|spare|cold --nonce N
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import time

from mcp import Client, StdioServerParameters
from checks import expect, text_of


PROBE = r'''import ctypes, errno, json, os, sys
a = json.load(sys.stdin)
n = a["nonce"]
key = 0x5a000000 + n % 0xffffff
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.restype = ctypes.c_int
libc.sem_open.restype = ctypes.c_void_p
names = {
    "tmp": "/tmp/left-%d" % n,
    "shm": "/dev/shm/left-%d" % n,
    "cwd": os.path.join(os.getcwd(), "left-%d" % n),
    "home": os.path.join(os.environ["HOME"], ".left-%d" % n),
    "root": "/left-%d" % n,
    "dev": "/dev/left-%d" % n,
}
found, left = {}, {}
for k, p in names.items():
    found[k] = os.path.exists(p)
found["big"] = os.path.exists("/dev/shm/big-%d" % n)
found["sysv_shm"] = libc.shmget(key, 0, 0) >= 0
found["sysv_msg"] = libc.msgget(key, 0) >= 0
found["sysv_sem"] = libc.semget(key, 0, 0) >= 0
found["posix_shm"] = libc.shm_open(b"/psx-%d" % n, os.O_RDONLY, 0) >= 0
found["posix_sem"] = (libc.sem_open(b"/sem-%d" % n, 0) or 0) not in (0, 2**64 - 1)
found["posix_mq"] = libc.mq_open(b"/mq-%d" % n, os.O_RDONLY) >= 0
def why():
    return errno.errorcode.get(ctypes.get_errno(), "?")
for k, p in names.items():
    try:
        with open(p, "w") as f:
            f.write("left by an earlier call")
        left[k] = "written"
    except OSError as e:
        left[k] = "denied: " + errno.errorcode.get(e.errno, "?")
left["sysv_shm"] = "written" if libc.shmget(key, 4096, 0o1000 | 0o600) >= 0 else "denied: " + why()
left["sysv_msg"] = "written" if libc.msgget(key, 0o1000 | 0o600) >= 0 else "denied: " + why()
left["sysv_sem"] = "written" if libc.semget(key, 1, 0o1000 | 0o600) >= 0 else "denied: " + why()
left["posix_shm"] = "written" if libc.shm_open(b"/psx-%d" % n, os.O_CREAT | os.O_RDWR, 0o600) >= 0 else "denied: " + why()
sem = libc.sem_open(b"/sem-%d" % n, os.O_CREAT, 0o600, 0)
left["posix_sem"] = "written" if sem not in (None, 0, 2**64 - 1) else "denied: " + why()
left["posix_mq"] = "written" if libc.mq_open(b"/mq-%d" % n, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0 else "denied: " + why()
# Last: /dev/shm filled past its cap (what is written before needs room there).
written = 0
try:
    with open("/dev/shm/big-%d" % n, "wb") as f:
        chunk = b"x" * (1 << 20)
        for _ in range(320):
            f.write(chunk)
            f.flush()
            written += 1
except OSError as e:
    left["big_error"] = errno.errorcode.get(e.errno, "?")
left["big_mib"] = written
print(json.dumps({"found": found, "left": left, "home_is_cwd": os.environ["HOME"] == os.getcwd()}))
'''

# What the stubs' command lines hold (a fork server's holds the spare's stub too).
FORK_MARK = b"_toolsmith_fork_server"
SPARE_MARK = b"_toolsmith_spare"


def processes(tool_dir):
    """The host's processes of the tool (its variable TOOLSMITH_TOOL_DIR set): cmdlines."""
    want = b"TOOLSMITH_TOOL_DIR=" + os.fsencode(tool_dir) + b"\0"
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read() + b"\0"
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if want in env:
            out.append(cmd)
    return out


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--path", required=True, choices=["fork", "spare", "cold"])
    ap.add_argument("--nonce", required=True, type=int)
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=dict(os.environ))
    tool_dir = os.path.join(os.path.realpath(a.toolbox), "tools", "leaves")
    summary = {"path": a.path, "calls": []}
    async with Client(server, mode="legacy", cache=None, read_timeout_seconds=120) as client:
        r = await client.call_tool("register_script", {
            "name": "leaves", "description": "Looks for what an earlier call left, then leaves it",
            "language": "python", "protocol": "plain", "source": PROBE})
        expect(not r.is_error, f"register_script: {text_of(r)}")
        for i in range(3):
            r = await client.call_tool("leaves", {"nonce": a.nonce})
            expect(not r.is_error, f"call {i}: {text_of(r)}")
            summary["calls"].append(json.loads(text_of(r)))
        # The path taken, seen from the host: a fork server of the tool, its spares, or neither.
        seen = []
        for _ in range(200):
            seen = processes(tool_dir)
            forked = any(FORK_MARK in c for c in seen)
            spares = any(SPARE_MARK in c and FORK_MARK not in c for c in seen)
            if (a.path, forked, spares) in (("fork", True, False), ("spare", False, True)):
                break
            if a.path == "cold":
                break
            time.sleep(0.1)
        summary["fork_server"] = any(FORK_MARK in c for c in seen)
        summary["spares"] = any(SPARE_MARK in c and FORK_MARK not in c for c in seen)
    print(json.dumps(summary))


asyncio.run(main())
