import sys, time, numpy as np
from minilm import Bert
import evalsets
b = Bert(sys.argv[1])
for name in sys.argv[2:]:
    tools, queries = evalsets.load(name)
    t0 = time.time()
    T = b.encode([evalsets.tool_text(t) for t in tools])
    Q = b.encode([q["text"] for q in queries])
    np.save(f"/work/wt-26/target/distill/{name}.T.npy", T); np.save(f"/work/wt-26/target/distill/{name}.Q.npy", Q)
    print(name, "minilm R@1 %.3f R@5 %.3f MRR %.3f" % evalsets.score(Q @ T.T, tools, queries), "%.0fs" % (time.time() - t0), flush=True)
