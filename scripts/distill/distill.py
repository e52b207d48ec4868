#!/usr/bin/env python3
"""Distil toolsmith's built-in static embedding table from all-MiniLM-L6-v2 (Apache-2.0).

The model2vec recipe, then a tokenlearn-style fit:
1. every WordPiece token of the model's vocabulary goes through the model alone
   (`[CLS] token [SEP]`, mean-pooled): one 384-dimension vector per token;
2. PCA of those vectors to DIMS dimensions;
3. a fit on a corpus of short descriptions of software (the summaries of PyPI and npm
   packages, `/work/.library/env/packages/*.tsv` on the machine this was made on): the mean of
   a text's token vectors is pulled towards the model's own (PCA-projected) sentence vector of
   that text, so a token's vector is what it means in context, not alone;
4. SIF weighting from the corpus' token frequencies (a / (a + p(token))), folded into the
   vectors, so frequent words weigh little in the mean;
5. int8 per row (with an f32 scale), written as `crates/6-core/search/assets/static.bin` (format in
   `crates/6-core/search/src/static_table.rs`).

The sets of benches/retrieval are never used here (no tuning on what is measured).

Usage: distill.py MODEL_DIR CORPUS.tsv[,CORPUS2.tsv] OUT.bin [--dims 256] [--sentences 60000]
"""

import argparse
import os
import random
import struct
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(__file__))
from minilm import Bert  # noqa: E402

CACHE = os.environ.get("DISTILL_CACHE", "target/distill")


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def cached(name, make):
    path = os.path.join(CACHE, name + ".npy")
    if os.path.exists(path):
        return np.load(path)
    v = make()
    os.makedirs(CACHE, exist_ok=True)
    np.save(path, v)
    return v


def corpus(paths, n, seed=7):
    """Distinct, mostly-English package summaries of 4 to 60 words."""
    seen, out = set(), []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            next(f)
            for line in f:
                parts = line.rstrip("\n").split("\t")
                text = parts[-1].strip()
                if text.startswith("[tested here"):
                    text = text.split("]", 1)[-1].strip()
                words = text.split()
                if not 4 <= len(words) <= 60:
                    continue
                if sum(c.isascii() for c in text) < 0.95 * len(text):
                    continue
                key = text.lower()
                if key in seen:
                    continue
                seen.add(key)
                out.append(text)
    random.Random(seed).shuffle(out)
    return out[:n]


REQUESTS = [
    "I'm looking for {l}",
    "Can you help me? I need {l}",
    "Is there a tool for this: {s}",
    "Please find me {l}",
    "Hey, could you get me {l}?",
    "I want something like this: {s}",
    "Which tool would do this? {s}",
    "Show me {l}",
    "I need help with the following. {s}",
    "Do you have {l}?",
]


