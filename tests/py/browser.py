"""A tiny driver for headless Chromium over the DevTools protocol on a pipe (fds 3 and 4,
`--remote-debugging-pipe`): open a page, fill in a field, submit the form, read the page text.
No third-party package: messages are JSON, each ended by a NUL byte."""
import json
import sys
import os
import shutil
import subprocess
import tempfile


class Browser:
    def __init__(self):
        # Debian's /usr/bin/chromium is a wrapper script; the binary keeps fds 3 and 4.
        exe = next((p for p in ("/usr/lib/chromium/chromium",) if os.path.exists(p)), None) \
            or shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            raise RuntimeError("chromium is not installed: run scripts/setup.sh")
        self.profile = tempfile.mkdtemp(prefix="toolsmith-chromium-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # The child's fds 3 (it reads) and 4 (it writes), set up by the shell that execs it.
        # (moved above 10 first: a pipe end may itself be fd 3 or 4)
        import fcntl
        r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", f'exec "$0" "$@" 3<&{r} 4>&{w} {r}<&- {w}>&-', exe,
             "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
            pass_fds=(r, w), stdout=subprocess.DEVNULL, stderr=(None if os.environ.get("BROWSER_DEBUG") else subprocess.DEVNULL))
        os.close(r)
        os.close(w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)

    def _read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.from_chrome, 65536)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_load(self, timeout=10.0):
        """Until the page's load event (or `timeout` seconds: the text is read anyway)."""
        import select
        import time
        end = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == "Page.loadEventFired":
                    del self.events[: i + 1]
                    return
            left = end - time.monotonic()
            if left <= 0:
                return
            if b"\0" not in self.buf:
                ready, _, _ = select.select([self.from_chrome], [], [], left)
                if not ready:
                    return
            self.events.append(self._read())

    def open(self, url):
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_load()
        self.settle()
        return self.text()

    def settle(self, timeout=10.0):
        """Until the document has loaded (a load event can be an earlier page's)."""
        import time
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.call("Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True},
                         session=True)["result"].get("value") == "complete":
                return
            time.sleep(0.05)

    def text(self):
        r = self.call("Runtime.evaluate", {"expression": "document.body ? document.body.innerText : ''",
                                           "returnByValue": True}, session=True)
        return r["result"].get("value", "")

    def fill_and_submit(self, field, value):
        self.events.clear()
        expr = (f"document.querySelector('input[name={field}]').value = {json.dumps(value)};"
                "document.querySelector('form').requestSubmit(); true")
        self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=True)
        self.wait_load()
        return self.text()

    def eval(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        return r["result"].get("value")

    def click(self, selector):
        """Click the element (a real mouse click at its centre), then wait for the next page."""
        import time
        end = time.monotonic() + 10
        while True:
            box = self.eval("(() => { const e = document.querySelector(SEL); if (!e) return null;"
                            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                            " return [r.x + r.width / 2, r.y + r.height / 2]; })()".replace("SEL", json.dumps(selector)))
            if box or time.monotonic() > end:
                break
            time.sleep(0.1)
        if not box:
            raise RuntimeError(f"no element {selector} on {self.eval('location.href')}: {self.eval('document.documentElement.outerHTML')[:600]}")
        self.events.clear()
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1}, session=True)
        self.wait_load()
        self.settle()
        return self.text()

    def rect(self, selector):
        return self.eval("(() => { const e = document.querySelector(SEL); if (!e) return null;"
                         " const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height,"
                         " viewport: [innerWidth, innerHeight]}; })()".replace("SEL", json.dumps(selector)))

    def screenshot(self, path, width=1100, height=900):
        """A PNG of the page as shown at that window size."""
        import base64
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                        "deviceScaleFactor": 1, "mobile": False}, session=True)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
