//! The Z_p-OLE between two parties over the in-memory mesh: share products and K-term inner
//! products against Z_t arithmetic at every preset, the flooding plans, the response noise
//! against its bound and its independence of the evaluator's operand (two-sample
//! Kolmogorov–Smirnov), and bad bytes from the peer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::flood::{STATISTICAL_SECURITY, plan};
use veil_he::ole::Ole;
use veil_he::wire::Form;
use veil_he::{Bfv, BfvPreset, wire};
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{MpcError, Result};

fn mul_mod(a: u64, b: u64, t: u64) -> u64 {
    (u128::from(a) * u128::from(b) % u128::from(t)) as u64
}

fn random(rng: &mut ChaCha20Rng, n: usize, t: u64) -> Vec<u64> {
    let edges = [0, 1, t - 1, t / 2, t / 2 + 1];
    (0..n).map(|i| if i < edges.len() { edges[i] } else { rng.random_range(0..t) }).collect()
}

#[test]
fn flooding_plans_reach_forty_bits_and_switch_as_documented() {
    let expect = [
        (BfvPreset::N4096P16, 81, 2, (19, 7)),
        (BfvPreset::N8192P32, 99, 1, (56, 43)),
        (BfvPreset::N8192P60, 127, 2, (38, 25)),
    ];
    for (preset, bits, level, dropped) in expect {
        let bfv = Bfv::new(preset).unwrap();
        let p = plan(&bfv, 2).unwrap();
        assert!(p.sigma >= STATISTICAL_SECURITY && p.sigma < STATISTICAL_SECURITY + 1.0, "{preset:?}: {p:?}");
        assert_eq!(
            (p.flood_bits, p.response_level, p.dropped_bits),
            (bits, level, Some(dropped)),
            "{preset:?}: {p:?}"
        );
        // More terms, more noise to hide.
        assert!(plan(&bfv, 8).unwrap().flood_bits > p.flood_bits);
    }
}

#[test]
fn share_products_at_every_preset() {
    for preset in BfvPreset::ALL {
        let t = Bfv::new(preset).unwrap().plaintext_modulus();
        let n = preset.degree() + 77; // two ciphertexts: one evaluated by each party
        let mut rng = ChaCha20Rng::seed_from_u64(preset.degree() as u64);
        let (x, y) = (random(&mut rng, n, t), random(&mut rng, n, t));
        let x0: Vec<u64> = (0..n).map(|_| rng.random_range(0..t)).collect();
        let y0: Vec<u64> = (0..n).map(|_| rng.random_range(0..t)).collect();
        let share =
            |v: &[u64], r: &[u64]| -> Vec<u64> { v.iter().zip(r).map(|(&v, &r)| (v + t - r) % t).collect() };
        let (x1, y1) = (share(&x, &x0), share(&y, &y0));
        let out = all_ok(simulate(2, 5, |ctx| {
            let me = ctx.party();
            let ole = Ole::setup(ctx, 1 - me, preset)?;
            let (xs, ys) = if me == 0 { (&x0, &y0) } else { (&x1, &y1) };
            ole.mul_shares(ctx, xs, ys, me == 0)
        }))
        .unwrap();
        let got: Vec<u64> = out[0].iter().zip(&out[1]).map(|(a, b)| (a + b) % t).collect();
        let want: Vec<u64> = x.iter().zip(&y).map(|(&a, &b)| mul_mod(a, b, t)).collect();
        assert!(got == want, "{preset:?}: shares of x·y");
    }
}

