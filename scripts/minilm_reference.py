#!/usr/bin/env python3
"""Independent float reference of a BERT-family sentence encoder (NumPy only), used to make
the test vectors of `crates/nn/tests/data/`: token ids from the Hugging Face `tokenizers`
library and mean-pooled, L2-normalised embeddings computed from `model.safetensors`.

    .venv/bin/python -m pip install --no-deps numpy tokenizers
    .venv/bin/python scripts/minilm_reference.py MODEL_DIR > crates/nn/tests/data/minilm_reference.json
"""
import json
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Privacy-preserving inference keeps the weights and the input secret.",
    "Héllo, WORLD!! naïve café — 42 apples & 3.5 oranges?",
    "a",
    "Secure multi-party computation lets three servers evaluate a transformer without seeing its input.",
]


def load_safetensors(path):
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    body = raw[8 + n :]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            continue
        lo, hi = meta["data_offsets"]
        out[name] = np.frombuffer(body[lo:hi], dtype="<f4").reshape(meta["shape"]).astype(np.float64)
    return out


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu(x):  # erf form, as BERT's "gelu"
    from math import erf

    return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))


def encode(w, cfg, ids):
    p = lambda k: w[k] if k in w else w["bert." + k]
    t = len(ids)
    x = p("embeddings.word_embeddings.weight")[ids]
    x = x + p("embeddings.position_embeddings.weight")[:t] + p("embeddings.token_type_embeddings.weight")[0]
    eps = cfg["layer_norm_eps"]
    x = layernorm(x, p("embeddings.LayerNorm.weight"), p("embeddings.LayerNorm.bias"), eps)
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    dh = h // heads
    for i in range(cfg["num_hidden_layers"]):
        L = lambda k: p(f"encoder.layer.{i}.{k}")
        lin = lambda v, k: v @ L(k + ".weight").T + L(k + ".bias")
        q = lin(x, "attention.self.query").reshape(t, heads, dh).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(t, heads, dh).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(t, heads, dh).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(t, h)
        x = layernorm(lin(a, "attention.output.dense") + x, L("attention.output.LayerNorm.weight"),
                      L("attention.output.LayerNorm.bias"), eps)
        f = gelu(lin(x, "intermediate.dense"))
        x = layernorm(lin(f, "output.dense") + x, L("output.LayerNorm.weight"), L("output.LayerNorm.bias"), eps)
    e = x.mean(0)
    return e / np.linalg.norm(e)


def main():
    model = Path(sys.argv[1])
    cfg = json.loads((model / "config.json").read_text())
    w = load_safetensors(model / "model.safetensors")
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    cases = []
    for s in SENTENCES:
        ids = tok.encode(s).ids
        cases.append({"text": s, "ids": ids, "embedding": [round(float(v), 7) for v in encode(w, cfg, ids)]})
    json.dump({"model": "all-MiniLM-L6-v2", "pooling": "mean, L2-normalised", "cases": cases}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
