#!/usr/bin/env python3
"""Make the retrieval sets of benches/retrieval/data from the Gorilla repository (Apache-2.0).

Usage: convert_gorilla.py GORILLA_GIT_DIR COMMIT OUT_DIR

Reads with `git show` (no work tree needed):
- BFCL v4 (berkeley-function-call-leaderboard/bfcl_eval/data): simple_python, live_simple,
  multiple, live_multiple. Every function of every question is a tool (duplicates by name,
  description and parameters merged); the query is the user's message, the right tool the one
  the question's ground truth calls.
- APIBench (data/api, data/apibench): huggingface and torchhub. Every API is a tool (its
  domain, functionality and description); the query is the instruction, the right tool the API
  the instruction's answer loads.
"""
import ast, json, re, subprocess, sys

git_dir, commit, out_dir = sys.argv[1:4]

def show(path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout

def jsonl(path):
    return [json.loads(l) for l in show(path).splitlines() if l.strip()]

def tool_name(raw, taken):
    base = re.sub(r"[^a-z0-9_]+", "_", raw.lower()).strip("_")[:60] or "tool"
    if not base[0].isalpha():
        base = "t_" + base
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name

def write(name, source, tools, queries):
    doc = {"source": source, "licence": "Apache-2.0 (Gorilla, https://github.com/ShishirPatil/gorilla)",
           "commit": commit, "tools": tools, "queries": queries}
    with open(f"{out_dir}/{name}.json", "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"), ensure_ascii=False)
    print(name, len(tools), "tools", len(queries), "queries", file=sys.stderr)

def bfcl():
    base = "berkeley-function-call-leaderboard/bfcl_eval/data"
    tools, by_key, taken, queries = [], {}, set(), []
    for part in ["simple_python", "live_simple", "multiple", "live_multiple"]:
        items = jsonl(f"{base}/BFCL_v4_{part}.json")
        answers = {}
        if part in ("multiple", "live_multiple"):
            answers = {a["id"]: a["ground_truth"] for a in jsonl(f"{base}/possible_answer/BFCL_v4_{part}.json")}
        for it in items:
            turns = it["question"]
            if len(turns) != 1:
                continue
            user = [m["content"] for m in turns[0] if m["role"] == "user"]
            if not user:
                continue
            ids = {}
            for fn in it["function"]:
                props = fn.get("parameters", {}).get("properties", {})
                fields = [[k, (v.get("description") or "") if isinstance(v, dict) else ""] for k, v in props.items()]
                key = (fn["name"], fn.get("description", ""), tuple(f[0] for f in fields))
                if key not in by_key:
                    by_key[key] = len(tools)
                    tools.append({"name": tool_name(fn["name"], taken), "source_name": fn["name"],
                                  "description": fn.get("description", "")[:4000], "fields": fields})
                ids[fn["name"]] = by_key[key]
            if part in ("simple_python", "live_simple"):
                want = it["function"][0]["name"] if len(it["function"]) == 1 else None
            else:
                gt = answers.get(it["id"]) or []
                names = {next(iter(g)) for g in gt}
                want = names.pop() if len(names) == 1 else None
            if want in ids:
                queries.append({"text": user[-1], "tool": tools[ids[want]]["name"]})
    write("bfcl", "BFCL v4 simple_python, live_simple, multiple, live_multiple (single-turn questions)", tools, queries)

def apibench(api_file, eval_file, name):
    tools, by_call, taken = [], {}, set()
    for a in jsonl(f"data/api/{api_file}"):
        call = a["api_call"]
        if call in by_call:
            continue
        desc = " ".join(str(a.get(k, "")) for k in ("domain", "functionality")).strip()
        by_call[call] = len(tools)
        tools.append({"name": tool_name(str(a["api_name"]), taken), "source_name": a["api_name"],
                      "description": (desc + ". " + str(a.get("description", ""))).strip()[:4000], "fields": []})
    queries = []
    for q in jsonl(f"data/apibench/{eval_file}"):
        m = re.search(r"###Instruction:(.*?)###Output", q["code"], re.S)
        if not m:
            continue
        i = by_call.get(q["api_data"]["api_call"]) if isinstance(q.get("api_data"), dict) else None
        if i is None:
            continue
        queries.append({"text": m.group(1).strip(), "tool": tools[i]["name"]})
    write(name, f"APIBench {eval_file} (instructions) over {api_file}", tools, queries)

bfcl()
apibench("torchhub_api.jsonl", "torchhub_eval.json", "apibench_torchhub")
apibench("huggingface_api.jsonl", "huggingface_eval.json", "apibench_hf")
