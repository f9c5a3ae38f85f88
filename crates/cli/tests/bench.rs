//! `veil bench`, run as a user would: per-operation and whole-model benchmarks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use std::path::Path;
use std::process::Command;

use common::{stderr, veil};

#[test]
fn bench_ops_ot_measures_the_engines_and_the_toolkit() {
    let o = veil(&["bench", "ops", "--family", "ot", "--op", "cot-iknp", "--n", "5000", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(r["family"], "ot");
    // IKNP sends one 128-bit row per COT (5000 rounded up to 40 tiles of 128).
    assert_eq!(r["bits_per_cot"].as_f64().unwrap(), 128.0 * 5120.0 / 5000.0);
    for (op, ring) in [("cmp", "16"), ("trunc", "32"), ("relu", "24")] {
        let o =
            veil(&["bench", "ops", "--family", "ot", "--op", op, "--ring", ring, "--n", "3000", "--json"]);
        assert!(o.status.success(), "{op}: {}", stderr(&o));
        let r: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
        assert_eq!(r["errors"], 0, "{op}: {r}");
        assert!(r["bytes_p0_to_p1"][2].as_u64().unwrap() > 0);
    }
    // COTs made inside the op: no offline phase, the same answers.
    let o = veil(&[
        "bench",
        "ops",
        "--family",
        "ot",
        "--op",
        "cmp",
        "--ring",
        "20",
        "--n",
        "3000",
        "--cots",
        "on-demand",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!((r["errors"].as_u64(), r["cots"].as_str()), (Some(0), Some("on-demand")), "{r}");
    assert_eq!(r["bytes_p0_to_p1"][1], 0, "{r}");
    let bad = veil(&["bench", "ops", "--family", "ot", "--op", "cmp", "--cots", "later"]);
    assert!(stderr(&bad).contains("use ahead or on-demand"), "{}", stderr(&bad));
    let bad = veil(&["bench", "ops", "--family", "ot", "--op", "teleport"]);
    assert!(stderr(&bad).contains("no op 'teleport'"), "{}", stderr(&bad));
}

#[test]
fn bench_ops_he_runs_the_ole_and_single_ciphertext_ops() {
    let o = veil(&[
        "bench",
        "ops",
        "--family",
        "he",
        "--op",
        "bfv-ole",
        "--preset",
        "n4096-p16",
        "--n",
        "5000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!((r["family"].as_str(), r["errors"].as_u64()), (Some("he"), Some(0)), "{r}");
    // Two seeded queries of 109 bits per slot (+2 header bytes +32 seed bytes each) out, two
    // answers on one 36-bit prime back with 19 and 7 low bits dropped (18 + 29 bits per slot).
    assert_eq!(r["bytes_p0_to_p1"][1], 2 * (2 + 4096 * 109 / 8 + 32), "{r}");
    assert_eq!(r["bytes_p1_to_p0"][1], 2 * (2 + 4096 * (18 + 29) / 8), "{r}");
    assert_eq!((r["online_rounds"].as_u64(), r["answer_primes"].as_u64()), (Some(2), Some(1)), "{r}");
    assert!(r["sigma"].as_f64().unwrap() >= 40.0 && r["paper"]["value"].as_f64() == Some(0.649), "{r}");
    let o = veil(&["bench", "ops", "--family", "he", "--op", "bfv-add", "--preset", "n8192-p60"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("bfv-add"));
    let bad = veil(&["bench", "ops", "--family", "he", "--preset", "n16"]);
    assert!(stderr(&bad).contains("no HE preset 'n16'"), "{}", stderr(&bad));
    let bad = veil(&["bench", "ops", "--family", "ot", "--preset", "n4096-p16"]);
    assert!(stderr(&bad).contains("--preset applies to --family he"), "{}", stderr(&bad));
}

#[test]
fn bench_ops_mm_runs_the_conversions_and_the_ole_protocols() {
    for (op, n) in [("convert", "3000"), ("exp", "500"), ("gelu", "200")] {
        let o = veil(&["bench", "ops", "--family", "mm", "--op", op, "--n", n, "--json"]);
        assert!(o.status.success(), "{op}: {}", stderr(&o));
        let r: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
        assert_eq!((r["family"].as_str(), r["errors"].as_u64()), (Some("mm"), Some(0)), "{op}: {r}");
        assert!(r["paper"]["value"].as_f64().is_some(), "{op}: {r}");
    }
    // Z_2^32 → Z_2^64: P0 sends 32 bits of corrections per value, P1 one choice bit.
    let o = veil(&["bench", "ops", "--family", "mm", "--op", "convert", "--n", "8000", "--json"]);
    let r: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    let online = (r["bytes_p0_to_p1"][1].as_u64().unwrap(), r["bytes_p1_to_p0"][1].as_u64().unwrap());
    assert!(online.0 >= 8000 * 32 / 8 && online.1 >= 8000 / 8, "{r}");
    let bad = veil(&["bench", "ops", "--family", "mm", "--op", "teleport"]);
    assert!(stderr(&bad).contains("mm has no op 'teleport'"), "{}", stderr(&bad));
}

#[test]
fn bench_ops_prints_json_lines_with_paper_figures() {
    let o = veil(&["bench", "ops", "--family", "mosformer", "--op", "mul", "--n", "1000", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = String::from_utf8_lossy(&o.stdout);
    let r: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(r["family"], "mosformer");
    assert_eq!(r["security"], "malicious");
    assert_eq!(r["n"], 1000);
    // Verified product in Z_2^32: reshare 4 B + opening of ρ,σ 8 B per element, 64 B of digests.
    assert_eq!(r["online"]["bytes_per_party"].as_f64().unwrap(), 12.0 * 1000.0 + 64.0);
    assert_eq!(r["online"]["rounds"], 2);
    assert_eq!(r["paper"]["value"].as_f64().unwrap(), 24.0);
    // Every family's table names every column it prints, the pieces and peak memory included.
    for family in ["mosformer", "aegis"] {
        let o = veil(&["bench", "ops", "--family", family, "--op", "mul", "--n", "64"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let mut lines = out.lines();
        let header = lines.next().unwrap();
        let row = lines.next().unwrap();
        assert!(header.contains("pieces") && header.contains("peak MiB"), "{family}: {header}");
        // Headers of two words end in a unit ("online B/el", "offline s", "peak MiB").
        let units = header.split_whitespace().filter(|w| ["B/el", "B", "s", "MiB"].contains(w)).count();
        let columns = header.split_whitespace().count() - units;
        assert_eq!(row.split_whitespace().count(), columns, "{family}:\n{header}\n{row}");
    }
    let bad = veil(&["bench", "ops", "--family", "mosformer", "--op", "teleport"]);
    assert!(stderr(&bad).contains("no op 'teleport'"));
    let other = veil(&["bench", "ops", "--family", "nope"]);
    assert!(stderr(&other).contains("no benchmarks for family 'nope'"));
    let model = veil(&["bench", "layer", "--family", "mosformer", "--model", "bert-huge"]);
    assert!(!model.status.success());
    assert!(stderr(&model).contains("(bert-base, bert-large or gpt2)"), "{}", stderr(&model));
}

#[test]
fn bench_model_runs_a_paper_cnn_with_its_table_beside() {
    let o = veil(&["bench", "model", "--family", "aegis", "--model", "snn", "--batch", "1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (r["model"].as_str(), r["batch"].as_u64(), r["parties"].as_u64()),
        (Some("snn"), Some(1), Some(3))
    );
    // conv (1 round) then ReLU (2 rounds) then FC (1 round); the output goes to the data owner.
    assert!(r["online"]["rounds"].as_u64().unwrap() >= 4);
    assert!(r["verify"]["bytes_per_party"].as_f64().unwrap() > 0.0);
    assert!(r["max_abs_error"].as_f64().unwrap() < 0.01);
    assert!(r["paper"].as_array().unwrap().iter().any(|p| p["source"].as_str().unwrap().contains("Table 3")));
    let o = veil(&["bench", "model", "--family", "aegis", "--model", "resnet"]);
    assert!(stderr(&o).contains("snn, lenet, vgg16"), "{}", stderr(&o));
}

#[test]
fn bench_model_on_a_shaped_network_runs_in_namespaces_and_removes_them() {
    if let Err(e) = veil_shaping::available() {
        eprintln!("skipped: {e}");
        return;
    }
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/digits-cnn/model.onnx");
    let model = model.to_str().unwrap();
    let args = [
        "bench", "model", "--family", "aegis", "--model", model, "--batch", "2", "--net", "wan100", "--json",
    ];
    let o = veil(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["net"]["name"].as_str(), r["net"]["shaped"].as_bool()), (Some("wan100"), Some(true)));
    assert_eq!(r["traffic"].as_array().unwrap().len(), 5);
    let servers_sent = r["traffic"][0]["bytes_sent"].as_u64().unwrap();
    assert!(servers_sent > 0);
    // The shaped run cannot beat its bandwidth: bytes / 100 Mbps more than the unshaped run,
    // less the token bucket's burst.
    let floor = 8.0 * servers_sent.saturating_sub(256 << 10) as f64 / 100e6;
    let (plain, shaped) = (r["seconds_unshaped"].as_f64().unwrap(), r["seconds_shaped"].as_f64().unwrap());
    assert!(shaped > floor, "shaped {shaped} s, bandwidth alone {floor} s");
    assert!(r["seconds_projected"].as_f64().unwrap() > plain);
    let left =
        String::from_utf8(Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).unwrap();
    assert!(!left.contains("veil-shape-"), "namespaces left behind: {left}");
    let o = veil(&["bench", "model", "--family", "aegis", "--model", "snn", "--net", "moon"]);
    assert!(stderr(&o).contains("wan100"), "{}", stderr(&o));
    let o = veil(&["bench", "cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
