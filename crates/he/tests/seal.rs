//! Differential test against Microsoft SEAL (seal-python, a dev-only dependency from
//! requirements-dev.txt): at every preset, the same primes and plaintext modulus, the same
//! slots in, `a`, `a ⊙ b + c` and the same after one modulus switch out of both libraries,
//! equal slot by slot and to Z_t arithmetic; CKKS on the same chain and scale through the same
//! depth-4 circuit, the RMS slot error of both within a bit. Skips with a message where Python or seal-python
//! is absent (`$VEIL_PYTHON`, else the workspace's `.venv/bin/python`, else `python3`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::depth_four_error;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::ckks::{Ckks, CkksPreset};
use veil_he::{Bfv, BfvPreset};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("VEIL_PYTHON") {
        return p.into();
    }
    let venv = root().join(".venv/bin/python");
    if venv.exists() { venv } else { "python3".into() }
}

/// SEAL's answer to `request`, or `None` (with the reason on stderr) where it cannot run.
fn seal(request: serde_json::Value) -> Option<serde_json::Value> {
    let child = Command::new(python())
        .arg(root().join("scripts/seal_ops.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("skipped: no Python at {}", python().display());
        return None;
    };
    // The script may exit (seal-python missing) before it reads its request.
    let _ = child.stdin.take().unwrap().write_all(request.to_string().as_bytes());
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        eprintln!(
            "skipped: seal-python is not installed for {} (pip install -r requirements-dev.txt)",
            python().display()
        );
        return None;
    }
    assert!(out.status.success(), "SEAL failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn slots(v: &serde_json::Value, key: &str) -> Vec<u64> {
    let text = v.to_string();
    let list = v[key].as_array().unwrap_or_else(|| panic!("no {key} in {}", &text[..text.len().min(300)]));
    list.iter().map(|x| x.as_u64().unwrap_or_else(|| panic!("{key}: {x} is not a u64"))).collect()
}

#[test]
fn bfv_matches_seal_slot_for_slot() {
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    for preset in BfvPreset::ALL {
        let bfv = Bfv::new(preset).unwrap();
        let (n, t) = (bfv.slots(), bfv.plaintext_modulus());
        let edges = [0, 1, t - 1, t / 2, t / 2 + 1];
        let mut draw = |rev: bool| -> Vec<u64> {
            (0..n)
                .map(|i| match (i < edges.len(), rev) {
                    (true, false) => edges[i],
                    (true, true) => edges[edges.len() - 1 - i],
                    _ => rng.random_range(0..t),
                })
                .collect()
        };
        let (a, b, c) = (draw(false), draw(true), draw(false));
        let request = serde_json::json!({
            "mode": "eval", "n": n, "t": t, "primes": bfv.primes(0).unwrap(), "a": a, "b": b, "c": c,
        });
        let Some(theirs) = seal(request) else { return };
        let want: Vec<u64> = (0..n)
            .map(|i| ((u128::from(a[i]) * u128::from(b[i]) + u128::from(c[i])) % u128::from(t)) as u64)
            .collect();

        let mut rng = ChaCha20Rng::seed_from_u64(18);
        let (sk, pk) = bfv.keygen(&mut rng).unwrap();
        let ct = bfv.encrypt_public(&pk, &bfv.encode(&a).unwrap(), None, &mut rng).unwrap();
        let fresh = bfv.decrypt(&sk, &ct).unwrap();
        let prod = bfv.mul_plain(&ct, &bfv.operand(&bfv.encode(&b).unwrap(), 0).unwrap());
        let mut prod = bfv.add_plain(&prod, &bfv.encode(&c).unwrap()).unwrap();
        let product = bfv.decrypt(&sk, &prod).unwrap();
        bfv.switch_to(&mut prod, 1).unwrap();
        let switched = bfv.decrypt(&sk, &prod).unwrap();

        assert!(slots(&theirs, "fresh") == a && fresh == a, "{preset:?}: fresh");
        assert!(slots(&theirs, "product") == want && product == want, "{preset:?}: a ⊙ b + c");
        assert!(slots(&theirs, "switched") == want && switched == want, "{preset:?}: after a switch");
    }
}

#[test]
fn ckks_precision_matches_seal_within_a_bit() {
    let ckks = Ckks::new(CkksPreset::N16384).unwrap();
    let n = ckks.slots();
    let mut rng = ChaCha20Rng::seed_from_u64(19);
    let mut draw = || -> Vec<f64> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
    let (x, y, z, w) = (draw(), draw(), draw(), draw());
    let chain: Vec<u64> = (0..ckks.ring().primes().len()).map(|i| ckks.ring().modulus(i)).collect();
    let request = serde_json::json!({
        "mode": "ckks-circuit", "n": ckks.ring().degree(), "chain": chain, "scale": ckks.default_scale(),
        "x": x, "y": y, "z": z, "w": w,
    });
    let Some(theirs) = seal(request) else { return };
    let (their_max, their_rms) =
        (theirs["log2_error"].as_f64().unwrap(), theirs["log2_rms"].as_f64().unwrap());

    let mut rng = ChaCha20Rng::seed_from_u64(20);
    let (max, rms, _) = depth_four_error(&ckks, [&x, &y, &z, &w], &mut rng);
    eprintln!(
        "depth-4 circuit at Δ = 2^40, N = 16384: RMS error 2^{rms:.2} here, 2^{their_rms:.2} in SEAL; largest 2^{max:.2} and 2^{their_max:.2}"
    );
    // The RMS over 8192 slots is stable from run to run; the largest error moves by more
    // than a bit with SEAL's own random keys and noise.
    assert!((rms - their_rms).abs() <= 1.0, "RMS 2^{rms:.2} here against 2^{their_rms:.2} in SEAL");
    assert!(max < -20.0);
}
