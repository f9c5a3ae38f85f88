#!/usr/bin/env python3
"""Turns the benchmark records under `docs/results/` into `docs/benchmarks.md` and its plots.

    .venv/bin/python scripts/bench_report.py            # docs/results -> docs/benchmarks.md
    .venv/bin/python scripts/bench_report.py --results DIR --out DIR

Every `*.jsonl` file of the results folder is read; a record is recognised by its fields (the
conventions are those of `veil bench`, see `docs/network.md` and the papers' notes):

- per-op records (`veil bench ops --json`): `family`, `op`, `n`, `online`, `offline`, `seconds`;
- model records (`veil bench model --json`): `family`, `model`, `batch` or `seq`, `online`, ...;
- layer records (`veil bench layer --json`): `shape`, `offline`, `online`, `blocks`;
- shaped runs (`veil bench model --net P --json`): `seconds_shaped`, `traffic`, `net`.

Times on other networks are *projected* from a measured record as
`measured seconds + rounds x RTT/2 + 8 x bytes / bandwidth` (the formula of `veil-shaping`) and
every such figure says so. Nothing here measures: regenerate the records with the commands in
the report, then rerun this script.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import paper_tables as paper  # noqa: E402

MIB = float(1 << 20)

# The network profiles of the benchmark conventions: bandwidth (bit/s), RTT (s), as in crate
# `veil-shaping`'s `PROFILES` (a test keeps the two equal).
PROFILES = {
    "lan": (1e9, 0.5e-3),
    "lan10": (10e9, 0.1e-3),
    "wan": (400e6, 4e-3),
    "wan40": (400e6, 40e-3),
    "wan100": (100e6, 80e-3),
}


def network_seconds(bytes_sent: float, rounds: float, bandwidth: float, rtt: float) -> float:
    """`rounds` one-way hops (half a round trip each: rounds are the longest chain of dependent
    messages) and `bytes_sent` bytes at `bandwidth`: the formula of `veil-shaping`."""
    return rounds * rtt / 2 + 8.0 * bytes_sent / bandwidth


def project(seconds: float, bytes_sent: float, rounds: float, bandwidth: float, rtt: float) -> float:
    """Measured compute plus the network time of `rounds` and `bytes_sent` bytes."""
    return seconds + network_seconds(bytes_sent, rounds, bandwidth, rtt)


@dataclass
class Results:
    ops: list[dict]
    models: list[dict]
    layers: list[dict]
    shaped: list[dict]
    # Layer records with another chunk size than the default (`--chunk`): a trade-off shown on
    # its own, kept out of the scaling and whole-model tables.
    chunk_trials: list[dict] = field(default_factory=list)


def load(folder: Path) -> Results:
    """Every record of every `*.jsonl` file in `folder`, sorted by kind."""
    r = Results([], [], [], [])
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{number}: not a JSON record ({e})") from None
            if "seconds_shaped" in rec:
                r.shaped.append(rec)
            elif "shape" in rec and "blocks" in rec:
                r.layers.append(rec)
            elif "op" in rec and "n" in rec and "online" in rec:
                r.ops.append(rec)
            elif "model" in rec and "online" in rec:
                r.models.append(rec)
    r.ops = newest(r.ops, lambda o: (o["family"], o["security"], o["op"], o["ring_bits"], o["n"]))
    r.layers = newest(r.layers, lambda x: (x["family"], x["security"], layer_model(x), x["shape"]["tokens"],
                                           x["shape"]["hidden"], x.get("layers"), x.get("material"), chunk(x)))
    r.chunk_trials = [x for x in r.layers if chunk(x) != ON_DEMAND_CHUNK]
    r.layers = [x for x in r.layers if chunk(x) == ON_DEMAND_CHUNK]
    r.models = newest(r.models, lambda m: (m["family"], m["security"], m["model"], m.get("batch"), m.get("seq"),
                                           m.get("images_per_check")))
    return r


STALE_MARK = " †"


def stale(rec: dict) -> bool:
    """A `mosformer` record made before its gates' outputs and MACs moved to Z_2^128 (records say
    their MAC ring, `mac_bits`, since then), or a layer or model record whose online time still
    counted waits for a peer's on-demand offline work (`offline_steps_synced` since then)."""
    if rec.get("family") != "mosformer":
        return False
    whole_run = "op" not in rec
    return "mac_bits" not in rec or (whole_run and not rec.get("offline_steps_synced"))


def mark(text: str, rec: dict | None) -> str:
    return text + STALE_MARK if rec is not None and stale(rec) else text


def newest(records: list[dict], key) -> list[dict]:
    """One record per key, in first-seen order: a fresh record replaces a stale one, and a later
    record an earlier one of the same kind; so re-running a benchmark and appending its record
    updates the report."""
    best: dict = {}
    for rec in records:
        k = key(rec)
        if k not in best or stale(best[k]) or not stale(rec):
            best[k] = rec
    return list(best.values())


