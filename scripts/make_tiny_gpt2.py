"""Writes a tiny GPT-2 checkpoint in the Hugging Face layout, with reference outputs, to
crates/nn/tests/data/tiny-gpt2/ (the test fixture of Veil's GPT-2 loader and tokenizer).

- tokenizer.json, vocab.json, merges.txt: a byte-level BPE trained with the Hugging Face
  `tokenizers` library on data/sentences.txt, with GPT-2's pre-tokenizer (no prefix space);
- config.json: GPT-2's keys (n_embd 32, n_head 4, n_layer 2, n_positions 64, gelu_new);
- model.safetensors: seeded random weights under GPT-2's tensor names (wte, wpe, h.N.ln_1,
  h.N.attn.c_attn, h.N.attn.c_proj, h.N.ln_2, h.N.mlp.c_fc, h.N.mlp.c_proj, ln_f), Conv1D
  layout [in, out] as GPT-2 stores them;
- expected.json: for a few texts, the ids `tokenizers` gives and the logits at three positions
  from the forward pass below (float64 NumPy, written from GPT-2's definition: pre-LN blocks,
  causal attention scaled by 1/sqrt(d_head), tanh GELU, final LayerNorm, LM head tied to wte).

Needs numpy and tokenizers (pip install numpy tokenizers). Run from the repository root:
    python scripts/make_tiny_gpt2.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from fixture_np import layernorm, random_layernorm, random_linear, save_safetensors
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "crates" / "nn" / "tests" / "data" / "tiny-gpt2"
TEXTS = [
    "Hello world",
    "I'm sure it's fine, isn't it?",
    "Private inference keeps   the data\n\nand the model secret: 42 ways.",
    "naïve café — 東京 🙂",
]
H, HEADS, LAYERS, POSITIONS, EPS = 32, 4, 2, 64, 1e-5


def train_tokenizer() -> Tokenizer:
    corpus = [l.strip() for l in (ROOT / "data" / "sentences.txt").read_text().splitlines() if l.strip()]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    return tok


def weights(vocab: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    w: dict[str, np.ndarray] = {
        "wte.weight": rng.normal(0, 0.5, (vocab, H)),
        "wpe.weight": rng.normal(0, 0.2, (POSITIONS, H)),
        "ln_f.weight": 1 + rng.normal(0, 0.1, H),
        "ln_f.bias": rng.normal(0, 0.1, H),
    }
    for i in range(LAYERS):
        p = f"h.{i}."
        for ln in ("ln_1", "ln_2"):
            random_layernorm(w, p + ln, H, rng)
        for name, fin, fout in (
            ("attn.c_attn", H, 3 * H),
            ("attn.c_proj", H, H),
            ("mlp.c_fc", H, 4 * H),
            ("mlp.c_proj", 4 * H, H),
        ):
            random_linear(w, p + name, fin, fout, rng, in_first=True)
    # Stored as float32, as checkpoints are; the reference computes with these values.
    return {k: v.astype(np.float32) for k, v in w.items()}


def gelu_new(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def forward(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    f = {k: v.astype(np.float64) for k, v in w.items()}
    t, dh = len(ids), H // HEADS
    x = f["wte.weight"][ids] + f["wpe.weight"][:t]
    causal = np.triu(np.ones((t, t), dtype=bool), 1)
    for i in range(LAYERS):
        p = f"h.{i}."
        a = layernorm(x, f[p + "ln_1.weight"], f[p + "ln_1.bias"], EPS)
        qkv = a @ f[p + "attn.c_attn.weight"] + f[p + "attn.c_attn.bias"]
        q, k, v = np.split(qkv, 3, axis=-1)
        heads = []
        for hd in range(HEADS):
            s = slice(hd * dh, (hd + 1) * dh)
            scores = q[:, s] @ k[:, s].T / np.sqrt(dh)
            scores[causal] = -np.inf
            e = np.exp(scores - scores.max(-1, keepdims=True))
            heads.append((e / e.sum(-1, keepdims=True)) @ v[:, s])
        x = x + np.concatenate(heads, -1) @ f[p + "attn.c_proj.weight"] + f[p + "attn.c_proj.bias"]
        m = layernorm(x, f[p + "ln_2.weight"], f[p + "ln_2.bias"], EPS)
        hidden = gelu_new(m @ f[p + "mlp.c_fc.weight"] + f[p + "mlp.c_fc.bias"])
        x = x + hidden @ f[p + "mlp.c_proj.weight"] + f[p + "mlp.c_proj.bias"]
    x = layernorm(x, f["ln_f.weight"], f["ln_f.bias"], EPS)
    return x @ f["wte.weight"].T


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer()
    tok.save(str(OUT / "tokenizer.json"))
    tok.model.save(str(OUT))
    vocab = tok.get_vocab_size()
    config = {
        "_name_or_path": "veil/tiny-gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "n_embd": H,
        "n_head": HEADS,
        "n_layer": LAYERS,
        "n_positions": POSITIONS,
        "n_inner": None,
        "layer_norm_epsilon": EPS,
        "vocab_size": vocab,
        "tie_word_embeddings": True,
    }
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    w = weights(vocab, np.random.default_rng(20261123))
    save_safetensors(OUT / "model.safetensors", w)
    cases = []
    for text in TEXTS:
        ids = tok.encode(text).ids
        logits = forward(w, ids)
        # Rows at the first, middle and last positions: with causal attention, row i is the
        # next-token logits of the prefix ids[: i + 1].
        rows = sorted({0, len(ids) // 2, len(ids) - 1})
        cases.append({"text": text, "ids": ids, "logits_at": {str(i): logits[i].round(6).tolist() for i in rows}})
    (OUT / "expected.json").write_text(json.dumps({"cases": cases}) + "\n")
    print(f"wrote {OUT} (vocabulary {vocab}, {sum(v.size for v in w.values())} weights)")


if __name__ == "__main__":
    main()
