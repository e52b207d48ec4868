"""Score a static table (static.bin) alone, and plain BM25, on the retrieval sets.

Usage: static_eval.py MODEL_DIR TABLE.bin SET... (sets of benches/retrieval/data, by name)
"""
import math, re, struct, sys, collections
import numpy as np
from tokenizers import Tokenizer
import evalsets

def load_table(path):
    b = open(path, "rb").read()
    assert b[:4] == b"TSST"
    _, size, rows, dims = struct.unpack("<IIII", b[4:20])
    o = 20
    row_of = np.frombuffer(b, "<u4", size, o); o += 4 * size
    q = np.frombuffer(b, np.int8, rows * dims, o).reshape(rows, dims).astype(np.float32); o += rows * dims
    scale = np.frombuffer(b, "<f4", rows, o)
    return row_of, q * scale[:, None]

def embed(tok, row_of, M, texts):
    out = np.zeros((len(texts), M.shape[1]), np.float32)
    for i, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        rs = [row_of[t] for t in e.ids if row_of[t] != 0xFFFFFFFF]
        if rs:
            v = M[rs].sum(0)
            out[i] = v / (np.linalg.norm(v) + 1e-9)
    return out

def bm25(tools, queries, k1=1.2, b=0.75):
    tokz = lambda s: re.findall(r"[a-z0-9]+", s.lower())
    docs = [tokz(evalsets.words(t["name"]) + " " + t["description"]) for t in tools]
    df = collections.Counter(w for d in docs for w in set(d))
    N = len(docs); avg = sum(map(len, docs)) / N
    tfs = [collections.Counter(d) for d in docs]
    sims = np.zeros((len(queries), N))
    for qi, q in enumerate(queries):
        for w in set(tokz(q["text"])):
            if w not in df: continue
            idf = math.log(1 + (N - df[w] + .5) / (df[w] + .5))
            for di, tf in enumerate(tfs):
                f = tf.get(w)
                if f: sims[qi, di] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(docs[di]) / avg))
    return sims

if __name__ == "__main__":
    tok = Tokenizer.from_file(sys.argv[1] + "/tokenizer.json"); tok.no_padding(); tok.no_truncation()
    row_of, M = load_table(sys.argv[2])
    for name in sys.argv[3:]:
        tools, queries = evalsets.load(name)
        T = embed(tok, row_of, M, [evalsets.tool_text(t) for t in tools])
        Q = embed(tok, row_of, M, [q["text"] for q in queries])
        s = Q @ T.T
        print(name, "static R@1 %.3f R@5 %.3f MRR %.3f" % evalsets.score(s, tools, queries), flush=True)
        print(name, "bm25   R@1 %.3f R@5 %.3f MRR %.3f" % evalsets.score(bm25(tools, queries), tools, queries), flush=True)