#[test]
fn inner_products_of_three_terms() {
    let preset = BfvPreset::N4096P16;
    let t = Bfv::new(preset).unwrap().plaintext_modulus();
    let n = 1000;
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let a: Vec<Vec<u64>> = (0..3).map(|_| random(&mut rng, n, t)).collect();
    let b: Vec<Vec<u64>> = (0..3).map(|_| random(&mut rng, n, t)).collect();
    let out = all_ok(simulate(2, 6, |ctx| {
        let me = ctx.party();
        let ole = Ole::setup(ctx, 1 - me, preset)?;
        if me == 0 {
            ole.answer(ctx, &[&a[0], &a[1], &a[2]])
        } else {
            ole.send_queries(ctx, &[&b[0], &b[1], &b[2]])?;
            ole.receive_answers(ctx, 3, n)
        }
    }))
    .unwrap();
    for i in 0..n {
        let want = (0..3).fold(0, |acc, k| (acc + mul_mod(a[k][i], b[k][i], t)) % t);
        assert_eq!((out[0][i] + out[1][i]) % t, want, "slot {i}");
    }
}

/// Two-sample Kolmogorov–Smirnov statistic.
fn ks(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0f64);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            i += 1;
        } else {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The noise of the answers to a query of `b` evaluated with operand `a` (protocol code end to
/// end), divided by the flooding's width after switching; and that width.
fn answer_noise(preset: BfvPreset, b: &[u64], a: &[u64], seed: u64) -> (Vec<f64>, f64) {
    let out = all_ok(simulate(2, seed, |ctx| {
        let me = ctx.party();
        // Whole answers: their noise is the flooding itself (compression adds a public rounding).
        let ole = Ole::setup(ctx, 1 - me, preset)?.with_compressed_answers(false);
        if me == 0 {
            ole.answer(ctx, &[a])?;
            return Ok((Vec::new(), 0.0));
        }
        ole.send_queries(ctx, &[b])?;
        let cts = ole.receive_answer_ciphertexts(ctx, 1, b.len())?;
        let p = ole.plan(1)?;
        let bfv = ole.bfv();
        let ratio = bfv.modulus(p.response_level)?.to_string().parse::<f64>().unwrap()
            / bfv.modulus(0)?.to_string().parse::<f64>().unwrap();
        let width = 2f64.powi(p.flood_bits as i32) * ratio;
        let mut v = Vec::new();
        for ct in &cts {
            v.extend(ole.noise(ct)?.into_iter().map(|x| x as f64 / width));
        }
        Ok((v, width))
    }))
    .unwrap();
    out.into_iter().nth(1).unwrap()
}

#[test]
fn answer_noise_is_bounded_and_does_not_depend_on_the_operand() {
    // n8192-p32: the answer goes out on two 45-bit primes, the flooding (2^99, scaled by about
    // 2^−45) far above the switching's rounding, so an operand would show if it leaked.
    let preset = BfvPreset::N8192P32;
    let bfv = Bfv::new(preset).unwrap();
    let t = bfv.plaintext_modulus();
    let n = 2 * bfv.slots();
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let b: Vec<u64> = (0..n).map(|_| rng.random_range(0..t)).collect();
    let (zero, largest) = (vec![0u64; n], vec![t / 2; n]);
    let (with_zero, width) = answer_noise(preset, &b, &zero, 21);
    let (with_largest, _) = answer_noise(preset, &b, &largest, 22);
    // Within the bound: the flooding plus the operand's share (≤ 2^−40 of it) and rounding.
    let bound = 1.0 + 1e-9 + (preset.degree() as f64) / width;
    assert!(with_zero.iter().chain(&with_largest).all(|x| x.abs() <= bound));
    // Filling it: uniform on [−1, 1), so a quarter of the mass beyond ±1/2 on each side.
    let outer = with_largest.iter().filter(|x| x.abs() > 0.5).count() as f64 / n as f64;
    assert!((outer - 0.5).abs() < 0.03, "{outer}");
    // Independent of the operand: the two samples are one distribution (KS at α = 10^−6:
    // critical value 2.69·sqrt(2/n)).
    let critical = 2.69 * (2.0 / n as f64).sqrt();
    let d = ks(with_zero.clone(), with_largest);
    assert!(d < critical, "KS {d} ≥ {critical}");

    // The same statistic tells the operands apart when the answer is not flooded: computed
    // here by hand, the unflooded noise of Enc(b) ⊠ a against Enc(b) ⊠ 0.
    let (sk, _) = bfv.keygen(&mut rng).unwrap();
    let mut unflooded = |a: &[u64]| -> Vec<f64> {
        let mut v = Vec::new();
        for c in 0..2 {
            let range = c * bfv.slots()..(c + 1) * bfv.slots();
            let ct = bfv.encrypt_secret(&sk, &bfv.encode(&b[range.clone()]).unwrap(), 0, &mut rng).unwrap();
            let op = bfv.operand(&bfv.encode(&a[range.clone()]).unwrap(), 0).unwrap();
            let prod = bfv.mul_plain(&ct, &op);
            let want: Vec<u64> = range.map(|i| mul_mod(a[i], b[i], t)).collect();
            v.extend(bfv.noise(&sk, &prod, &want).unwrap().into_iter().map(|x| x as f64));
        }
        v
    };
    let d = ks(unflooded(&zero), unflooded(&largest));
    assert!(d > critical, "the test has no power: KS {d}");
}

#[test]
fn bad_bytes_from_the_peer_are_named_errors() {
    let bfv = Bfv::new(BfvPreset::N4096P16).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let (sk, pk) = bfv.keygen(&mut rng).unwrap();
    let pt = bfv.encode(&[5, 6, 7]).unwrap();
    let seeded = bfv.encrypt_secret(&sk, &pt, 0, &mut rng).unwrap();
    let mut full = bfv.encrypt_public(&pk, &pt, None, &mut rng).unwrap();
    bfv.switch_to(&mut full, 1).unwrap();
    let good = wire::encode_ciphertexts(&[seeded.clone(), seeded.clone()]);
    let back = wire::decode_ciphertexts(&bfv, 1, &good, 2, 0, Form::Seeded).unwrap();
    assert!(back[0] == seeded && back[1] == seeded);
    let full_bytes = wire::encode_ciphertexts(std::slice::from_ref(&full));
    assert!(wire::decode_ciphertexts(&bfv, 1, &full_bytes, 1, 1, Form::Full).unwrap()[0] == full);
    assert_eq!(good.len(), 2 * wire::ciphertext_bytes(&bfv, 0, Form::Seeded).unwrap());

    let err = |bytes: &[u8], count: usize, level: usize, seeded: bool| -> String {
        let form = if seeded { Form::Seeded } else { Form::Full };
        match wire::decode_ciphertexts(&bfv, 1, bytes, count, level, form) {
            Err(MpcError::Malformed { from: 1, what }) => what,
            other => panic!("expected a malformed-message error, got {other:?}"),
        }
    };
    assert!(err(&good[..good.len() - 1], 2, 0, true).contains("expected 2 ciphertexts"));
    assert!(err(&[good.clone(), vec![0]].concat(), 2, 0, true).contains("got"));
    assert!(err(&good, 3, 0, true).contains("expected 3 ciphertexts"));
    assert!(err(&full_bytes, 1, 0, false).contains("expected"));
    let mut wrong = good.clone();
    wrong[0] = 1;
    assert!(err(&wrong, 2, 0, true).contains("level 1, expected 0"));
    let mut wrong = good.clone();
    wrong[1] = 0;
    assert!(err(&wrong, 2, 0, true).contains("form 0, expected 1"));
    // A residue of all ones (2^36 − 1 ≥ q_0) in the first coefficient of c0.
    let mut wrong = good.clone();
    for byte in &mut wrong[2..6] {
        *byte = 0xff;
    }
    wrong[6] |= 0x0f;
    assert!(err(&wrong, 2, 0, true).contains("ciphertext 0 c0: residue 0 mod prime 0"));
    // Compressed answers: a coefficient past ⌈q/2^k⌉ is refused.
    let k = (19, 7);
    let compressed = bfv.compress(&full, k.0, k.1).unwrap();
    let bytes = wire::encode_compressed(&bfv, std::slice::from_ref(&compressed)).unwrap();
    assert_eq!(bytes.len(), wire::ciphertext_bytes(&bfv, 1, Form::Compressed(k.0, k.1)).unwrap());
    let back = wire::decode_ciphertexts(&bfv, 1, &bytes, 1, 1, Form::Compressed(k.0, k.1)).unwrap();
    assert!(bfv.decrypt(&sk, &back[0]).unwrap()[..3] == [5, 6, 7]);
    let mut wrong = bytes.clone();
    for byte in &mut wrong[2..9] {
        *byte = 0xff;
    }
    let what = match wire::decode_ciphertexts(&bfv, 1, &wrong, 1, 1, Form::Compressed(k.0, k.1)) {
        Err(MpcError::Malformed { from: 1, what }) => what,
        other => panic!("expected a malformed-message error, got {other:?}"),
    };
    assert!(what.contains("c0: coefficient 0 is"), "{what}");
    // c0 at some positions only (form 3): smaller, and the slots' coefficients at those
    // positions decrypt as from the whole answer.
    let used: Vec<usize> = (0..bfv.slots()).step_by(8).collect();
    let sparse = veil_he::bfv::Compressed {
        c0: used.iter().map(|&j| compressed.c0[j]).collect(),
        ..compressed.clone()
    };
    let bytes = wire::encode_compressed(&bfv, std::slice::from_ref(&sparse)).unwrap();
    let form = Form::Sparse(k.0, k.1, &used);
    assert_eq!(bytes.len(), wire::ciphertext_bytes(&bfv, 1, form).unwrap());
    // At this level c0 takes 17 bits a coefficient and c1 29: 1/8 of c0 leaves 67%.
    assert!(bytes.len() * 10 < wire::ciphertext_bytes(&bfv, 1, Form::Compressed(k.0, k.1)).unwrap() * 7);
    let back = wire::decode_ciphertexts(&bfv, 1, &bytes, 1, 1, form).unwrap();
    let whole = bfv
        .decrypt_coefficients(
            &sk,
            &wire::decode_ciphertexts(&bfv, 1, &full_bytes, 1, 1, Form::Full).unwrap()[0],
        )
        .unwrap();
    let part = bfv.decrypt_coefficients(&sk, &back[0]).unwrap();
    assert!(used.iter().all(|&j| part[j] == whole[j]), "the kept coefficients decrypt alike");
    // Sent as form 3, read as form 2 (or the reverse): the form byte is named.
    let what = match wire::decode_ciphertexts(&bfv, 1, &bytes, 1, 1, Form::Compressed(k.0, k.1)) {
        Err(MpcError::Malformed { from: 1, what }) => what,
        other => panic!("expected a malformed-message error, got {other:?}"),
    };
    assert!(what.contains("expected"), "{what}");
    let what = match wire::decode_ciphertexts(&bfv, 1, &bytes[..bytes.len() - 1], 1, 1, form) {
        Err(MpcError::Malformed { from: 1, what }) => what,
        other => panic!("expected a malformed-message error, got {other:?}"),
    };
    assert!(what.contains("expected 1 ciphertexts"), "{what}");
    // Public keys.
    let key = wire::encode_public_key(&pk);
    assert!(wire::decode_public_key(&bfv, 1, &key).unwrap() == pk);
    assert!(wire::decode_public_key(&bfv, 1, &key[1..]).unwrap_err().to_string().contains("public key"));
    let mut wrong = key.clone();
    for byte in &mut wrong[32..40] {
        *byte = 0xff;
    }
    assert!(
        wire::decode_public_key(&bfv, 1, &wrong).unwrap_err().to_string().contains("residue 0 mod prime 0")
    );

    // Over the mesh: garbage queries make the evaluator fail with the peer named, no panic.
    let results = simulate(2, 13, |ctx| -> Result<()> {
        let me = ctx.party();
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N4096P16)?;
        if me == 0 {
            ole.answer(ctx, &[&[1, 2, 3]]).map(|_| ())
        } else {
            ctx.net().send(0, vec![7u8; 100])?;
            Ok(())
        }
    });
    match &results[0] {
        Err(MpcError::Malformed { from: 1, what }) => {
            assert!(what.contains("expected 1 ciphertexts"), "{what}")
        }
        other => panic!("expected a malformed-message error, got {other:?}"),
    }
}