def request(text, i):
    """A summary worded as a person's request (the wording varies with i)."""
    first = text.split()[0]
    lower = text if len(first) > 1 and first.isupper() else text[0].lower() + text[1:]
    return REQUESTS[i % len(REQUESTS)].format(s=text, l=lower.rstrip("."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--sentences", type=int, default=60000)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--sif", type=float, default=1e-3)
    ap.add_argument("--requests", type=int, default=0,
                    help="also fit this many summaries worded as a person's request")
    a = ap.parse_args()

    bert = Bert(a.model_dir)
    vocab = bert.tok.get_vocab()
    size = max(vocab.values()) + 1
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    specials = {vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")}

    log("embedding", size, "vocabulary tokens alone")

    def alone():
        out = np.zeros((size, bert.cfg["hidden_size"]), np.float32)
        ids = list(range(size))
        for s in range(0, size, 512):
            part = ids[s : s + 512]
            out[s : s + len(part)] = bert.encode_ids([[cls, i, sep] for i in part])
        return out

    tok_vecs = cached("tokens_alone", alone)

    texts = corpus(a.corpus.split(","), a.sentences)
    log("corpus:", len(texts), "summaries")
    if a.epochs > 0:
        # The model's sentence vectors, in cached slices of 20,000 (the corpus order is fixed,
        # so a larger corpus reuses the slices of a smaller one).
        parts = []
        for s in range(0, len(texts), 20000):
            part = texts[s : s + 20000]
            parts.append(cached(f"teacher_{s}_{len(part)}", lambda part=part: bert.encode(part, batch=128)))
            log("teacher vectors:", s + len(part))
        teacher = np.concatenate(parts)
        if a.requests:
            # Summaries worded as requests ("I'm looking for ..."), from summaries past the
            # first --sentences: the words people wrap a request in get their real (low)
            # weight and a vector that says little, as the model itself treats them.
            extra = corpus(a.corpus.split(","), a.sentences + a.requests)[a.sentences:]
            reqs = [request(t, i) for i, t in enumerate(extra)]
            tv = cached(f"teacher_requests_{a.sentences}_{len(reqs)}", lambda: bert.encode(reqs, batch=128))
            log("request vectors:", len(reqs))
            texts = texts + reqs
            teacher = np.concatenate([teacher, tv])
    else:
        teacher = np.zeros((len(texts), tok_vecs.shape[1]), np.float32)

    enc = bert.tok.encode_batch(texts, add_special_tokens=False)
    rows, cols = [], []
    for r, e in enumerate(enc):
        for i in e.ids:
            rows.append(r)
            cols.append(i)
    counts = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(texts), size))
    freq = np.asarray(counts.sum(0)).ravel() + 1.0
    p = freq / freq.sum()
    sif = (a.sif / (a.sif + p)).astype(np.float32)

    log("PCA to", a.dims)
    usable = np.array([i not in specials and not bert.tok.id_to_token(i).startswith("[unused") for i in range(size)])
    mean = tok_vecs[usable].mean(0)
    _, _, vt = np.linalg.svd(tok_vecs[usable] - mean, full_matrices=False)
    proj = vt[: a.dims].T.astype(np.float32)
    table = (tok_vecs - mean) @ proj
    target = (teacher - mean) @ proj
    target /= np.linalg.norm(target, axis=1, keepdims=True) + 1e-9

    # Weighted mean pooling: row r of A holds sif(token) / sum of sif over the text.
    A = counts.multiply(sif[None, :]).tocsr()
    A = sp.diags(1.0 / np.maximum(np.asarray(A.sum(1)).ravel(), 1e-9)) @ A
    A = A.tocsr().astype(np.float32)
    At = A.T.tocsr()

    # Fit: minimise 1 - cos(A @ E, target) with Adam, plus a pull towards the alone vectors
    # for tokens the corpus rarely holds.
    E = table.copy()
    anchor = table.copy()
    m = np.zeros_like(E)
    v = np.zeros_like(E)
    lr, b1, b2, lam = 2e-3, 0.9, 0.999, 1e-4
    idx = np.arange(len(texts))
    step = 0
    batch = 2048
    for ep in range(a.epochs):
        np.random.default_rng(ep).shuffle(idx)
        loss_sum = 0.0
        for s in range(0, len(idx), batch):
            bi = idx[s : s + batch]
            Ab = A[bi]
            pred = Ab @ E
            n = np.linalg.norm(pred, axis=1, keepdims=True) + 1e-9
            u = pred / n
            t = target[bi]
            c = (u * t).sum(1, keepdims=True)
            loss_sum += float((1 - c).sum())
            gu = -(t - c * u) / n  # d(1 - cos)/d pred
            g = (Ab.T @ gu) / len(bi) + lam * (E - anchor)
            step += 1
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            E -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + 1e-8)
        log(f"epoch {ep}: mean 1-cos {loss_sum / len(idx):.4f}")

    E = E * sif[:, None]
    keep = usable.copy()
    write(a.out, E, keep, size)


def write(path, E, keep, size):
    """Format v1: b"TSST", u32 version 1, u32 vocabulary size, u32 rows, u32 dims, then u32 row
    per vocabulary id (0xFFFFFFFF: none), then rows x dims i8, then rows f32 scales (LE)."""
    ids = np.nonzero(keep)[0]
    row_of = np.full(size, 0xFFFFFFFF, np.uint32)
    row_of[ids] = np.arange(len(ids), dtype=np.uint32)
    M = E[ids]
    scale = np.abs(M).max(1) / 127.0 + 1e-12
    q = np.clip(np.round(M / scale[:, None]), -127, 127).astype(np.int8)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"TSST")
        f.write(struct.pack("<IIII", 1, size, len(ids), M.shape[1]))
        f.write(row_of.astype("<u4").tobytes())
        f.write(q.tobytes())
        f.write(scale.astype("<f4").tobytes())
    log("wrote", path, os.path.getsize(path), "bytes:", len(ids), "rows x", M.shape[1])


if __name__ == "__main__":
    main()
