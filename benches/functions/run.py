"""Real functions as tools: each MBPP problem's solution made a tool the way an AI would, as a
script (`register_script`, a thin JSON wrapper) and as a Python component (`build_tool`,
`language = "python"`, the solution as it is plus the input schema an AI infers), then checked
by the problem's own `assert`s, each call of the function made through MCP (`toolsmith serve`
over stdio, the official Python SDK). Prints a table and a JSON summary.

Usage: run.py [--toolsmith BIN] [--data FILE] [--limit N] [--component-limit N]
              [--forms script,component] [--json FILE]
Run it with `cargo bench --bench functions` (the release binary; arguments after `--`), or
directly with the test venv's Python (scripts/setup.sh) and any toolsmith binary.
"""
import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import problems as P  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FORMS = ("script", "component")
# Why a problem does not pass, in the order a failure is looked for.
CLASSES = ("build error", "WIT mapping", "register error", "input refused", "runtime error",
           "client error", "JSON limits", "wrong result")


def text_of(r):
    return "".join(getattr(c, "text", "") for c in r.content)


def first_line(s, n=200):
    """What a failure says in one line: a Python traceback's last line (the exception), else
    the first line."""
    lines = [x.strip() for x in (s or "").strip().splitlines() if x.strip()]
    if not lines:
        return ""
    if any("Traceback (most recent call last)" in x for x in lines):
        # The exception line: the last one that is not a hint of toolsmith's.
        tail = [x for x in lines if not x.startswith("hint:")]
        return tail[-1][:n]
    return lines[0][:n]


def decode(r):
    """The function's return value as the client sees it: the first text block as JSON (a
    script's stdout; toolsmith sends structured content only for an object, in the text too),
    else the structured content, else the text. A lone `{"result": …}` is unwrapped (how a
    component's non-object value may travel; no selected problem returns such a dict)."""
    text = next((c.text for c in r.content if getattr(c, "text", None) is not None), "")
    try:
        v = json.loads(text)
    except ValueError:
        v = r.structured_content if isinstance(r.structured_content, dict) else text
    if isinstance(v, dict) and set(v) == {"result"}:
        return v["result"]
    return v


def register_request(p, form):
    """What an AI sends for a problem: the script wrapper, or the solution as it is."""
    req = {"name": p.tool, "description": p.description(), "input_schema": p.schema}
    if form == "script":
        req.update(language="python", source=P.script_source(p.code, p.entry, p.tuple_params))
    else:
        req.update(language="python", source=p.code)
    return req


def build_class(text):
    t = text.lower()
    if "wit" in t and ("schema" in t or "type" in t or "map" in t):
        return "WIT mapping"
    return "build error"


async def check(client, p):
    """Run the problem's asserts through MCP: (status, passed strictly, passed as JSON, detail)."""
    strict = as_json = 0
    failure = None
    for t in p.tests:
        results, err, last_args = [], None, None
        for i in range(len(t.calls)):
            args = t.arguments(i, p.ns, results)
            last_args = args
            try:
                r = await asyncio.wait_for(client.call_tool(p.tool, P.to_json(args)), 300)
            except Exception as e:  # noqa: BLE001 - the SDK's own refusal is a result here
                err = ("client error", f"{type(e).__name__}: {first_line(str(e))}")
                break
            if r.is_error:
                text = text_of(r)
                why = first_line(text, 400)
                if "input_schema" in text or "does not match" in text:
                    cls = "input refused"
                elif "json/encoder.py" in text or "is not JSON serializable" in text:
                    # The wrapper's json.dumps refused the function's value (a re.Match, …).
                    cls = "JSON limits"
                else:
                    cls = "runtime error"
                err = (cls, why, text[:2000])
                break
            results.append(decode(r))
        if err is None:
            try:
                ok = t.holds(p.ns, results)
            except Exception as e:  # noqa: BLE001 - a wrongly shaped result breaks the condition
                ok = False
                err = ("wrong result", f"the condition raised {type(e).__name__}: {first_line(str(e))}")
            if ok:
                strict += 1
                as_json += 1
                continue
            if t.holds_as_json(p.ns, results):
                as_json += 1
                continue
            if err is None:
                loses = P.json_loses(last_args) or P.json_loses(t.expected(p.ns, results))
                err = ("JSON limits", loses) if loses else ("wrong result", f"got {json.dumps(results)[:160]}")
        failure = failure or {"class": err[0], "why": err[1], "assert": t.source[:200],
                              "text": err[2] if len(err) > 2 else None}
    n = len(p.tests)
    if failure:
        status = failure["class"]
    else:
        status = "pass" if strict == n else "pass as JSON"
    return status, strict, as_json, failure


