"""The person's own channel (issue 25), with the official Python SDK and headless Chromium.

An MCP client whose elicitation callback accepts everything (as agent loops and auto-accepting
harnesses do) registers tools asking for an environment variable, a secret, a write root, an
unsandboxed run and the network: it obtains none of them. Then `toolsmith console` runs: a
foreign Host header, the console's link without a session, a reused login link and a cross-site
form post are refused; the person, logged in through the link printed on the terminal, approves
in the console (a real click in Chromium, while the MCP call waits on the URL-mode elicitation)
and the same call goes through; denies, sets a secret, reads the audit log, rolls a tool back.

Usage: console.py --toolsmith BIN --toolbox DIR --work DIR --mode legacy|auto --screenshot PNG
Prints one JSON summary line on stdout; exits non-zero when an expectation fails.
"""
import argparse
import asyncio
import http.client
import http.server
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp import Client, StdioServerParameters, types  # noqa: E402
from checks import expect, text_of  # noqa: E402
from browser import Browser  # noqa: E402

ENV_VALUE = "visible-env-value-31"
TOKEN = "console-token-8d2f6a1b"
NEW_SECRET = "typed-in-the-console-77"

ENV_CODE = "import json, os, sys\njson.load(sys.stdin)\nprint(json.dumps({'seen': os.environ.get('TOOLSMITH_TEST_CONSOLE_ENV')}))\n"
TOKEN_CODE = "import json, os, sys\njson.load(sys.stdin)\nv = os.environ.get('CONSOLE_TOKEN')\nprint(json.dumps({'token': v, 'len': len(v or '')}))\n"
WRITE_CODE = """import json, os, sys
a = json.load(sys.stdin)
try:
    with open(os.path.join(a['dir'], 'written.txt'), 'w') as f:
        f.write('x')
    print(json.dumps({'wrote': True, 'v': %d}))
except OSError as e:
    print(json.dumps({'wrote': False, 'v': %d}))
"""
PLAIN_CODE = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'ran': True}))\n"
NET_CODE = """import json, socket, sys
a = json.load(sys.stdin)
try:
    socket.create_connection(('127.0.0.1', a['port']), timeout=3).close()
    print(json.dumps({'connected': True}))
except OSError:
    print(json.dumps({'connected': False}))
"""


def cli(a, env, *args, stdin=None):
    return subprocess.run([a.toolsmith, "--toolbox", a.toolbox, *args], input=stdin, capture_output=True,
                          text=True, env=env)


def status_of(url, method="GET", headers=None, data=None):
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        return urllib.request.urlopen(req).status
    except urllib.error.HTTPError as e:
        return e.code


