"""An AI's first attempt, through the official MCP Python SDK: the natural first steps of a
new user work, and every failure says what really went wrong (issue 11).

Usage: first_attempt.py --toolsmith BIN --toolbox DIR --scenario NAME [--mode legacy|auto]
       [--skills DIR]
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters, types
from checks import fail, expect, text_of


# One natural first script per language: read the JSON arguments on stdin, print JSON.
NAIVE = {
    "python": "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'sum': args['a'] + args['b']}))\n",
    "node": "const args = JSON.parse(require('fs').readFileSync(0, 'utf8'));\nconsole.log(JSON.stringify({sum: args.a + args.b}));\n",
    "bash": "read -r input\na=$(echo \"$input\" | sed -E 's/.*\"a\" *: *([0-9]+).*/\\1/')\nb=$(echo \"$input\" | sed -E 's/.*\"b\" *: *([0-9]+).*/\\1/')\necho \"{\\\"sum\\\": $((a + b))}\"\n",
    "ruby": "require 'json'\nargs = JSON.parse($stdin.read)\nputs JSON.generate({'sum' => args['a'] + args['b']})\n",
    "perl": "use JSON::PP;\nmy $a = decode_json(do { local $/; <STDIN> });\nprint encode_json({sum => $a->{a} + $a->{b}}), \"\\n\";\n",
    "php": "<?php\n$a = json_decode(stream_get_contents(STDIN), true);\necho json_encode(['sum' => $a['a'] + $a['b']]), \"\\n\";\n",
}

MEAN_RS = r'''
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    let xs: Vec<f64> = v["values"].as_array().unwrap().iter().filter_map(|x| x.as_f64()).collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    println!("{}", serde_json::json!({"mean": mean}));
}
'''


async def naive(client, summary):
    """Item 1 and the naive agent: one plain script per language, no protocol field."""
    got = {}
    for lang, code in NAIVE.items():
        name = f"add_{lang}"
        r = await client.call_tool("register_script", {
            "name": name, "language": lang, "description": f"Add two numbers ({lang})",
            "source": code,
            "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
            "examples": [{"input": {"a": 1, "b": 2}, "output": {"sum": 3}}],
        })
        expect(not r.is_error, f"register_script {lang} failed: {text_of(r)}")
        reg = r.structured_content
        t0 = time.monotonic()
        c = await client.call_tool(name, {"a": 20, "b": 22})
        ms = int((time.monotonic() - t0) * 1000)
        expect(not c.is_error, f"calling {name} failed: {text_of(c)}")
        g = await client.call_tool("get_tool", {"name": name})
        got[lang] = {"protocol": reg.get("protocol"), "protocol_from": reg.get("protocol_from"),
                     "result": c.structured_content, "ms": ms,
                     "get_tool_protocol": (g.structured_content or {}).get("protocol")}
    summary["naive"] = got
    # A script written with the template helper is detected as jsonrpc.
    r = await client.call_tool("register_script", {
        "name": "hello_rpc", "language": "python", "description": "Greet",
        "source": summary_template(),
        "examples": [{"input": {"text": "Ada"}, "output": {"message": "Hello, Ada!"}}],
    })
    expect(not r.is_error, f"register_script with the helper failed: {text_of(r)}")
    summary["helper_protocol"] = r.structured_content.get("protocol")
    # A Rust tool whose example writes the float result 2.0 as `2`.
    r = await client.call_tool("build_tool", {
        "name": "mean", "description": "The mean of a list of numbers", "source": MEAN_RS,
        "input_schema": {"type": "object", "properties": {"values": {"type": "array", "items": {"type": "number"}}}},
        "examples": [{"input": {"values": [1, 2, 3]}, "output": {"mean": 2}}],
    })
    expect(not r.is_error, f"build_tool with an integer-spelled float example failed: {text_of(r)}")
    c = await client.call_tool("mean", {"values": [1, 2]})
    expect(not c.is_error, f"calling mean failed: {text_of(c)}")
    summary["mean"] = c.structured_content


def summary_template():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "templates", "python", "main.py")
    return open(path).read().replace("{{name}}", "hello_rpc").replace("{{description}}", "Greet")


async def errors(client, summary):
    """Items 1 (mismatch) and 3: what a failing script said reaches the caller."""
    r = await client.call_tool("register_script", {
        "name": "forced_rpc", "language": "python", "protocol": "jsonrpc",
        "description": "A plain script registered as jsonrpc", "limits": {"timeout_ms": 1500},
        "source": NAIVE["python"],
    })
    expect(not r.is_error, f"register forced_rpc failed: {text_of(r)}")
    c = await client.call_tool("forced_rpc", {"a": 1, "b": 2})
    summary["mismatch"] = {"is_error": c.is_error, "text": text_of(c)}

    r = await client.call_tool("register_script", {
        "name": "fails_stderr", "language": "python", "description": "Fails with a message",
        "source": "import sys\nsys.stderr.write('the input has no field `city`\\n')\nsys.exit(3)\n",
    })
    expect(not r.is_error, f"register fails_stderr failed: {text_of(r)}")
    c = await client.call_tool("fails_stderr", {})
    summary["stderr"] = {"is_error": c.is_error, "text": text_of(c)}

    r = await client.call_tool("register_script", {
        "name": "fails_stdout", "language": "bash", "description": "Fails, saying why on stdout",
        "source": "echo 'usage: give a positive number'\nexit 2\n",
    })
    expect(not r.is_error, f"register fails_stdout failed: {text_of(r)}")
    c = await client.call_tool("fails_stdout", {})
    summary["stdout"] = {"is_error": c.is_error, "text": text_of(c)}


async def strict(client, summary):
    """Item 2: examples compare values; unknown keys are refused with a suggestion."""
    r = await client.call_tool("register_script", {
        "name": "typo", "language": "python", "description": "Typo in an example",
        "source": NAIVE["python"],
        "examples": [{"input": {"a": 1, "b": 2}, "expected_output": {"sum": 4}}],
    })
    summary["unknown_example_key"] = {"is_error": r.is_error, "text": text_of(r)}
    r = await client.call_tool("register_script", {
        "name": "typo2", "language": "python", "description": "Typo in a field",
        "source": NAIVE["python"], "timeout_ms": 100,
    })
    summary["unknown_field"] = {"is_error": r.is_error, "text": text_of(r)}
    r = await client.call_tool("register_script", {
        "name": "floaty", "language": "python", "description": "Half of a number",
        "source": "import json, sys\na = json.load(sys.stdin)\nprint(json.dumps({'half': a['n'] / 2, 'items': [1, a['n']]}))\n",
        "examples": [{"input": {"n": 4}, "output": {"half": 2, "items": [1, 4.0]}},
                     {"input": {"n": 3}, "output": {"half": 1.5, "items": [1, 4]}}],
    })
    summary["wrong_example"] = {"is_error": r.is_error, "text": text_of(r)}


async def typed(client, summary):
    """The meta-tools' output schemas type their main keys, and every result on every path
    tried here conforms: the SDK checks each result against the schema it listed (and raises)."""
    listed = {t.name: (t.output_schema or {}) for t in (await client.list_tools()).tools}
    summary["typed"] = {n: sorted((s.get("properties") or {}).keys()) for n, s in listed.items()}
    ok = lambda r, what: expect(not r.is_error, f"{what}: {text_of(r)}")
    src = NAIVE["python"]
    for version in ("v1", "v2"):
        ok(await client.call_tool("register_script", {
            "name": "adder", "language": "python", "description": f"Adds two numbers ({version})",
            "source": src if version == "v1" else src + "# v2\n",
            "examples": [{"input": {"a": 1, "b": 2}, "output": {"sum": 3}}]}), "register_script")
    calls = [
        ("list_tools", {}), ("get_tool", {"name": "adder"}),
        ("get_tool", {"name": "adder", "revision": "HEAD~1"}),
        ("search_tools", {"query": "add numbers"}), ("tool_history", {"name": "adder"}),
        ("diff_tool", {"name": "adder", "from": "HEAD~1"}),
        ("memory", {"action": "store", "name": "adder", "key": "k", "value": {"n": 1}}),
        ("memory", {"action": "get", "name": "adder", "key": "k"}),
        ("memory", {"action": "get", "name": "adder", "key": "absent"}),
        ("memory", {"action": "list", "name": "adder"}), ("memory", {"action": "stats"}),
        ("pipeline", {"action": "list"}),
        ("call_tool", {"name": "adder", "arguments": {"a": 2, "b": 3}}),
    ]
    summary["typed_keys"] = {}
    for name, args in calls:
        r = await client.call_tool(name, args)
        ok(r, f"{name} {args}")
        summary["typed_keys"].setdefault(name, []).append(sorted(r.structured_content or {}))


LOGGER = """import sys, json
def run(args, ctx):
    for i in range(5):
        log(f"step {i}")
    return {"done": True}
