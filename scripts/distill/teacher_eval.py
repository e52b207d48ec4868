"""Score the teacher (all-MiniLM-L6-v2 in numpy) alone on the retrieval sets.

Usage: teacher_eval.py MODEL_DIR SET...
"""
import os, sys, time
import numpy as np
from minilm import Bert
import evalsets

b = Bert(sys.argv[1])
for name in sys.argv[2:]:
    tools, queries = evalsets.load(name)
    t0 = time.time()
    T = b.encode([evalsets.tool_text(t) for t in tools])
    Q = b.encode([q["text"] for q in queries])
    print(name, "minilm R@1 %.3f R@5 %.3f MRR %.3f" % evalsets.score(Q @ T.T, tools, queries), "%.0fs" % (time.time() - t0), flush=True)