def fmt(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}" if abs(v) < 1 else f"{v:.{max(digits - int(math.log10(abs(v))) - 1, 0)}f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def op_index(ops: list[dict]) -> dict:
    """(family, security, op, n) -> record, in the narrowest ring measured (the paper's precision
    plan; wider rings are the no-modulus-conversion variants)."""
    idx: dict = {}
    for o in sorted(ops, key=lambda o: -o["ring_bits"]):
        idx[(o["family"], o["security"], o["op"], o["n"])] = o
    return idx


def piece_rounds(o: dict) -> int:
    """Online rounds of one batch of the op: large runs are made and consumed in `pieces` one
    after the other (to bound the offline material held), whose rounds add up in the record."""
    return o["online"]["rounds"] // max(o.get("pieces") or 1, 1)


def rounds_text(o: dict) -> str:
    pieces = o.get("pieces") or 1
    return str(o["online"]["rounds"]) if pieces <= 1 else f"{piece_rounds(o)} (x{pieces} pieces)"


def online_projection(o: dict, profile: tuple[float, float]) -> float:
    """The online phase as one batch on `profile`: measured seconds, the slowest party's bytes,
    the rounds of one batch."""
    bw, rtt = profile
    return project(o["seconds"]["online"], o["online"]["bytes_max_party"], piece_rounds(o), bw, rtt)


# ---------------------------------------------------------------------------------------------
# Sections


def ops_section(family: str, ops: list[dict]) -> str:
    mine = sorted((o for o in ops if o["family"] == family), key=lambda o: (o["security"], o["op"], o["n"]))
    if not mine:
        return f"No `{family}` per-op records yet.\n"
    header = ["op", "security", "ring", "n", "online B/el", "paper B/el", "rounds", "msgs/party",
              "offline B/el", "online s", "offline s", "LAN s (proj.)", "WAN s (proj.)"]
    rows = []
    for o in mine:
        p = o.get("paper")
        rows.append([mark(o["op"], o), o["security"], str(o["ring_bits"]), f"{o['n']:,}",
                     fmt(o["online_bytes_per_element"], 4), fmt(p["value"], 4) if p else "—",
                     rounds_text(o), fmt(o["online"]["messages_per_party"]),
                     fmt(o["offline"]["bytes_per_party"] / o["n"], 4), fmt(o["seconds"]["online"]),
                     fmt(o["seconds"]["offline"]), fmt(online_projection(o, PROFILES["lan"])),
                     fmt(online_projection(o, PROFILES["wan"]))])
    sources = sorted({(o["op"], o["paper"]["source"], o["paper"]["convention"]) for o in mine if o.get("paper")})
    notes = "".join(f"- `{op}`: {src} ({conv})\n" for op, src, conv in sources)
    return table(header, rows) + "\nPaper figures (per element and party):\n\n" + notes


def online_columns(o: dict | None) -> list[str]:
    """Projected LAN and WAN seconds, MiB per party, rounds / sends of one batch."""
    if o is None:
        return ["not run"] * 4
    sends = o["online"]["messages_per_party"] / max(o.get("pieces") or 1, 1)
    return [fmt(online_projection(o, PROFILES["lan"])), fmt(online_projection(o, PROFILES["wan"])),
            mark(fmt(o["online"]["bytes_per_party"] / MIB, 4), o), f"{rounds_text(o)} / {fmt(sends)}"]


def mosformer_tables(ops: list[dict]) -> str:
    idx = op_index(ops)
    out = ["### Mosformer Table 4 (DReLU, Inverse, Rsqrt; online, Z_2^32)\n",
           "Paper: single thread, LAN 1 Gbps/0.5 ms and WAN 400 Mbps/4 ms, Comm in MB = 2^20 bytes "
           "per party, rounds = sends per party. Ours: malicious, measured on loopback with the "
           "three servers as threads on this machine's 2 cores, then projected onto the same "
           "networks; our `rounds` are latency rounds, `msgs` sends per party.\n"]
    rows = []
    for op, entries in paper.MOSFORMER_TABLE4.items():
        for n, lan, wan, mb, rounds in entries:
            o = idx.get(("mosformer", "malicious", op, n))
            ours = online_columns(o)
            rows.append([op, f"{n:,}", fmt(lan), ours[0], fmt(wan), ours[1], fmt(mb, 4), ours[2], str(rounds), ours[3]])
    out.append(table(["op", "n", "LAN s paper", "ours (proj.)", "WAN s paper", "ours (proj.)",
                      "MB paper", "ours", "rounds paper", "ours rounds / msgs"], rows))
    out.append("\n### Mosformer Table 5 (LUT, offline and online)\n")
    rows = []
    for n, lan_off, lan_on, wan_off, wan_on, mb_off, mb_on in paper.MOSFORMER_TABLE5:
        o = idx.get(("mosformer", "malicious", "lut", n))
        if o:
            ours = [fmt(o["seconds"]["offline"]), fmt(online_projection(o, PROFILES["lan"])),
                    fmt(o["offline"]["bytes_per_party"] / MIB, 4), mark(fmt(o["online"]["bytes_per_party"] / MIB, 4), o)]
        else:
            ours = ["not run"] * 4
        rows.append([f"{n:,}", fmt(lan_off), ours[0], fmt(lan_on), ours[1], fmt(mb_off, 4), ours[2],
                     fmt(mb_on, 4), ours[3]])
    out.append(table(["n", "LAN off s paper", "ours off s (measured)", "LAN on s paper", "ours (proj.)",
                      "MB off paper", "ours", "MB on paper", "ours"], rows))
    out.append("\nThe paper does not state its table size; ours is a 4-bit table. Our offline "
               "material is made by the servers themselves (keys dealt and checked by the pairs).\n")
    out.append("\n### Mosformer Table 12 (GELU, online)\n")
    rows = []
    for n, lan, wan, mb, rounds in paper.MOSFORMER_TABLE12:
        o = idx.get(("mosformer", "malicious", "gelu", n))
        ours = online_columns(o)
        rows.append([f"{n:,}", fmt(lan), ours[0], fmt(wan), ours[1], fmt(mb, 4), ours[2], str(rounds), ours[3]])
    out.append(table(["n", "LAN s paper", "ours (proj.)", "WAN s paper", "ours (proj.)", "MB paper", "ours",
                      "rounds paper", "ours rounds / msgs"], rows))
    out.append("\nThe paper's GELU runs in Z_2^32 (f = 12) and reads ReLU - GELU from a 256-entry "
               "table; ours compares in Z_2^16 (f = 6) as its precision plan places it, with inputs "
               "from the 64-bit MAC ring, and evaluates a degree-7 polynomial of ReLU - GELU with "
               "five verified products (more bytes online, a fraction of the offline time).\n")
    return "\n".join(out)


def layer_totals(rec: dict, layers: int) -> dict:
    """A whole model's cost from one measured layer: `layers` times it."""
    return {k: layers * rec[phase][field] for phase in ("online", "offline")
            for k, field in ((f"{phase}_bytes", "bytes_per_party"), (f"{phase}_rounds", "rounds"),
                             (f"{phase}_seconds", "seconds"))}


# Layers of each model `veil bench model` runs with random weights of the real shapes.
MODEL_DEPTH = {"bert-base": 12, "bert-large": 24, "gpt2": 12}


def layer_model(rec: dict) -> str:
    """`gpt2` for GPT-2 decoder blocks; `bert-base` or `bert-large` for BERT encoder layers of
    width 768 or 1024 (`encoder-W` for any other width W)."""
    shape = rec["shape"]
    if shape.get("causal"):
        return "gpt2"
    return {768: "bert-base", 1024: "bert-large"}.get(shape["hidden"], f"encoder-{shape['hidden']}")


def one_layer(rec: dict) -> bool:
    """A record of one measured layer (not a whole stack's totals): one layer run, or an older
    record of the last layer alone (`ahead, per layer`)."""
    return rec.get("layers", 1) == 1 or rec.get("material") == "ahead, per layer"


def model_totals(layers: list[dict], model: str, tokens: int, security: str) -> tuple[dict, str] | None:
    """A whole model's cost (`MODEL_DEPTH` layers): measured whole when a record of all its layers
    exists, else that many times one layer."""
    depth = MODEL_DEPTH[model]
    same = [r for r in layers if layer_model(r) == model and r["shape"]["tokens"] == tokens
            and r["security"] == security]
    # A fresh record before a stale one, then a whole stack before `depth` times one layer.
    same.sort(key=stale)
    whole = next((r for r in same if not one_layer(r) and r["layers"] == depth), None)
    single = next((r for r in same if one_layer(r)), None)
    if whole is not None and (single is None or not stale(whole) or stale(single)):
        return layer_totals(whole, 1), mark(f"{depth} layers measured", whole)
    return (layer_totals(single, depth), mark(f"{depth} x 1 layer", single)) if single is not None else None


def unreported_models(layers: list[dict]) -> str:
    """Models no paper reports (BERT-large): our whole-model figures, projected onto Mosformer's
    LAN and WAN."""
    keys = sorted({(layer_model(r), r["shape"]["tokens"], r["security"]) for r in layers
                   if layer_model(r) == "bert-large"})
    rows = []
    for model, tokens, security in keys:
        found = model_totals(layers, model, tokens, security)
        if found is None:
            continue
        t, source = found
        on = [fmt(project(t["online_seconds"], t["online_bytes"], t["online_rounds"], *PROFILES[net]))
              for net in ("lan", "wan")]
        rows.append([model, str(tokens), security, source, fmt(t["online_bytes"] / 2**30, 3),
                     fmt(t["offline_bytes"] / 2**30, 3), str(t["online_rounds"]), fmt(t["online_seconds"]),
                     *on, fmt(t["offline_seconds"])])
    if not rows:
        return ""
    return ("\nModels no paper reports (`veil bench model --model bert-large`: 24 layers of width 1024, "
            "16 heads, feed-forward 4096; random weights; GB = 2^30 bytes per party):\n\n"
            + table(["model", "tokens", "security", "from", "GB on", "GB off", "online rounds", "online s",
                     "LAN on (proj.)", "WAN on (proj.)", "offline s"], rows))


def mosformer_models(layers: list[dict], models: list[dict]) -> str:
    out = ["### Mosformer Tables 8 and 9 (whole models)\n",
           "Paper: BERT-base at 128 tokens, GPT-2 base at 64 tokens, 16 threads for matmul, GB = "
           "2^30 bytes per party. Ours: the 12 layers measured in one run (`veil bench model --model "
           "bert-base|gpt2`), or else 12 times one measured layer (column `from`); random weights of the "
           "real shapes, embeddings, pooler and LM head left out, servers as threads on 2 cores, "
           "projected onto each table's networks.\n"]
    rows = []
    for (tab, model, tokens, security), vals in paper.MOSFORMER_MODELS.items():
        lan_on, lan_off, wan_on, wan_off, gb_on, gb_off = vals
        found = model_totals(layers, model, tokens, security)
        if found is None:
            ours, source = ["not measured"] * 6, "-"
        else:
            t, source = found
            (ln, lbw, lrtt), (wn, wbw, wrtt) = paper.MOSFORMER_NETWORKS[tab]
            p = lambda phase, bw, rtt: project(t[f"{phase}_seconds"], t[f"{phase}_bytes"], t[f"{phase}_rounds"], bw, rtt)  # noqa: E731
            ours = [fmt(p("online", lbw, lrtt)), fmt(p("offline", lbw, lrtt)), fmt(p("online", wbw, wrtt)),
                    fmt(p("offline", wbw, wrtt)), fmt(t["online_bytes"] / 2**30, 3), fmt(t["offline_bytes"] / 2**30, 3)]
        rows.append([tab, model, str(tokens), security, source, fmt(lan_on), ours[0], fmt(lan_off), ours[1],
                     fmt(wan_on), ours[2], fmt(wan_off), ours[3], fmt(gb_on), ours[4], fmt(gb_off), ours[5]])
    out.append(table(["table", "model", "tokens", "security", "from", "LAN on", "ours", "LAN off", "ours", "WAN on",
                      "ours", "WAN off", "ours", "GB on", "ours", "GB off", "ours"], rows))
    other = unreported_models(layers)
    if other:
        out.append(other)
    real = [m for m in models if m["family"] == "mosformer"]
    if real:
        out.append("\nReal checkpoints (`veil bench model --family mosformer`):\n")
        out.append(table(["model", "tokens", "security", "online MiB", "offline MiB", "rounds on/off",
                          "online s", "offline s", "max abs err"],
                         [[mark(m["model"], m), str(m.get("seq")), m["security"], fmt(m["online"]["bytes_per_party"] / MIB),
                           fmt(m["offline"]["bytes_per_party"] / MIB),
                           f"{m['online']['rounds']} / {m['offline']['rounds']}", fmt(m["seconds"]["online"]),
                           fmt(m["seconds"]["offline"]), fmt(m.get("max_abs_error"))] for m in real]))
    return "\n".join(out)


def aegis_tables(ops: list[dict], models: list[dict]) -> str:
    idx = op_index(ops)
    out = ["### Aegis Tables 1 and 6 (per-element costs, l = 64)\n",
           "Paper: total bits over the three parties per element (shown as bits / 24 = bytes per "
           "party, our unit). Ours: the largest n run, mean bytes per party per element; the "
           "verification is amortised over the run.\n"]
    rows = []
    for op, (off_bits, rounds, on_bits, src) in paper.AEGIS_TABLE6.items():
        runs = sorted((o for o in ops if o["family"] == "aegis" and o["op"] == op), key=lambda o: o["n"])
        if runs:
            o = runs[-1]
            v = o.get("verify") or {}
            ours = [f"{o['n']:,}", fmt(o["offline"]["bytes_per_party"] / o["n"], 4),
                    fmt(o["online_bytes_per_element"], 4), str(o["online"]["rounds"]),
                    fmt(v.get("bytes_per_party", 0) / o["n"], 4), str(v.get("rounds", "—"))]
        else:
            ours = ["not run"] * 6
        rows.append([op, src, fmt(off_bits / 24, 4), ours[1], fmt(on_bits / 24, 4), ours[2], str(rounds), ours[3],
                     ours[0], ours[4], ours[5]])
    out.append(table(["op", "paper row", "offline paper", "ours", "online paper", "ours", "rounds paper", "ours",
                      "n", "verify B/el", "verify rounds"], rows))
    out.append("\n### Aegis Table 4 (sign, ReLU, MaxPool; paper semi-honest, MAN setting)\n")
    out.append("Paper: bytes as printed (whose sends are summed is not stated), milliseconds. Ours: "
               "the execution phase of the malicious run (its semi-honest part), total bytes over "
               "the three servers, measured on loopback; the verification is extra. Our MaxPool `n` "
               "counts 2x2 windows (outputs, 4n inputs); the paper does not say which it counts.\n")
    rows = []
    for op, entries in paper.AEGIS_TABLE4.items():
        for n, off_b, on_b, off_ms, on_ms in entries:
            o = idx.get(("aegis", "malicious", op, n))
            ours = ([fmt(3 * o["offline"]["bytes_per_party"]), fmt(3 * o["online"]["bytes_per_party"]),
                     fmt(1e3 * o["seconds"]["offline"]), fmt(1e3 * o["seconds"]["online"])] if o else ["not run"] * 4)
            rows.append([op, f"{n:,}", fmt(off_b), ours[0], fmt(on_b), ours[1], fmt(off_ms), ours[2], fmt(on_ms), ours[3]])
    out.append(table(["op", "n", "offline B paper", "ours", "online B paper", "ours", "offline ms paper", "ours",
                      "online ms paper", "ours"], rows))
    out.append("\n### Aegis Table 3 (CNN inference, batch 30, LAN)\n")
    out.append("Paper: Com in MB (whose sends are summed is not stated), times in ms. Ours: mean "
               "MiB sent per server, latency rounds, seconds measured on loopback (2 cores; the machine below), peak "
               "memory of the process running all three servers. A model that does not fit at batch "
               "30 is shown at its largest measured batch; `checked every K`: the servers verified "
               "after every K images (`--images-per-check K`), so rounds add up over the groups.\n")
    rows = []
    largest: dict[str, dict] = {}
    for m in (m for m in models if m["family"] == "aegis" and m["model"] in paper.AEGIS_TABLE3):
        best = largest.get(m["model"])
        key = (m.get("batch") == 30, m.get("batch") or 0)
        if best is None or key > (best.get("batch") == 30, best.get("batch") or 0):
            largest[m["model"]] = m
    for m in sorted(largest.values(), key=lambda m: m["model"]):
        ref = paper.AEGIS_TABLE3.get(m["model"], {})
        for stage, phase in (("execution", "online"), ("verification", "verify")):
            p = ref.get(stage) if m.get("batch") == 30 else None
            size = str(m.get("batch"))
            if m.get("images_per_check"):
                size += f" (checked every {m['images_per_check']})"
            rows.append([m["model"], size, stage,
                         fmt(p[0]) if p and p[0] is not None else "—",
                         fmt(m["offline"]["bytes_per_party"] / MIB) if stage == "execution" else "—",
                         fmt(p[2]) if p else "—", fmt(m[phase]["bytes_per_party"] / MIB),
                         str(p[3]) if p else "—", str(m[phase]["rounds"]),
                         fmt(p[4]) if p else "—", fmt(1e3 * m["seconds"][phase]),
                         fmt(m["peak_rss_mib"] / 1024) if stage == "execution" and m.get("peak_rss_mib") else "—"])
    out.append(table(["model", "batch", "stage", "offline MB paper", "ours MiB", "online MB paper", "ours MiB",
                      "rounds paper", "ours", "ms paper", "ours ms", "peak GiB"], rows))
    out.append(machines_line(largest.values()))
    out.append(per_image_section(largest.values()))
    return "\n".join(out)


def per_image_section(models) -> str:
    """Table 3's execution traffic beside the paper's own per-operation costs (Table 6) for one
    image, and ours per image, summed over the three servers."""
    out = ["\n### Aegis Table 3's execution traffic against Table 6, per image\n",
           "Table 6 (bits over the three parties per operation, l = 64, log l = 6) times the "
           "operations of one image (`scripts/paper_tables.py`: ReLUs, 2x2 MaxPools, linear outputs "
           "with a multiplication and a truncation each), in MB. Ours: bytes the three servers "
           "sent, divided by the batch. For S-NN and LeNet, Table 3's figure is 0.6 to 0.9 times "
           "one image's Table 6 cost, where thirty images' would be 30 times more: it reads as "
           "per image. For VGG-16 it is 9 times below even one image's, so the paper's VGG-16 or "
           "its figure differs from the network it describes. Veil truncates a convolution's "
           "outputs after its pooling and runs a ReLU that only feeds a max-pool on the pool's "
           "outputs (exact: ReLU is monotone), so it makes fewer truncations and ReLUs than this "
           "count (LeNet: 1,780 ReLUs per image instead of 6,508).\n"]
    rows = []
    for m in sorted(models, key=lambda m: m["model"]):
        name, batch = m["model"], m.get("batch") or 1
        if name not in paper.AEGIS_CNN_OPS:
            continue
        relu, pools, linear = paper.AEGIS_CNN_OPS[name]
        ref = paper.AEGIS_TABLE3[name]["execution"]
        for stage, phase, printed in (("offline", "offline", ref[0]), ("online", "online", ref[2])):
            formula = paper.aegis_table6_mb(name, stage)
            ours = 3 * m[phase]["bytes_per_party"] / batch / 1e6
            rows.append([name, f"{relu:,}", f"{pools:,}", f"{linear:,}", stage, fmt(formula), fmt(printed),
                         fmt(30 * formula), str(batch), fmt(ours), fmt(ours / formula), fmt(ours / printed)])
    out.append(table(["model", "ReLUs", "MaxPools", "linear outputs", "stage", "Table 6 MB, one image",
                      "Table 3 MB", "Table 6 MB, 30 images", "our batch", "ours MB per image",
                      "ours / Table 6", "ours / Table 3"], rows))
    return "\n".join(out)


def network_section(shaped: list[dict]) -> str:
    if not shaped:
        return "No shaped runs yet.\n"
    rows = []
    for s in shaped:
        n = s["net"]
        rows.append([s["model"], s["family"], n["name"], f"{n['bandwidth_bps'] / 1e6:g} Mbps / {n['rtt_ms']:g} ms",
                     fmt(s["seconds_unshaped"]), fmt(s["seconds_shaped"]), fmt(s["seconds_projected"]),
                     f"{100 * s['relative_gap']:+.1f} %", n["latency"]])
    return table(["workload", "family", "profile", "bandwidth / RTT", "unshaped s", "shaped s", "projected s", "gap",
                  "latency"], rows)


ON_DEMAND_CHUNK = 16_384  # elements per gate call, `veil_bench::encoder::ON_DEMAND_CHUNK`


def chunk(rec: dict) -> int:
    """Most elements per gate call in a layer record (records before `--chunk` used the default)."""
    return rec.get("chunk", ON_DEMAND_CHUNK)


def chunk_trials_table(trials: list[dict], layers: list[dict]) -> str:
    """Each `--chunk` trial beside the default-chunk record of the same layer."""
    rows = []
    for t in sorted(trials, key=lambda t: (layer_model(t), t["shape"]["tokens"], chunk(t))):
        base = next((b for b in layers if layer_model(b) == layer_model(t) and b["security"] == t["security"]
                     and b["shape"]["tokens"] == t["shape"]["tokens"] and one_layer(b) == one_layer(t)), None)
        for r in ([base] if base else []) + [t]:
            rows.append([layer_model(r), str(r["shape"]["tokens"]), f"{chunk(r):,}", str(r["online"]["rounds"]),
                         fmt(r["online"]["bytes_per_party"] / MIB), fmt(r["online"]["seconds"]),
                         fmt(r["offline"]["seconds"]), fmt(r.get("peak_rss_mib"))])
    if not rows:
        return ""
    return ("\n### Chunk size: rounds against memory (`veil bench layer --chunk N`, one layer)\n\n"
            "A bigger chunk runs a gate call in fewer pieces, so fewer rounds, but every server holds the material "
            "of a whole chunk at once (the LUT's expanded one-hot tables over Z_2^128 dominate it).\n\n"
            + table(["model", "tokens", "chunk", "online rounds", "online MiB", "online s", "offline s",
                     "peak MiB (3 servers)"], rows))


def chunked_rounds_note(r: dict) -> str:
    """Why a long layer's rounds grow faster than its depth, with the chunk counts of record `r`."""
    sh, blocks = r["shape"], {b["block"]: b["online"]["rounds"] for b in r["blocks"]}
    parts = []
    for block, elements in (("softmax", sh["heads"] * sh["tokens"] ** 2), ("gelu", sh["tokens"] * sh["ffn"])):
        chunks = -(-elements // ON_DEMAND_CHUNK)
        if block in blocks:
            parts.append(f"{block} {chunks} chunks of about {blocks[block] / chunks:.0f} rounds")
    return (f"\nRounds grow faster than the work: a gate call over more than {ON_DEMAND_CHUNK:,} elements "
            "(`ON_DEMAND_CHUNK`) runs in chunks one after the other, so that a server holds one chunk's material "
            f"at a time. At {sh['tokens']} tokens: {', '.join(parts)}. Bigger chunks keep a layer nearer the rounds "
            "of a one-chunk layer (16 tokens), at the cost of holding a whole chunk's material at once (below).\n")


def scaling_section(layers: list[dict], models: list[dict], trials: list[dict]) -> str:
    out = []
    bert = sorted((r for r in layers if r["shape"]["hidden"] == 768 and r["security"] == "malicious"
                   and layer_model(r) == "bert-base" and one_layer(r)), key=lambda r: r["shape"]["tokens"])
    if bert:
        out.append("### BERT-base layer against sequence length (malicious, one layer, per server)\n")
        bw, rtt = PROFILES["wan"]
        rows = [[mark(str(r["shape"]["tokens"]), r), fmt(r["online"]["bytes_per_party"] / MIB), str(r["online"]["rounds"]),
                 fmt(r["online"]["seconds"]), fmt(project(r["online"]["seconds"], r["online"]["bytes_per_party"],
                                                          r["online"]["rounds"], bw, rtt)),
                 fmt(r["offline"]["bytes_per_party"] / MIB), str(r["offline"]["rounds"]), fmt(r["offline"]["seconds"]),
                 fmt(r.get("peak_rss_mib"))] for r in bert]
        out.append(table(["tokens", "online MiB", "rounds", "online s", "online s on wan (proj.)", "offline MiB",
                          "offline rounds", "offline s", "peak MiB (3 servers)"], rows))
        out.append(chunked_rounds_note(bert[-1]))
        out.append(chunk_trials_table(trials, layers))
        out.append("\n### Where a layer's time goes (per block kind; compute = measured on loopback, "
                   "network = rounds x RTT/2 + bytes / bandwidth on `wan`)\n")
        rows = []
        for r in bert:
            for b in r["blocks"]:
                on = b["online"]
                net = network_seconds(on["bytes_per_party"], on["rounds"], bw, rtt)
                rows.append([mark(str(r["shape"]["tokens"]), r), b["block"], fmt(on["bytes_per_party"] / MIB), str(on["rounds"]),
                             fmt(on["seconds"]), fmt(net), fmt(b["offline"]["bytes_per_party"] / MIB),
                             fmt(b["offline"]["seconds"])])
        out.append(table(["tokens", "block", "online MiB", "rounds", "compute s", "network s (wan)", "offline MiB",
                          "offline s"], rows))
    cnn = {}
    for m in models:
        if m["family"] == "aegis" and m.get("batch"):
            cnn.setdefault(m["model"], []).append(m)
    for name, ms in sorted(cnn.items()):
        if len(ms) < 2:
            continue
        ms.sort(key=lambda m: m["batch"])
        out.append(f"\n### {name} under aegis against batch size (per server)\n")
        out.append(table(["batch", "online MiB", "rounds", "online s", "verify MiB", "verify rounds", "verify s",
                          "offline MiB", "offline s"],
                         [[str(m["batch"]), fmt(m["online"]["bytes_per_party"] / MIB), str(m["online"]["rounds"]),
                           fmt(m["seconds"]["online"]), fmt(m["verify"]["bytes_per_party"] / MIB),
                           str(m["verify"]["rounds"]), fmt(m["seconds"]["verify"]),
                           fmt(m["offline"]["bytes_per_party"] / MIB), fmt(m["seconds"]["offline"])] for m in ms]))
        out.append(machines_line(ms))
    return "\n".join(out) if out else "No scaling records yet.\n"


def machines_line(records) -> str:
    """Where the records were measured, for those that say (`machine`, newer records)."""
    seen = sorted({m["machine"] for m in records if m.get("machine")})
    return f"\nMeasured on: {'; '.join(seen)}.\n" if seen else ""


# ---------------------------------------------------------------------------------------------
# Plots


def plot_ops(family: str, ops: list[dict], path: Path) -> bool:
    """Online MiB and seconds (online + offline) against n, one line per op (malicious)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = [o for o in ops if o["family"] == family and o["security"] == "malicious"]
    if not mine:
        return False
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, op in enumerate(sorted({o["op"] for o in mine})):
        rs = sorted((o for o in mine if o["op"] == op), key=lambda o: o["n"])
        n = [o["n"] for o in rs]
        style = {"marker": "o", "label": op, "linestyle": LINE_STYLES[i // 10 % 3]}
        a.plot(n, [max(o["online"]["bytes_per_party"], 1) / MIB for o in rs], **style)
        b.plot(n, [o["seconds"]["online"] + o["seconds"]["offline"] for o in rs], **style)
    a.set(xscale="log", yscale="log", xlabel="elements n", ylabel="online MiB sent per party",
          title=f"{family}: online bytes")
    b.set(xscale="log", yscale="log", xlabel="elements n", ylabel="seconds (offline + online, measured)",
          title=f"{family}: time on loopback, 2 cores")
    b.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# Plots cycle through ten colours; the next ten lines are dashed, so that every line stays apart.
LINE_STYLES = ("-", "--", ":")


def plot_network(family: str, ops: list[dict], shaped: list[dict], path: Path) -> bool:
    """Online time of each op at its largest common n on every profile (projected), with the
    shaped model runs of the family (measured) beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = [o for o in ops if o["family"] == family and o["security"] == "malicious"]
    if not mine:
        return False
    names = list(PROFILES)
    ops_run = sorted({o["op"] for o in mine})
    # The largest size every op ran at, so that the lines compare (mosformer's row-wise gates run
    # the n asked for rounded down to whole rows: 9,984 of 10^4).
    def size(o: dict) -> int:
        rows = family == "mosformer" and o["op"] in ("max", "softmax", "layernorm", "matmul")
        return 10 ** math.ceil(math.log10(o["n"])) if rows else o["n"]

    n = max(set.intersection(*({size(o) for o in mine if o["op"] == op} for op in ops_run)), default=None)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, op in enumerate(ops_run):
        o = next((o for o in mine if o["op"] == op and size(o) == n), None)
        if o is not None and o["online"]["bytes_per_party"] > 0:
            a.plot(names, [online_projection(o, PROFILES[p]) for p in names], marker="o", label=op,
                   linestyle=LINE_STYLES[i // 10 % 3])
    a.set(yscale="log", ylabel="online seconds (projected, one batch)",
          title=f"{family} ops at n = {n:,} against network profile")
    a.legend(fontsize=6, ncol=2)
    runs = [s for s in shaped if s["family"] == family]
    labels = [f"{s['net']['name']}\n{s['model'][:22]}" for s in runs]
    x = range(len(runs))
    for off, key, lab in ((-0.27, "seconds_unshaped", "unshaped"), (0.0, "seconds_shaped", "shaped"),
                          (0.27, "seconds_projected", "projected")):
        b.bar([i + off for i in x], [s[key] for s in runs], width=0.27, label=lab)
    b.set_xticks(list(x), labels, fontsize=7)
    b.set(ylabel="seconds (whole run)", title=f"{family}: shaped runs against their projection")
    if runs:
        b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_scaling(layers: list[dict], path: Path) -> bool:
    """BERT-base layer: bytes and time against tokens, time split by block kind."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bert = sorted((r for r in layers if r["shape"]["hidden"] == 768 and r["security"] == "malicious"
                   and layer_model(r) == "bert-base" and one_layer(r)), key=lambda r: r["shape"]["tokens"])
    if not bert:
        return False
    t = [r["shape"]["tokens"] for r in bert]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot(t, [r["online"]["bytes_per_party"] / MIB for r in bert], marker="o", label="online MiB")
    a.plot(t, [r["offline"]["bytes_per_party"] / MIB for r in bert], marker="o", label="offline MiB")
    a.set(xscale="log", yscale="log", xlabel="tokens", ylabel="MiB per server", title="BERT-base layer: bytes")
    a.set_xticks(t, [str(x) for x in t])
    a.minorticks_off()
    a.legend()
    kinds = [blk["block"] for blk in bert[-1]["blocks"]]
    bottom = [0.0] * len(bert)
    bw, rtt = PROFILES["wan"]
    for kind in kinds:
        vals = []
        for r in bert:
            blk = next((x for x in r["blocks"] if x["block"] == kind), None)
            vals.append(0.0 if blk is None else blk["online"]["seconds"] + blk["offline"]["seconds"])
        b.bar([str(x) for x in t], vals, bottom=bottom, label=f"{kind} (compute, offline + online)")
        bottom = [x + y for x, y in zip(bottom, vals)]
    net = [network_seconds(r["online"]["bytes_per_party"], r["online"]["rounds"], bw, rtt) for r in bert]
    b.bar([str(x) for x in t], net, bottom=bottom, label="online network on wan (projected)", hatch="//",
          color="white", edgecolor="gray")
    b.set(xlabel="tokens", ylabel="seconds", title="BERT-base layer: where the time goes")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------


def stale_note(r: Results) -> str:
    """What the † marks mean, if any record carries one."""
    old = [x for x in r.ops + r.layers + r.models if stale(x)]
    if not old:
        return ""
    unsynced = [x for x in old if "mac_bits" in x]
    records_carry = "record carries" if len(unsynced) == 1 else "records carry"
    waits = (f" {len(unsynced)} layer or model {records_carry} it for another reason: material made on demand "
             "now ends each offline step with the servers waiting for one another, so that a server that finished "
             "its share of a dealing early waits in the offline phase; before, that wait fell into the next online "
             "step and was reported as online time (a BERT-base layer at 64 tokens: 6.59 s online before, 3.54 s "
             "now, GELU 4.21 s against 1.30 s; bytes are the same, offline rounds one more per gate call)." if unsynced else "")
    macs = len(old) - len(unsynced)
    lead = "All were" if not unsynced else f"{macs} {'was' if macs == 1 else 'were'}"
    mac_note = (f" {lead} taken before the gates' outputs and MACs "
                "moved from Z_2^64 to Z_2^128 (so that every bit of the 64-bit values is authenticated). "
                "Online, each MAC'd gate output now costs 16 more bytes per party (value and MAC reshared "
                "in 16-byte words): measured at n = 1000, LUT 34 B/el (was 18), GELU 176 (112), Exp 248 "
                "(200), Inv 392 (312), Rsqrt 425 (328), with one more round for Exp; offline bytes are "
                "within 1%." if macs else "")
    return (f"**Stale records (†, {len(old)} of them).**{mac_note}{waits} A new run's record replaces its "
            "stale one here: rerun the command and append its output to the records file.\n")


def report(results: Path, out: Path, command: str) -> Path:
    r = load(results)
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    made = {
        "mosformer-ops.png": plot_ops("mosformer", r.ops, plots / "mosformer-ops.png"),
        "aegis-ops.png": plot_ops("aegis", r.ops, plots / "aegis-ops.png"),
        "mosformer-network.png": plot_network("mosformer", r.ops, r.shaped, plots / "mosformer-network.png"),
        "aegis-network.png": plot_network("aegis", r.ops, r.shaped, plots / "aegis-network.png"),
        "bert-scaling.png": plot_scaling(r.layers, plots / "bert-scaling.png"),
    }

    def img(name: str, alt: str) -> str:
        return f"![{alt}](plots/{name})\n" if made[name] else ""

    md = [
        "# Veil benchmarks\n",
        f"Generated by `{command}` from the records in `{results.name}/` "
        f"({len(r.ops)} per-op, {len(r.models)} model, {len(r.layers)} layer and {len(r.shaped)} shaped-network "
        "records). Do not edit by hand: rerun the benchmarks (commands below), then the script.\n",
        "**Conventions.** Bytes are payload bytes *sent* per computing party (the mean over the "
        "parties unless said otherwise); MiB = 2^20 bytes; `rounds` is the longest chain of "
        "dependent messages (a model's verification counted across the servers, `max(after) - "
        "max(before)` of their logical times, since the aegis records of 2026-12-06: the longest "
        "server's own count could add rounds it waited for the others), `msgs` the sends per party "
        "(what Mosformer calls rounds). Seconds are "
        "measured on one 2-core machine with every party as a thread (or process) of it, on "
        "loopback unless a network is named; *projected* times add `rounds x RTT/2 + 8 x bytes / "
        "bandwidth` of a profile (with the rounds of one batch where an op ran in pieces; `lan` 1 Gbps/0.5 ms, `lan10` 10 Gbps/0.1 ms, `wan` 400 Mbps/4 ms, "
        "`wan40` 400 Mbps/40 ms, `wan100` 100 Mbps/80 ms) to the measured seconds. The papers ran "
        "on 16-thread servers; compare bytes and rounds exactly and seconds only as orders of "
        "magnitude.\n",
        "## mosformer\n",
        "Records: `veil bench ops --family mosformer --json` (malicious; `--security semi-honest` "
        "for the other mode), `veil bench layer --family mosformer [--model bert-base|bert-large|gpt2] "
        "--tokens T --layers 1 --json`, `veil bench model --family mosformer --model bert-base --seq 128 --json`.\n",
        stale_note(r),
        img("mosformer-ops.png", "mosformer per-op bytes and time against n"),
        img("mosformer-network.png", "mosformer against network profile"),
        "### Every op\n",
        ops_section("mosformer", r.ops),
        mosformer_tables(r.ops),
        mosformer_models(r.layers, r.models),
        "\n## aegis\n",
        "Records: `veil bench ops --family aegis --json`, `veil bench model --family aegis "
        "--model snn|lenet --batch 30 --json`.\n",
        img("aegis-ops.png", "aegis per-op bytes and time against n"),
        img("aegis-network.png", "aegis against network profile"),
        "### Every op\n",
        ops_section("aegis", r.ops),
        aegis_tables(r.ops, r.models),
        "\n## Real network shaping\n",
        "Every party in its own network namespace, the links' bandwidth shaped by the kernel and their latency "
        "shaped by the kernel (`netem`) or, where the kernel lacks it, emulated by the receiving parties "
        "(`docs/network.md`); the projection adds `rounds x RTT/2 + bytes / bandwidth` to the unshaped run. "
        "Records: `veil bench model --family F --model M --net PROFILE --json`.\n",
        network_section(r.shaped),
        "\n## Scaling\n",
        img("bert-scaling.png", "BERT-base layer against sequence length"),
        scaling_section(r.layers, r.models, r.chunk_trials),
    ]
    path = out / "benchmarks.md"
    path.write_text("\n".join(s for s in md if s))
    return path


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=root / "docs" / "results")
    ap.add_argument("--out", type=Path, default=root / "docs")
    a = ap.parse_args()
    if not a.results.is_dir():
        raise SystemExit(f"no results folder at {a.results}")
    path = report(a.results, a.out, "python scripts/bench_report.py")
    print(f"wrote {path} and its plots under {a.out / 'plots'}")


if __name__ == "__main__":
    main()
