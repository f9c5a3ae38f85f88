"""Veil: private machine-learning inference by secure multi-party computation.

The heavy lifting happens in Rust (``veil._native``); this package is the Python face of it.
Until model inference lands, it offers the demo computation (a private elementwise product of
two secret vectors) and deployment certificates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from typing import Literal, Sequence

from . import _native

__all__ = ["version", "simulate_mul", "make_certs", "PartyReport", "PhaseReport"]


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