class Evil(http.server.BaseHTTPRequestHandler):
    """Another site on this machine: a page whose form posts to the console."""
    page = b""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(Evil.page)

    def log_message(self, *args):
        pass


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolsmith", required=True)
    ap.add_argument("--toolbox", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mode", default="legacy")
    ap.add_argument("--screenshot", required=True)
    a = ap.parse_args()
    env = {**os.environ, "TOOLSMITH_TEST_CONSOLE_ENV": ENV_VALUE, "TOOLSMITH_APPROVAL_WAIT": "2"}
    out_dir = os.path.join(a.work, "out")
    os.makedirs(out_dir, exist_ok=True)
    summary = {"mode": a.mode}
    r = cli(a, env, "secret", "set", "CONSOLE_TOKEN", stdin=TOKEN + "\n")
    expect(r.returncode == 0, f"secret set: {r.stderr}")

    asked = []
    drive = {"fn": None}

    async def always_accept(ctx, params):
        mode = getattr(params, "mode", None) or "form"
        asked.append({"mode": mode, "message": params.message, "url": getattr(params, "url", None)})
        if mode == "url":
            if drive["fn"]:
                await asyncio.to_thread(drive["fn"], params.url)
            return types.ElicitResult(action="accept")
        content = {}
        for k, p in (params.requested_schema.get("properties") or {}).items():
            content[k] = p.get("default") or (p.get("enum") or ["yes"])[0]
        return types.ElicitResult(action="accept", content=content)

    server = StdioServerParameters(command=a.toolsmith, args=["--toolbox", a.toolbox, "serve"], env=env)
    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    port = listener.server_address[1]
    calls = {
        "env_t": ({}, ENV_VALUE),
        "secret_t": ({}, TOKEN),
        "write_t": ({"dir": out_dir}, None),
        "unsandboxed_t": ({}, None),
        "net_t": ({"port": port}, None),
    }
    console = None
    try:
        async with Client(server, mode=a.mode, cache=None, read_timeout_seconds=120,
                          elicitation_callback=always_accept) as client:
            for name, code, extra in [
                ("env_t", ENV_CODE, {"capabilities": {"env": ["TOOLSMITH_TEST_CONSOLE_ENV"]}}),
                ("secret_t", TOKEN_CODE, {"secrets": ["CONSOLE_TOKEN"]}),
                ("write_t", WRITE_CODE % (1, 1), {"capabilities": {"write": [out_dir]}}),
                ("unsandboxed_t", PLAIN_CODE, {"sandbox": "none"}),
                ("net_t", NET_CODE, {"capabilities": {"network": True}}),
            ]:
                r = await client.call_tool("register_script", {
                    "name": name, "description": f"Test tool {name}", "language": "python",
                    "protocol": "plain", "source": code, **extra})
                expect(not r.is_error, f"register {name}: {text_of(r)}")

            # 1. Against a client that accepts every elicitation, nothing is obtained.
            obtained = {}
            for name, (args, value) in calls.items():
                r = await client.call_tool(name, args)
                t = text_of(r)
                obtained[name] = not r.is_error or (value is not None and value in t)
                expect(r.is_error and "was not run" in t, f"{name} ran: {t}")
                expect("toolsmith console" in t, f"the error names the console: {t}")
            summary["obtained"] = obtained
            summary["wrote"] = os.path.exists(os.path.join(out_dir, "written.txt"))
            summary["told"] = len(asked)
            summary["told_how"] = all("toolsmith console" in q["message"] for q in asked)
            summary["tool_label"] = all(q["message"].startswith("toolsmith:") for q in asked)
            pending = json.loads(cli(a, env, "--json", "pending").stdout)
            summary["pending"] = sorted(p["name"] for p in pending)
            log = json.loads(cli(a, env, "--json", "audit").stdout)
            summary["approved_events"] = [e for e in log if e["event"].startswith("approved")]

            # 2. The console: started by the person in their terminal.
            console = subprocess.Popen([a.toolsmith, "--toolbox", a.toolbox, "--json", "console", "--no-open"],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            buf = ""
            while True:
                line = console.stdout.readline()
                expect(line, f"the console printed its link: {buf} {console.stderr.read() if console.poll() is not None else ''}")
                buf += line
                if line.startswith("}"):
                    break
            started = json.loads(buf)
            base, login = started["url"], started["login"]
            summary["loopback"] = urlsplit(base).hostname == "127.0.0.1"
            host = urlsplit(base).netloc
            conn = http.client.HTTPConnection(host)
            conn.request("GET", "/approvals", headers={"Host": "evil.example"})
            summary["foreign_host"] = conn.getresponse().status
            conn.close()
            conn = http.client.HTTPConnection(host)
            conn.request("GET", login.replace(base, ""), headers={"Host": f"evil.example:{host.split(':')[1]}"})
            summary["foreign_host_login"] = conn.getresponse().status
            conn.close()
            summary["no_session_post"] = status_of(base + "/approve", "POST", data=b"name=env_t&content=x&csrf=x")

            stranger = Browser()  # the AI's browser tool, with the link the client was given
            person = Browser()
            try:
                summary["stolen_link_text"] = stranger.open(base + "/approvals#tool-env_t")
                text = person.open(login)
                summary["approvals_text"] = text
                summary["screenshot_item"] = person.rect("#tool-env_t")
                person.screenshot(a.screenshot)
                summary["reused_login_text"] = stranger.open(login)
                summary["stranger_after"] = stranger.open(base + "/secrets")

                # A cross-site form post (another origin on this machine; SameSite lets the
                # cookie go with it, since the site is the same host): refused, even carrying
                # the real CSRF token.
                csrf = person.eval("document.querySelector('input[name=csrf]').value")
                content = person.eval("document.querySelector('#tool-env_t input[name=content]').value")
                for label, origin, token in [("cross_site_guess", "localhost", "0" * 64),
                                             ("cross_site_token", "127.0.0.1", csrf)]:
                    Evil.page = (f"<form method=post action='{base}/approve'><input name=name value=env_t>"
                                 f"<input name=content value='{content}'><input name=csrf value='{token}'>"
                                 "<button id=go>go</button></form>").encode()
                    person.open(f"http://{origin}:{port}/evil")
                    summary[label] = person.click("#go")
                pending = json.loads(cli(a, env, "--json", "pending").stdout)
                summary["pending_after_cross_site"] = sorted(p["name"] for p in pending)

                # 3. The person approves in the console while the call waits: the same call
                # goes through.
                clicked = []

                def approve_in_console(url):
                    expect(url.startswith(base + "/approvals"), f"the console's page: {url}")
                    name = url.split("#tool-", 1)[1]
                    person.open(url)
                    clicked.append(person.click(f"#tool-{name} form[action='/approve'] button"))

                drive["fn"] = approve_in_console
                before = len(asked)
                r = await client.call_tool("env_t", {})
                summary["env_after"] = r.structured_content if not r.is_error else text_of(r)
                r = await client.call_tool("secret_t", {})
                summary["secret_after"] = r.structured_content if not r.is_error else text_of(r)
                summary["secret_value_in_result"] = TOKEN in text_of(r)
                summary["url_asks"] = [q["mode"] for q in asked[before:]]
                summary["clicked"] = clicked
                drive["fn"] = None

                # Deny in the console: the tool runs with the defaults only.
                person.open(base + "/approvals")
                summary["denied_text"] = person.click("#tool-net_t form[action='/deny'] button")
                r = await client.call_tool("net_t", {"port": port})
                summary["net_after"] = [r.is_error, r.structured_content, "denied" in text_of(r)]

                # Secrets: typed in the page, never shown back; the tools that use each.
                person.open(base + "/secrets")
                person.eval(f"document.querySelector('input[name=name][type=text]').value = 'NEW_ONE';"
                            f"document.querySelector('input[name=name][type=text]').form.querySelector('input[name=value]').value = {json.dumps(NEW_SECRET)}; true")
                text = person.click("input[name=name][type=text] ~ button")
                summary["secret_set_text"] = text
                summary["secret_value_shown"] = NEW_SECRET in person.eval("document.documentElement.outerHTML")
                listing = json.loads(cli(a, env, "--json", "secret", "list").stdout)
                summary["secrets"] = {s["name"]: [s["set"], s["tools"]] for s in listing}

                # The audit log, filtered by tool and time.
                summary["audit_text"] = person.open(base + "/audit?tool=env_t&since=1h")
                summary["audit_bad_since"] = person.open(base + "/audit?since=yesterday-ish")

                # History with diffs, and rollback.
                r = await client.call_tool("register_script", {
                    "name": "write_t", "description": "Test tool write_t", "language": "python",
                    "protocol": "plain", "source": WRITE_CODE % (2, 2), "capabilities": {"write": [out_dir]}})
                expect(not r.is_error, f"re-register: {text_of(r)}")
                summary["history_text"] = person.open(base + "/tools/write_t")
                summary["rollback_text"] = person.click("section.version:nth-of-type(2) form[action='/rollback'] button")
                summary["held_text"] = person.open(base + "/held")
            finally:
                stranger.close()
                person.close()
    finally:
        listener.shutdown()
        if console:
            console.terminate()
            console.wait(timeout=10)
    summary["console_file_left"] = os.path.exists(os.path.join(os.environ["TOOLSMITH_DATA"], "console.json"))
    print(json.dumps(summary))


asyncio.run(main())
