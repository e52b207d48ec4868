"""The console's Health page in headless Chromium (issue 43): the person opens the console
through its one-time login link, goes to Health, and sees the report drawn there — the failing
tool, the tool never called, the near-duplicate pair, and the charts as inline SVG (no script
and no external asset on the page).

Usage: health_console.py --toolsmith BIN --toolbox DIR --screenshot PNG
Prints one JSON summary line on stdout.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--toolsmith", required=True)
p.add_argument("--toolbox", required=True)
p.add_argument("--screenshot", required=True)
a = p.parse_args()

console = subprocess.Popen([a.toolsmith, "--toolbox", a.toolbox, "--json", "console", "--no-open"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
buf = ""
while True:
    line = console.stdout.readline()
    if not line:
        raise SystemExit(f"the console printed no link: {buf} {console.stderr.read()}")
    buf += line
    if line.startswith("}"):
        break
started = json.loads(buf)
browser = Browser()
summary = {}
try:
    browser.open(started["login"])
    summary["text"] = browser.open(started["url"] + "/health")
    summary["title"] = browser.eval("document.title")
    summary["svg_charts"] = browser.eval("document.querySelectorAll('figure svg').length")
    summary["bars"] = browser.eval("document.querySelectorAll('figure svg rect').length")
    summary["bar_titles"] = browser.eval("[...document.querySelectorAll('figure svg rect title')].map(t => t.textContent)")
    summary["scripts"] = browser.eval("document.querySelectorAll('script').length")
    summary["external"] = browser.eval("[...document.querySelectorAll('[src],link[href]')].length")
    summary["nav_active"] = browser.eval("(document.querySelector('header a.on') || {}).textContent")
    summary["charts_rect"] = browser.rect("#charts")
    browser.eval("document.querySelector('#charts').scrollIntoView()")
    browser.screenshot(a.screenshot)
finally:
    browser.close()
    console.terminate()
    console.wait()
print(json.dumps(summary))
