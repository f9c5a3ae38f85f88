#!/usr/bin/env python3
"""Trains the example CNN on scikit-learn's digits dataset (8x8 grey images, bundled with
scikit-learn: no download) in plain NumPy, and exports it to ONNX with the `onnx` helpers.

    .venv/bin/python -m pip install -r requirements-train.txt
    .venv/bin/python scripts/train_digits_cnn.py models/digits-cnn

Writes `model.onnx` (LeNet-style: conv 3x3 1->8, ReLU, max-pool 2, conv 3x3 8->16, ReLU,
max-pool 2, flatten, linear 64->32, ReLU, linear 32->10; PyTorch's layouts) and
`test.safetensors` (the held-out images `[N, 1, 8, 8]` scaled to [0, 1], their labels and
this script's float logits, a reference independent of Veil's executors), and prints the
plaintext test accuracy. Deterministic (fixed seeds).
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from fixture_np import save_safetensors


def im2col(x, k, pad):
    """x: [B, C, H, W] -> [B, H*W, C*k*k] for stride 1 and 'same' padding."""
    b, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.empty((b, h, w, c, k, k), dtype=x.dtype)
    for dy in range(k):
        for dx in range(k):
            cols[:, :, :, :, dy, dx] = xp[:, :, dy : dy + h, dx : dx + w].transpose(0, 2, 3, 1)
    return cols.reshape(b, h * w, c * k * k)


def col2im(g, shape, k, pad):
    b, c, h, w = shape
    g = g.reshape(b, h, w, c, k, k)
    out = np.zeros((b, c, h + 2 * pad, w + 2 * pad), dtype=g.dtype)
    for dy in range(k):
        for dx in range(k):
            out[:, :, dy : dy + h, dx : dx + w] += g[:, :, :, :, dy, dx].transpose(0, 3, 1, 2)
    return out[:, :, pad : pad + h, pad : pad + w]


class Net:
    def __init__(self, rng):
        def he(*shape, fan_in):
            return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float64)

        self.p = {
            "conv1.weight": he(8, 1, 3, 3, fan_in=9),
            "conv1.bias": np.zeros(8),
            "conv2.weight": he(16, 8, 3, 3, fan_in=72),
            "conv2.bias": np.zeros(16),
            "fc1.weight": he(32, 64, fan_in=64),
            "fc1.bias": np.zeros(32),
            "fc2.weight": he(10, 32, fan_in=32),
            "fc2.bias": np.zeros(10),
        }

    def conv(self, x, name):
        w, b = self.p[name + ".weight"], self.p[name + ".bias"]
        cols = im2col(x, 3, 1)
        y = cols @ w.reshape(w.shape[0], -1).T + b
        bsz, _, h, wd = x.shape
        return y.transpose(0, 2, 1).reshape(bsz, w.shape[0], h, wd), cols

    @staticmethod
    def pool(x):
        b, c, h, w = x.shape
        win = x.reshape(b, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, c, h // 2, w // 2, 4)
        arg = win.argmax(-1)
        return win.max(-1), arg

    @staticmethod
    def unpool(g, arg, shape):
        b, c, h, w = shape
        win = np.zeros((b, c, h // 2, w // 2, 4))
        np.put_along_axis(win, arg[..., None], g[..., None], axis=-1)
        return win.reshape(b, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(shape)

    def forward(self, x, keep=False):
        c1, cols1 = self.conv(x, "conv1")
        r1 = np.maximum(c1, 0)
        p1, a1 = self.pool(r1)
        c2, cols2 = self.conv(p1, "conv2")
        r2 = np.maximum(c2, 0)
        p2, a2 = self.pool(r2)
        f = p2.reshape(len(x), -1)
        h = f @ self.p["fc1.weight"].T + self.p["fc1.bias"]
        hr = np.maximum(h, 0)
        out = hr @ self.p["fc2.weight"].T + self.p["fc2.bias"]
        if keep:
            self.cache = (x, c1, cols1, r1, a1, p1, c2, cols2, r2, a2, p2, f, h, hr)
        return out

    def backward(self, gout):
        x, c1, cols1, r1, a1, p1, c2, cols2, r2, a2, p2, f, h, hr = self.cache
        g = {}
        g["fc2.weight"] = gout.T @ hr
        g["fc2.bias"] = gout.sum(0)
        gh = (gout @ self.p["fc2.weight"]) * (h > 0)
        g["fc1.weight"] = gh.T @ f
        g["fc1.bias"] = gh.sum(0)
        gp2 = (gh @ self.p["fc1.weight"]).reshape(p2.shape)
        gc2 = self.unpool(gp2, a2, r2.shape) * (c2 > 0)
        gy = gc2.reshape(len(x), 16, -1).transpose(0, 2, 1)
        g["conv2.weight"] = np.einsum("bpo,bpk->ok", gy, cols2).reshape(16, 8, 3, 3)
        g["conv2.bias"] = gy.sum((0, 1))
        gcols = gy @ self.p["conv2.weight"].reshape(16, -1)
        gp1 = col2im(gcols, p1.shape, 3, 1)
        gc1 = self.unpool(gp1, a1, r1.shape) * (c1 > 0)
        gy = gc1.reshape(len(x), 8, -1).transpose(0, 2, 1)
        g["conv1.weight"] = np.einsum("bpo,bpk->ok", gy, cols1).reshape(8, 1, 3, 3)
        g["conv1.bias"] = gy.sum((0, 1))
        return g


def train(net, x, y, rng, epochs=40, batch=32, lr=2e-3):
    m = {k: np.zeros_like(v) for k, v in net.p.items()}
    v = {k: np.zeros_like(w) for k, w in net.p.items()}
    t = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(x), batch):
            idx = order[i : i + batch]
            logits = net.forward(x[idx], keep=True)
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            p[np.arange(len(idx)), y[idx]] -= 1
            grads = net.backward(p / len(idx))
            t += 1
            for k in net.p:
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
                mh, vh = m[k] / (1 - 0.9**t), v[k] / (1 - 0.999**t)
                net.p[k] -= lr * mh / (np.sqrt(vh) + 1e-8)


def export_onnx(net, path):
    init = [numpy_helper.from_array(w.astype(np.float32), name) for name, w in net.p.items()]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2], name="pool2"),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1, name="flatten"),
        helper.make_node("Gemm", ["f", "fc1.weight", "fc1.bias"], ["h"], transB=1, name="fc1"),
        helper.make_node("Relu", ["h"], ["hr"], name="relu3"),
        helper.make_node("Gemm", ["hr", "fc2.weight", "fc2.bias"], ["logits"], transB=1, name="fc2"),
    ]
    graph = helper.make_graph(
        nodes,
        "digits_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        initializer=init,
    )
    model = helper.make_model(graph, producer_name="veil-train-digits", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "models/digits-cnn")
    out.mkdir(parents=True, exist_ok=True)
    digits = load_digits()
    x = (digits.images / 16.0)[:, None, :, :]
    x_train, x_test, y_train, y_test = train_test_split(x, digits.target, test_size=0.2, random_state=0, stratify=digits.target)
    rng = np.random.default_rng(0)
    net = Net(rng)
    train(net, x_train, y_train, rng)
    # The reference logits come from the float32 weights that are exported.
    net.p = {k: v.astype(np.float32).astype(np.float64) for k, v in net.p.items()}
    logits = net.forward(x_test)
    acc = float((logits.argmax(1) == y_test).mean())
    export_onnx(net, out / "model.onnx")
    save_safetensors(out / "test.safetensors", {"images": x_test, "labels": y_test.astype(np.float32), "logits": logits})
    print(json.dumps({"train": len(x_train), "test": len(x_test), "float_test_accuracy": acc}))


if __name__ == "__main__":
    main()
