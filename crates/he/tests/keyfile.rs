//! Keys kept between sessions: both ends of the OLE and of a CKKS session export their keys,
//! a later session imports them and computes without a setup message; damaged, altered or
//! mismatched files are errors naming what is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_he::ckks::CkksPreset;
use veil_he::ckks::session::{Evaluator, KeyHolder};
use veil_he::keyfile::write_private;
use veil_he::ole::Ole;
use veil_he::{Bfv, BfvPreset};
use veil_mpc::harness::{all_ok, simulate};

#[test]
fn an_ole_runs_on_keys_from_an_earlier_session() {
    let preset = BfvPreset::N4096P16;
    let t = Bfv::new(preset).unwrap().plaintext_modulus();
    let files = all_ok(simulate(2, 1, |ctx| {
        let me = ctx.party();
        Ok(Ole::setup(ctx, 1 - me, preset)?.export_keys())
    }))
    .unwrap();
    let dir = std::env::temp_dir().join(format!("veil-he-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, f) in files.iter().enumerate() {
        let path = dir.join(format!("party{i}.keys"));
        write_private(&path, f).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }
    let (a, b): (Vec<u64>, Vec<u64>) =
        ((0..100).map(|i| i * 7 % t).collect(), (0..100).map(|i| i * 13 % t).collect());
    // A later session: no keys exchanged, the answer decrypts under the stored keys.
    let out = all_ok(simulate(2, 2, |ctx| {
        let me = ctx.party();
        let bytes = std::fs::read(dir.join(format!("party{me}.keys"))).unwrap();
        let ole = Ole::import_keys(&bytes, 1 - me, preset)?;
        if me == 0 {
            ole.answer(ctx, &[&a])
        } else {
            ole.send_queries(ctx, &[&b])?;
            ole.receive_answers(ctx, 1, 100)
        }
    }))
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for i in 0..100 {
        assert_eq!((out[0][i] + out[1][i]) % t, a[i] * b[i] % t);
    }
    let file = &files[0];
    let err = |bytes: &[u8], preset: BfvPreset| Ole::import_keys(bytes, 1, preset).unwrap_err().to_string();
    assert!(err(file, BfvPreset::N8192P32).contains("keys for preset 'n4096-p16', expected 'n8192-p32'"));
    let mut altered = file.clone();
    altered[100] ^= 1;
    assert!(err(&altered, preset).contains("digest does not match"));
    assert!(
        err(&file[..50], preset).contains("digest does not match")
            || err(&file[..50], preset).contains("not a Veil")
    );
    assert!(err(b"hello", preset).contains("not a Veil HE key file"));
}

#[test]
fn a_ckks_session_resumes_from_key_files() {
    let preset = CkksPreset::N8192;
    let files = all_ok(simulate(2, 3, |ctx| {
        if ctx.party() == 0 {
            Ok(KeyHolder::setup(ctx, 1, preset, &[1], false)?.export_keys())
        } else {
            Ok(Evaluator::setup(ctx, 0, preset)?.export_keys())
        }
    }))
    .unwrap();
    let v: Vec<f64> = (0..8).map(|i| i as f64 / 8.0).collect();
    let out = all_ok(simulate(2, 4, |ctx| {
        if ctx.party() == 0 {
            let kh = KeyHolder::import_keys(&files[0], 1, preset)?;
            kh.encrypt_and_send(
                ctx,
                std::slice::from_ref(&v),
                kh.ckks().default_scale(),
                kh.ckks().top_level(),
            )?;
            Ok(kh.receive_and_decrypt(ctx, 1)?.remove(0).iter().map(|z| z.re).collect::<Vec<f64>>())
        } else {
            let ev = Evaluator::import_keys(&files[1], 0, preset)?;
            let ct = ev.receive(ctx, 1)?.remove(0);
            let rotated = ev.ckks().rotate(&ct, 1, &ev.gk)?;
            ev.send(ctx, &[rotated])?;
            Ok(Vec::new())
        }
    }))
    .unwrap();
    for i in 0..7 {
        assert!((out[0][i] - v[i + 1]).abs() < 1e-6, "slot {i}");
    }
    // A key holder's file is not an evaluator's.
    let e = Evaluator::import_keys(&files[0], 0, preset).unwrap_err().to_string();
    assert!(e.contains("kind 2, expected 3"), "{e}");
}
