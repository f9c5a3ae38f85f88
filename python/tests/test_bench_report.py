"""`scripts/bench_report.py`: records in, `benchmarks.md` and PNG plots out."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_report.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def phase(bytes_per_party, rounds, messages=1.0):
    return {"bytes_per_party": bytes_per_party, "bytes_max_party": int(bytes_per_party), "rounds": rounds,
            "messages_per_party": messages}


def op_record(family, op, n, online_bytes, rounds, pieces=1, mac_bits=128):
    rec = {"family": family, "security": "malicious", "op": op, "ring_bits": 32, "frac_bits": 12, "n": n,
            "parties": 3, "online": phase(online_bytes, rounds, 2.0 * pieces), "offline": phase(100.0 * n, 4),
            "seconds": {"online": 0.5, "offline": 2.0}, "net": "none", "online_bytes_per_element": online_bytes / n,
            "paper": {"source": "paper table", "value": 120.0, "unit": "bytes per element per party",
                      "convention": "sent per party"}, "pieces": pieces, "peak_rss_mib": 10.0, "verify": None}
    if family == "mosformer" and mac_bits is not None:
        rec["mac_bits"] = mac_bits
    return rec


def layer_record(tokens):
    block = {"online": {"bytes_per_party": 1e6 * tokens, "rounds": 10, "seconds": 0.1 * tokens},
             "offline": {"bytes_per_party": 1e8 * tokens, "rounds": 20, "seconds": 1.0 * tokens}}
    return {"family": "mosformer", "security": "malicious",
            "shape": {"tokens": tokens, "hidden": 768, "heads": 12, "ffn": 3072}, "layers": 1,
            "material": "on demand", "offline": {"bytes_per_party": 2e8 * tokens, "rounds": 40, "seconds": 2.0 * tokens},
            "online": {"bytes_per_party": 2e6 * tokens, "rounds": 20, "seconds": 0.2 * tokens},
            "blocks": [dict(block, block="softmax"), dict(block, block="gelu")], "made_online": 0,
            "peak_rss_mib": 100.0, "net": "none", "mac_bits": 128, "offline_steps_synced": True}


def write(folder, name, records):
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_projection_adds_latency_and_bandwidth_time():
    m = load_script()
    # 1 s measured, 10 one-way hops of half a 4 ms round trip, 50 MB at 400 Mbps = 1 s.
    assert m.project(1.0, 50e6, 10, 400e6, 4e-3) == pytest.approx(2.02)


def test_a_report_puts_our_figures_beside_the_papers_and_draws_its_plots(tmp_path):
    m = load_script()
    results = tmp_path / "results"
    results.mkdir()
    write(results, "mosformer.jsonl", [op_record("mosformer", "drelu", 10**4, 1.2e6, 8),
                                      op_record("mosformer", "drelu", 10**5, 1.2e7, 80, pieces=10)])
    write(results, "aegis.jsonl", [op_record("aegis", "relu", 2**16, 6e6, 2)])
    write(results, "layers.jsonl", [layer_record(16), layer_record(32)])
    out = tmp_path / "out"
    path = m.report(results, out, "bench_report.py")
    text = path.read_text()
    assert "### Mosformer Table 4" in text and "### Aegis Table 4" in text and "## Scaling" in text
    # DReLU at 10^4: the paper's 1.144 MB beside ours (1.2e6 B = 1.144 MiB), 8 rounds.
    row = next(line for line in text.splitlines() if line.startswith("| drelu | 10,000 |"))
    assert "| 1.144 | 1.144 |" in row and "| 18 | 8 / 2.00 |" in row
    # A run in pieces shows the rounds of one batch and how many pieces.
    assert "8 (x10 pieces)" in text
    # Workloads with no record say so instead of inventing a figure.
    assert "not run" in text and "not measured" in text
    for name in ("mosformer-ops.png", "aegis-ops.png", "mosformer-network.png", "bert-scaling.png"):
        png = out / "plots" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert f"(plots/{name})" in text


def test_a_malformed_record_is_named_with_its_file_and_line(tmp_path):
    m = load_script()
    (tmp_path / "bad.jsonl").write_text('{"op": "mul"}\n{not json\n')
    with pytest.raises(SystemExit, match=r"bad.jsonl:2"):
        m.load(tmp_path)


def test_the_report_projects_with_the_profiles_veil_shapes_with():
    """`PROFILES` repeats `crates/shaping/src/profile.rs` (the script reads records, not Rust)."""
    import re

    m = load_script()
    source = (SCRIPT.parents[1] / "crates" / "shaping" / "src" / "profile.rs").read_text()
    found = {name: (float(bw.replace("_", "")), float(rtt) / 1e3)
             for name, bw, rtt in re.findall(r'name: "(\w+)",\s*bandwidth_bps: ([\d_]+),\s*rtt_ms: ([\d.]+)', source)}
    assert len(found) == 5
    assert found == m.PROFILES


def test_a_measured_twelve_layer_run_is_preferred_and_gpt2_is_kept_apart():
    report = load_script()
    one = layer_record(128)
    whole = dict(layer_record(128), layers=12, material="on demand, per gate call")
    whole["online"] = {"bytes_per_party": 5e9, "rounds": 900, "seconds": 30.0}
    gpt2 = layer_record(64)
    gpt2["shape"] = dict(gpt2["shape"], causal=True)
    totals, source = report.model_totals([one, whole, gpt2], "bert-base", 128, "malicious")
    assert source == "12 layers measured" and totals["online_bytes"] == 5e9
    totals, source = report.model_totals([one, gpt2], "bert-base", 128, "malicious")
    assert source == "12 x 1 layer" and totals["online_bytes"] == 12 * one["online"]["bytes_per_party"]
    totals, source = report.model_totals([one, whole, gpt2], "gpt2", 64, "malicious")
    assert source == "12 x 1 layer" and totals["online_rounds"] == 12 * gpt2["online"]["rounds"]
    assert report.model_totals([one], "gpt2", 64, "malicious") is None


def test_bert_large_counts_24_layers_and_is_listed_apart_from_the_papers_tables():
    report = load_script()
    base = layer_record(128)
    large = layer_record(128)
    large["shape"] = {"tokens": 128, "hidden": 1024, "heads": 16, "ffn": 4096}
    totals, source = report.model_totals([base, large], "bert-large", 128, "malicious")
    assert source == "24 x 1 layer" and totals["offline_bytes"] == 24 * large["offline"]["bytes_per_party"]
    totals, _ = report.model_totals([base, large], "bert-base", 128, "malicious")
    assert totals["offline_bytes"] == 12 * base["offline"]["bytes_per_party"]
    section = report.unreported_models([base, large])
    assert "bert-large" in section and "24 x 1 layer" in section and "bert-base" not in section
    assert report.unreported_models([base]) == ""


def test_a_fresh_record_replaces_a_stale_one_and_stale_figures_are_marked(tmp_path):
    m = load_script()
    results = tmp_path / "results"
    results.mkdir()
    # A stale DReLU at 10^4 read after the fresh one, and a stale LUT nothing replaces.
    write(results, "a.jsonl", [op_record("mosformer", "drelu", 10**4, 1.2e6, 8)])
    write(results, "b.jsonl", [op_record("mosformer", "drelu", 10**4, 0.6e6, 8, mac_bits=None),
                               op_record("mosformer", "lut", 10**4, 0.2e6, 6, mac_bits=None)])
    # A layer recorded before shapes said `causal`, and its fresh run.
    old_layer = layer_record(16)
    del old_layer["mac_bits"]
    new_layer = layer_record(16)
    new_layer["shape"]["causal"] = False
    write(results, "c.jsonl", [old_layer, new_layer])
    r = m.load(results)
    assert len(r.ops) == 2
    assert r.layers == [new_layer]
    drelu = next(o for o in r.ops if o["op"] == "drelu")
    assert drelu["online"]["bytes_per_party"] == 1.2e6 and not m.stale(drelu)
    text = m.report(results, tmp_path / "out", "bench_report.py").read_text()
    assert "Stale records (†, 1 of them)" in text
    # A layer whose online time still counted waits for a peer's offline work is stale too.
    unsynced = layer_record(32)
    del unsynced["offline_steps_synced"]
    assert m.stale(unsynced) and not m.stale(layer_record(32))
    write(results, "d.jsonl", [unsynced])
    text = m.report(results, tmp_path / "out", "bench_report.py").read_text()
    assert "Stale records (†, 2 of them)" in text and "1 layer or model record carries it" in text
    assert any(line.startswith("| lut † |") for line in text.splitlines())
    assert any(line.startswith("| drelu | 10,000 |") and "| 1.144 |" in line for line in text.splitlines())



def test_table3_traffic_is_set_beside_one_images_table6_cost():
    m = load_script()
    # LeNet at batch 30: 3 servers x 32.4 MB sent online = 3.24 MB per image; Table 6 gives
    # 2.77 MB for one image, Table 3 prints 2.46.
    rec = {"family": "aegis", "model": "lenet", "batch": 30, "online": phase(32.4e6, 57),
           "offline": phase(10.4e6, 18), "verify": phase(1.39e8, 37),
           "seconds": {"online": 0.4, "offline": 0.2, "verify": 2.1}, "peak_rss_mib": 345.0}
    text = m.per_image_section([rec])
    row = next(line for line in text.splitlines() if line.startswith("| lenet |") and "| online |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:4] == ["6,508", "1,576", "6,518"]
    assert cells[5:8] == ["2.77", "2.46", "83.2"]
    assert cells[9] == "3.24" and cells[11] == "1.32"