async def run_form(form, probs, toolsmith, keep):
    """One form in a fresh toolbox behind one `toolsmith serve`: a record per problem."""
    tmp = tempfile.mkdtemp(prefix=f"bench-functions-{form}-")
    box = os.path.join(tmp, "box")
    env = dict(os.environ)
    env.setdefault("TOOLSMITH_DATA", os.path.join(tmp, "data"))
    env.setdefault("TOOLSMITH_CACHE", os.path.join(tmp, "cache"))
    env.setdefault("TOOLSMITH_COMPONENTIZE_PY", os.path.join(ROOT, "target/componentize-py/bin/componentize-py"))
    subprocess.run([toolsmith, "init", box], env=env, check=True, capture_output=True)
    server = StdioServerParameters(command=toolsmith, args=["--toolbox", box, "serve"], env=env)
    records = []
    try:
        async with Client(server, cache=None, read_timeout_seconds=900) as client:
            for p in probs:
                rec = {"task_id": p.task_id, "function": p.entry, "form": form}
                t0 = time.perf_counter()
                r = await client.call_tool("build_tool" if form == "component" else "register_script",
                                           register_request(p, form))
                rec["make_s"] = round(time.perf_counter() - t0, 2)
                rec["made"] = not r.is_error
                if r.is_error:
                    text = text_of(r)
                    cls = build_class(text) if form == "component" else "register error"
                    rec.update(status=cls, passed=0, passed_as_json=0, tests=len(p.tests),
                               failure={"class": cls, "why": first_line(text, 400), "text": text[:4000]})
                else:
                    status, strict, as_json, failure = await check(client, p)
                    rec.update(status=status, passed=strict, passed_as_json=as_json, tests=len(p.tests),
                               failure=failure)
                records.append(rec)
                print(f"{form:9} {p.task_id:4} {p.entry:28} {rec['status']:14} {rec['make_s']:6.1f} s"
                      + (f"  {rec['failure']['why'][:90]}" if rec.get("failure") else ""),
                      file=sys.stderr, flush=True)
    finally:
        if keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return records


def summarize(form, records):
    made = sum(r["made"] for r in records)
    strict = sum(r["status"] == "pass" for r in records)
    as_json = sum(r["status"] == "pass as JSON" for r in records)
    why = {}
    for r in records:
        if r["status"] not in ("pass", "pass as JSON"):
            why.setdefault(r["status"], []).append(r["task_id"])
    times = sorted(r["make_s"] for r in records if r["made"])
    return {"form": form, "problems": len(records), "made": made, "pass": strict,
            "pass_as_json": as_json, "fail": len(records) - strict - as_json,
            "why": why, "make_s_p50": times[len(times) // 2] if times else None}


def table(probs, by_form):
    print(f"{'task':>4}  {'function':28}  " + "  ".join(f"{f:14}" for f in by_form))
    for p in probs:
        cells = []
        for f, recs in by_form.items():
            r = recs.get(p.task_id)
            cells.append(f"{r['status'] if r else '-':14}")
        print(f"{p.task_id:>4}  {p.entry:28}  " + "  ".join(cells))


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--toolsmith", default=os.path.join(ROOT, "target/release/toolsmith"))
    ap.add_argument("--data", help="sanitized-mbpp.json (default: benches/data/ or shared/fixtures/mbpp/)")
    ap.add_argument("--limit", type=int, help="only the first N selected problems (every form)")
    ap.add_argument("--component-limit", type=int, default=30,
                    help="the component form on the first N only (default 30; 0: all); ~15 s a build")
    ap.add_argument("--forms", default="script,component")
    ap.add_argument("--only", help="comma-separated task ids")
    ap.add_argument("--json", help="write the records and the summary here")
    ap.add_argument("--keep", action="store_true", help="keep the toolboxes (their paths on stderr)")
    a = ap.parse_args()
    data = P.find_data(a.data)
    selected = P.select(json.load(open(data, encoding="utf-8")))
    if a.only:
        ids = {int(x) for x in a.only.split(",")}
        selected = [p for p in selected if p["task_id"] in ids]
    probs = [P.Problem(p) for p in selected[: a.limit]]
    bad = [p.task_id for p in probs if not p.local_pass()]
    if bad:
        raise SystemExit(f"the solutions of tasks {bad} fail their own tests here: the data is not what it should be")
    by_form, summary = {}, {"data": data, "rule": f"every {P.EVERY}th problem by task id",
                            "selected": len(probs), "forms": []}
    for form in a.forms.split(","):
        if form not in FORMS:
            raise SystemExit(f"unknown form {form!r}: give script and/or component")
        these = probs[: a.component_limit] if form == "component" and a.component_limit else probs
        t0 = time.perf_counter()
        records = await run_form(form, these, a.toolsmith, a.keep)
        s = summarize(form, records)
        s["wall_s"] = round(time.perf_counter() - t0, 1)
        summary["forms"].append(s)
        by_form[form] = {r["task_id"]: r for r in records}
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    print(f"MBPP (sanitized), {len(probs)} problems ({summary['rule']}); toolsmith {a.toolsmith}; "
          f"load {' '.join(load)}")
    table(probs, by_form)
    print()
    for s in summary["forms"]:
        print(f"{s['form']:9}: {s['made']}/{s['problems']} made, {s['pass']} pass, "
              f"{s['pass_as_json']} pass with tuples/sets/keys compared as JSON, {s['fail']} fail; "
              f"made in {s['make_s_p50']} s (p50), {s['wall_s']} s in all")
        for cls, ids in sorted(s["why"].items(), key=lambda kv: CLASSES.index(kv[0]) if kv[0] in CLASSES else 99):
            reasons = {}
            for i in ids:
                f = by_form[s["form"]][i]["failure"]
                reasons.setdefault(f["why"][:120], []).append(i)
            print(f"  {cls} ({len(ids)}):")
            for why, tids in reasons.items():
                print(f"    {tids}: {why}")
    out = {"summary": summary, "records": [r for f in by_form.values() for r in f.values()]}
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    print(json.dumps(summary))


asyncio.run(main())
