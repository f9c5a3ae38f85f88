"""NumPy helpers of the scripts that make Veil's model fixtures: writing a `.safetensors` file
(F32, little endian) without the safetensors package (an 8-byte header length, the JSON header
padded to 8 bytes, then the raw data), and the LayerNorm of the reference forward passes."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np


def save_safetensors(path: Path | str, tensors: dict[str, np.ndarray]) -> None:
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def layernorm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def random_layernorm(w: dict[str, np.ndarray], name: str, h: int, rng: np.random.Generator) -> None:
    """`name.weight` around 1 and `name.bias` around 0 (std 0.1), as a trained LayerNorm."""
    w[name + ".weight"] = 1 + rng.normal(0, 0.1, h)
    w[name + ".bias"] = rng.normal(0, 0.1, h)


def random_linear(
    w: dict[str, np.ndarray], name: str, fin: int, fout: int, rng: np.random.Generator, in_first: bool
) -> None:
    """`name.weight` ~ N(0, 1/fin), stored `[fin, fout]` (`in_first`, GPT-2's Conv1D) or
    `[fout, fin]` (torch Linear), and `name.bias` ~ N(0, 0.1^2)."""
    w[name + ".weight"] = rng.normal(0, 1 / np.sqrt(fin), (fin, fout) if in_first else (fout, fin))
    w[name + ".bias"] = rng.normal(0, 0.1, fout)