"""


async def consistent(client, summary, toolbox, changes, logs):
    """Item 6: results are consistent."""
    # A script tool that logs before answering (jsonrpc, through the template helper).
    helper = summary_template()
    helper = helper[helper.index("# --- toolsmith jsonrpc helper"):]
    r = await client.call_tool("register_script", {
        "name": "logger", "language": "python", "description": "Logs five lines, then answers",
        "source": LOGGER + helper,
    })
    expect(not r.is_error, f"register logger failed: {text_of(r)}")
    order = []
    logs.clear()
    r = await client.call_tool("logger", {})
    order.append(("result", len(logs)))
    summary["logs_before_result"] = [str(getattr(l, "data", l)) for l in logs]

    # execute_code: text and structuredContent carry the same value.
    r = await client.call_tool("execute_code", {"language": "javascript", "code": "return (await tools.add_python({a: 2, b: 3})).sum * 2;"})
    expect(not r.is_error, f"execute_code failed: {text_of(r)}")
    summary["execute_code"] = {"text": json.loads(text_of(r)), "structured": r.structured_content}

    # Every meta-tool's success carries structured content equal to its text.
    same = {}
    for name, args in [("list_tools", {}), ("get_tool", {"name": "logger"}), ("search_tools", {"query": "logs"}),
                       ("tool_history", {"name": "logger"}), ("memory", {"action": "stats"}),
                       ("pipeline", {"action": "list"}), ("call_tool", {"name": "add_python", "arguments": {"a": 1, "b": 1}})]:
        r = await client.call_tool(name, args)
        expect(not r.is_error, f"{name} failed: {text_of(r)}")
        same[name] = json.loads(text_of(r)) == r.structured_content
    summary["text_equals_structured"] = same

    # A call by its own name to an unknown or deleted tool: an isError result, not -32602.
    r = await client.call_tool("add_pythn", {"a": 1, "b": 2})
    summary["unknown"] = {"is_error": r.is_error, "text": text_of(r)}
    r = await client.call_tool("delete_tool", {"name": "add_node"})
    expect(not r.is_error, f"delete_tool failed: {text_of(r)}")
    r = await client.call_tool("add_node", {"a": 1, "b": 2})
    summary["deleted"] = {"is_error": r.is_error, "text": text_of(r)}

    # memory for a tool that does not exist is refused; the old `tool` spelling still works.
    r = await client.call_tool("memory", {"action": "store", "name": "ghost", "key": "k", "value": 1})
    summary["memory_ghost"] = {"is_error": r.is_error, "text": text_of(r)}
    r = await client.call_tool("memory", {"action": "store", "tool": "logger", "key": "k", "value": 1})
    summary["memory_alias"] = {"is_error": r.is_error, "structured": r.structured_content}

    # A git commit by hand that changes no tool sends no list_changed.
    await asyncio.sleep(0.8)
    before = len(changes)
    import subprocess
    with open(os.path.join(toolbox, "NOTES.md"), "w") as f:
        f.write("notes\n")
    subprocess.run(["git", "-C", toolbox, "add", "NOTES.md"], check=True)
    subprocess.run(["git", "-C", toolbox, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notes"], check=True)
    await asyncio.sleep(1.0)
    summary["commit_notifications"] = len(changes) - before


async def naive_then_consistent(client, summary, toolbox, changes, logs):
    await naive_minimal(client)
    await consistent(client, summary, toolbox, changes, logs)


async def naive_minimal(client):
    for lang in ["python", "node"]:
        r = await client.call_tool("register_script", {
            "name": f"add_{lang}", "language": lang, "description": f"Add two numbers ({lang})",
            "source": NAIVE[lang],
        })
        expect(not r.is_error, f"register add_{lang} failed: {text_of(r)}")


async def cap(client, summary, a):
    """Item 9: past the cap the tool list ranks, it never drops to nothing."""
    meta = set()
    # The whole index first (a loaded machine may take longer than the first tools/list waits
    # for it, which then lists the recently used tools only: the start-up path, not this one).
    r = await client.call_tool("list_tools", {"limit": 1000})
    stored = {t["name"] for t in r.structured_content["tools"]}
    tools = (await client.list_tools()).tools
    listed = [t.name for t in tools if t.name in stored]
    summary["listed_before"] = listed
    r = await client.call_tool("call_tool", {"name": "t204", "arguments": {"text": "x"}})
    expect(not r.is_error, f"call_tool t204 failed: {text_of(r)}")
    r = await client.call_tool("t203", {"text": "y"})
    expect(not r.is_error, f"t203 by its own name failed: {text_of(r)}")
    tools = (await client.list_tools()).tools
    summary["listed_after"] = [t.name for t in tools if t.name in stored]
    res = await client.read_resource("toolsmith://guide")
    summary["guide"] = res.contents[0].text
    summary["meta_bytes"] = len(json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in tools if t.name not in stored], separators=(",", ":")))


def grant_network(toolsmith, toolbox, name):
    """A person grants a tool the network: tool.toml edited and committed, then approved on
    this machine (`toolsmith approve`); the server follows the tree (the watcher)."""
    path = os.path.join(toolbox, "tools", name, "tool.toml")
    with open(path) as f:
        text = f.read()
    if "[capabilities]" in text:
        text = text.replace("[capabilities]", "[capabilities]\nnetwork = true", 1)
    else:
        text += "\n[capabilities]\nnetwork = true\n"
    with open(path, "w") as f:
        f.write(text)
    subprocess.run(["git", "-C", toolbox, "add", "-A"], check=True)
    subprocess.run(["git", "-C", toolbox, "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", f"grant {name} the network"], check=True)
    subprocess.run([toolsmith, "--toolbox", toolbox, "approve", name], check=True,
                   stdout=subprocess.DEVNULL)
    time.sleep(1.5)


async def skills(client, summary, a):
    """Item 8: Agent Skills imported as what they are."""
    r = await client.call_tool("import_tool", {"source": a.skills})
    expect(not r.is_error, f"import_tool failed: {text_of(r)}")
    out = r.structured_content
    summary["imported"] = sorted(t["name"] for t in out["tools"])
    summary["notes"] = {t["name"]: t["notes"] for t in out["tools"]}
    summary["refused"] = out.get("refused", [])
    # Imported tools are held until a person on this machine trusts them (tests/it/team.rs).
    for t in out["tools"]:
        subprocess.run([a.toolsmith, "--toolbox", a.toolbox, "trust", t["name"]], check=True, stdout=subprocess.DEVNULL)
    res = await client.list_resources()
    summary["resources"] = sorted(str(x.uri) for x in res.resources)
    r = await client.read_resource("toolsmith://skills/brand-guidelines")
    summary["brand_resource"] = r.contents[0].text[:400]
    summary["guide"] = (await client.read_resource("toolsmith://guide")).contents[0].text
    r = await client.call_tool("brand-guidelines", {})
    summary["brand_call"] = {"is_error": r.is_error, "text": text_of(r)[:400]}
    r = await client.call_tool("slack-gif-creator", {})
    summary["slack_call"] = {"is_error": r.is_error, "text": text_of(r)[:200]}
    tools = (await client.list_tools()).tools
    web = next(t for t in tools if t.name == "webapp-testing")
    summary["webapp_schema"] = web.input_schema
    # with_server.py starts a server on 127.0.0.1: the sandbox cuts the network off unless the
    # tool is granted it, which a person does by hand (an edit of tool.toml, committed).
    grant_network(a.toolsmith, a.toolbox, "webapp-testing")
    r = await client.call_tool("webapp-testing", {
        "servers": ["python3 -m http.server 18765 --bind 127.0.0.1"], "ports": [18765], "timeout": 20,
        "command": ["python3", "-c", "print('probe ok')"]})
    summary["webapp_call"] = {"is_error": r.is_error, "text": text_of(r)}
    r = await client.call_tool("webapp-testing", {"servers": ["true", "true"], "ports": [1], "command": ["true"]})
    summary["webapp_missing"] = {"is_error": r.is_error, "text": text_of(r)}
    # A skill with several scripts: a tool per script, its instructions under each tool's name.
    r = await client.read_resource("toolsmith://skills/port-tools-check_port")
    summary["port_resource"] = r.contents[0].text[:200]
    r = await client.call_tool("port-tools-check_port", {"port": 9, "timeout": 0.5})
    summary["port_call"] = {"is_error": r.is_error, "text": text_of(r)}
    r = await client.call_tool("get_tool", {"name": "webapp-testing"})
    summary["get_small"] = len(text_of(r))
    summary["get_small_has_text"] = any("text" in f for f in r.structured_content["files"])
    r = await client.call_tool("get_tool", {"name": "webapp-testing", "include_source": True})
    summary["get_full_has_text"] = any("text" in f for f in r.structured_content["files"])


SCENARIOS = {"naive": naive, "errors": errors, "strict": strict, "typed": typed, "consistent": naive_then_consistent, "cap": cap, "skills": skills}


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    ap.add_argument("--mode", default="legacy")
    ap.add_argument("--skills")
    a = ap.parse_args()
    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env={**os.environ})
    summary = {"mode": a.mode, "skills": a.skills}
    changes, logs = [], []

    async def on_message(msg):
        method = getattr(msg, "method", None) or getattr(getattr(msg, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            changes.append(time.monotonic())

    async def on_log(params):
        logs.append(params)

    async with Client(server, mode=a.mode, cache=None, read_timeout_seconds=300,
                      message_handler=on_message, logging_callback=on_log) as client:
        f = SCENARIOS[a.scenario]
        if f is naive_then_consistent:
            await f(client, summary, a.toolbox, changes, logs)
        elif a.scenario in ("skills", "cap"):
            await f(client, summary, a)
        else:
            await f(client, summary)
    print(json.dumps(summary))


asyncio.run(main())
