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
