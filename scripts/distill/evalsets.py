"""Load the retrieval sets of benches/retrieval/data and score a ranking (Recall@1, @5, MRR@10)."""
import json, os, re
import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "benches", "retrieval", "data")

def load(name):
    """A set by name, from benches/retrieval/data or TOOLSMITH_BENCH_EXTRA (sets kept outside git)."""
    path = os.path.join(DATA, name + ".json")
    extra = os.environ.get("TOOLSMITH_BENCH_EXTRA")
    if not os.path.exists(path) and extra:
        path = os.path.join(extra, name + ".json")
    d = json.load(open(path))
    return d["tools"], d["queries"]

def words(name):
    return " ".join(w for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w).lower()

def tool_text(t):
    return f"{words(t['name'])}: {t['description']}"

def score(sims, tools, queries):
    idx = {t["name"]: i for i, t in enumerate(tools)}
    r1 = r5 = mrr = 0.0
    for row, q in zip(sims, queries):
        want = idx[q["tool"]]
        rank = int((row > row[want]).sum())
        r1 += rank < 1; r5 += rank < 5; mrr += 1.0 / (rank + 1) if rank < 10 else 0
    n = len(queries)
    return r1 / n, r5 / n, mrr / n
