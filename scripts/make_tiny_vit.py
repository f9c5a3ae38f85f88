"""Writes a tiny Vision Transformer in the Hugging Face layout, with reference outputs, to
crates/nn/tests/data/tiny-vit/ (the test fixture of Veil's ViT loader).

- config.json: ViTForImageClassification's keys (hidden 32, 4 heads, 2 layers, 16x16 images
  cut into 4x4 patches, 3 channels, 3 labels, exact GELU);
- preprocessor_config.json: rescale by 1/255, normalize with mean 0.5 and std 0.5 per channel;
- model.safetensors: seeded random weights under the Hugging Face names (vit.embeddings.*,
  vit.encoder.layer.N.*, vit.layernorm, classifier), linear layers stored [out, in] and the
  patch kernel [D, C, P, P], as PyTorch stores them;
- test.safetensors: `images` [4, 3, 16, 16] raw pixel values in [0, 255] and `labels` (the
  brightest channel, a stand-in: the weights are random);
- expected.json: the logits of each image from the forward pass below (float64 NumPy, written
  from the ViT paper's definition: patch projection, class token, position embeddings,
  pre-LN blocks, exact GELU, final LayerNorm, classifier on the class token).

Needs numpy. Run from the repository root:
    python scripts/make_tiny_vit.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from fixture_np import layernorm, random_layernorm, random_linear, save_safetensors

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "crates" / "nn" / "tests" / "data" / "tiny-vit"
H, HEADS, LAYERS, FFN, IMAGE, PATCH, CHANNELS, LABELS, EPS = 32, 4, 2, 64, 16, 4, 3, 3, 1e-12
N = (IMAGE // PATCH) ** 2


def weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    w: dict[str, np.ndarray] = {
        "vit.embeddings.cls_token": rng.normal(0, 0.5, (1, 1, H)),
        "vit.embeddings.position_embeddings": rng.normal(0, 0.2, (1, N + 1, H)),
        "vit.embeddings.patch_embeddings.projection.weight": rng.normal(
            0, 1 / np.sqrt(CHANNELS * PATCH * PATCH), (H, CHANNELS, PATCH, PATCH)
        ),
        "vit.embeddings.patch_embeddings.projection.bias": rng.normal(0, 0.1, H),
        "vit.layernorm.weight": 1 + rng.normal(0, 0.1, H),
        "vit.layernorm.bias": rng.normal(0, 0.1, H),
        "classifier.weight": rng.normal(0, 1 / np.sqrt(H), (LABELS, H)),
        "classifier.bias": rng.normal(0, 0.1, LABELS),
    }
    for i in range(LAYERS):
        p = f"vit.encoder.layer.{i}."
        for ln in ("layernorm_before", "layernorm_after"):
            random_layernorm(w, p + ln, H, rng)
        for name, fin, fout in (
            ("attention.attention.query", H, H),
            ("attention.attention.key", H, H),
            ("attention.attention.value", H, H),
            ("attention.output.dense", H, H),
            ("intermediate.dense", H, FFN),
            ("output.dense", FFN, H),
        ):
            random_linear(w, p + name, fin, fout, rng, in_first=False)
    # Stored as float32, as checkpoints are; the reference computes with these values.
    return {k: v.astype(np.float32) for k, v in w.items()}


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def forward(w: dict[str, np.ndarray], image: np.ndarray) -> np.ndarray:
    """Logits of one preprocessed image [C, H, W]."""
    f = {k: v.astype(np.float64) for k, v in w.items()}
    dh, side = H // HEADS, IMAGE // PATCH
    # Patches in row-major order, each flattened as [C, P, P] like the kernel.
    patches = (
        image.reshape(CHANNELS, side, PATCH, side, PATCH).transpose(1, 3, 0, 2, 4).reshape(N, -1)
    )
    kernel = f["vit.embeddings.patch_embeddings.projection.weight"].reshape(H, -1)
    x = patches @ kernel.T + f["vit.embeddings.patch_embeddings.projection.bias"]
    x = np.concatenate([f["vit.embeddings.cls_token"][0], x]) + f["vit.embeddings.position_embeddings"][0]
    for i in range(LAYERS):
        p = f"vit.encoder.layer.{i}."
        lin = lambda v, name: v @ f[p + name + ".weight"].T + f[p + name + ".bias"]  # noqa: E731
        a = layernorm(x, f[p + "layernorm_before.weight"], f[p + "layernorm_before.bias"], EPS)
        q, k, v = (lin(a, "attention.attention." + n) for n in ("query", "key", "value"))
        heads = []
        for hd in range(HEADS):
            s = slice(hd * dh, (hd + 1) * dh)
            scores = q[:, s] @ k[:, s].T / np.sqrt(dh)
            e = np.exp(scores - scores.max(-1, keepdims=True))
            heads.append((e / e.sum(-1, keepdims=True)) @ v[:, s])
        x = x + lin(np.concatenate(heads, -1), "attention.output.dense")
        m = layernorm(x, f[p + "layernorm_after.weight"], f[p + "layernorm_after.bias"], EPS)
        x = x + lin(gelu(lin(m, "intermediate.dense")), "output.dense")
    x = layernorm(x, f["vit.layernorm.weight"], f["vit.layernorm.bias"], EPS)
    return x[0] @ f["classifier.weight"].T + f["classifier.bias"]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    config = {
        "_name_or_path": "veil/tiny-vit",
        "architectures": ["ViTForImageClassification"],
        "model_type": "vit",
        "hidden_size": H,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "intermediate_size": FFN,
        "hidden_act": "gelu",
        "layer_norm_eps": EPS,
        "image_size": IMAGE,
        "patch_size": PATCH,
        "num_channels": CHANNELS,
        "qkv_bias": True,
        "id2label": {str(i): name for i, name in enumerate(["red", "green", "blue"])},
        "label2id": {name: i for i, name in enumerate(["red", "green", "blue"])},
    }
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    processor = {
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "rescale_factor": 1 / 255,
        "size": {"height": IMAGE, "width": IMAGE},
    }
    (OUT / "preprocessor_config.json").write_text(json.dumps(processor, indent=2) + "\n")
    rng = np.random.default_rng(20261123)
    w = weights(rng)
    save_safetensors(OUT / "model.safetensors", w)
    images = rng.integers(0, 256, (4, CHANNELS, IMAGE, IMAGE)).astype(np.float32)
    labels = images.mean(axis=(2, 3)).argmax(1).astype(np.float32)
    save_safetensors(OUT / "test.safetensors", {"images": images, "labels": labels})
    pixels = (images.astype(np.float64) / 255 - 0.5) / 0.5
    logits = [forward(w, img).round(6).tolist() for img in pixels]
    (OUT / "expected.json").write_text(json.dumps({"logits": logits}) + "\n")
    print(f"wrote {OUT} ({sum(v.size for v in w.values())} weights)")


if __name__ == "__main__":
    main()
